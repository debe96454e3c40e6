import type { App } from '../app.js';
import type { Config } from '../config.js';

/** The policy of JSON answers: nothing may load, nothing may frame them. */
export const jsonContentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'";

/**
 * Who may frame the pages the cardholder's browser comes back to after a 3DS challenge (the return
 * route `/3ds/return/{uuid}` and the hosted pages' `/hosted/3ds-return`): they load inside the
 * challenge iframe, which sits in the integrator's checkout, or in our modal frame under the
 * integrator's page, and frame-ancestors checks every ancestor. Any http(s) page: they show a line
 * of text with nothing to click (nothing to clickjack) and decide nothing (the outcome is the
 * processor's record). docs/modal.md "Framing the 3DS challenge".
 */
export const threeDsReturnFrameAncestors = 'http: https:';

const strictTransportSecurity = 'max-age=63072000; includeSubDomains';

/** Only meaningful (and only honoured) when the service is reached over HTTPS. */
function servedOverHttps(config: Config): boolean {
  return config.baseUrl.startsWith('https://');
}

/**
 * Security headers on every response, errors and 404s included. A route that serves a page sets
 * its own `Content-Security-Policy` (in the handler or a hook before `onSend`); this hook then
 * leaves CSP and `X-Frame-Options` to that route, so pages meant to be framed (payment modal) can
 * say so with `frame-ancestors`. Answers are `Cache-Control: no-store` unless their route says
 * otherwise (the files of the hosted pages, the API document): API answers carry secrets (a
 * transaction's vault `token`, a channel's `channel_secret`) that no browser or proxy cache should
 * keep, and one rule for every answer cannot miss a route.
 */
export function registerSecurityHeaders(app: App, config: Config): void {
  const https = servedOverHttps(config);
  // Synchronous (done callback): an async hook costs a promise and a microtask on every response.
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    if (!reply.hasHeader('content-security-policy')) {
      reply.header('content-security-policy', jsonContentSecurityPolicy);
      reply.header('x-frame-options', 'DENY');
    }
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    if (https) reply.header('strict-transport-security', strictTransportSecurity);
    done(null, payload);
  });
}

/**
 * The same headers of a JSON answer, for answers written without Fastify's reply (and so without
 * the hook above): the errors of requests Node's HTTP parser refuses (client-errors.ts).
 */
export function jsonSecurityHeaders(config: Config): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Content-Security-Policy': jsonContentSecurityPolicy,
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
    ...(servedOverHttps(config) ? { 'Strict-Transport-Security': strictTransportSecurity } : {}),
  };
}
