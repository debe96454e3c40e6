/**
 * Calls from a hosted page to its own origin, classified the way the modal's callbacks are:
 * a network failure (`TypeError`, "fetch failed"), a timeout (`TimeoutError`), or an answer
 * (any status) with its JSON body.
 */
export type CallResult<T> =
  | { kind: 'answer'; status: number; body: T }
  | { kind: 'network'; error: { name: 'TypeError'; message: string } }
  | { kind: 'timeout'; error: { name: 'TimeoutError'; message: string } };

/**
 * `keepsResume`: the answer may set or clear the page's resume cookie (src/routes/hosted/
 * resume-cookie.ts), which a call that omits credentials would drop. Nothing more is sent: the
 * cookie's Path is the page's (/pay/, /vault/), never the API's, and the API takes only the bearer token.
 */
export async function callApi<T>(options: { method: 'GET' | 'POST'; url: string; session?: string; body?: unknown; timeoutMs: number; keepsResume?: true }): Promise<CallResult<T>> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  try {
    const response = await fetch(options.url, {
      method: options.method,
      headers: { ...(options.session ? { authorization: `Bearer ${options.session}` } : {}), ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: controller.signal,
      credentials: options.keepsResume ? 'same-origin' : 'omit',
      cache: 'no-store',
    });
    const body = (await response.json().catch(() => ({}))) as T;
    return { kind: 'answer', status: response.status, body };
  } catch (error) {
    if (timedOut) return { kind: 'timeout', error: { name: 'TimeoutError', message: 'The request timed out.' } };
    return { kind: 'network', error: { name: 'TypeError', message: `fetch failed: ${(error as Error).message}` } };
  } finally {
    clearTimeout(timer);
  }
}
