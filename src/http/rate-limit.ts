import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { App } from '../app.js';
import type { AppContext } from '../context.js';
import { apiTokenPrefix, looksLikeJwt, verifyJwt } from '../domain/credentials.js';
import { findHostedSession, looksLikeHostedSessionToken } from '../domain/hosted/sessions.js';
import { makeRoomForOne } from '../bounded.js';
import { limits } from '../limits.js';
import { bearerToken, bearerTokenHash } from './auth.js';
import { ApiError } from './errors.js';

const windowMs = 60_000;
/** Liveness and readiness probes, with a query string or not (`/healthz?check=1`); no allocation on the hot path. */
function isProbe(url: string): boolean {
  return url === '/healthz' || url === '/readyz' || url.startsWith('/healthz?') || url.startsWith('/readyz?');
}

/**
 * Fixed one-minute windows per key, in memory: a key's window opens at its first request and
 * allows `max` requests until it closes. At most `keysMax` keys are held; a new key past that
 * forgets the key whose window opened first.
 */
export class RateWindows {
  private readonly windows = new Map<string, { count: number; openedAtMs: number }>();

  constructor(private readonly options: { windowMs: number; keysMax: number }) {}

  /** Counts one request of `key` at `nowMs`: its number in the window and when the window closes. */
  hit(key: string, nowMs: number): { count: number; resetAtMs: number } {
    let window = this.windows.get(key);
    if (window === undefined) {
      makeRoomForOne(this.windows, this.options.keysMax);
      window = { count: 0, openedAtMs: nowMs };
      this.windows.set(key, window);
    } else if (nowMs - window.openedAtMs >= this.options.windowMs) {
      // Reopened windows keep their place in the map: eviction order is by first sight, which
      // only decides who is forgotten when more than keysMax keys are live at once.
      window.count = 0;
      window.openedAtMs = nowMs;
    }
    window.count += 1;
    return { count: window.count, resetAtMs: window.openedAtMs + this.options.windowMs };
  }
}

/**
 * One limit: `max` requests per key and window. Returns the admission of one request, which
 * sets the `x-ratelimit-*` headers and gives the 429 to answer once the key is over.
 */
function limiter(options: { max: number; now: () => Date }): (key: string, reply: FastifyReply) => ApiError | undefined {
  const windows = new RateWindows({ windowMs, keysMax: limits.rateLimitKeysMax });
  const limitHeader = String(options.max);
  return (key, reply) => {
    const nowMs = options.now().getTime();
    const { count, resetAtMs } = windows.hit(key, nowMs);
    const resetSeconds = String(Math.max(1, Math.ceil((resetAtMs - nowMs) / 1000)));
    reply.header('x-ratelimit-limit', limitHeader);
    reply.header('x-ratelimit-remaining', String(Math.max(0, options.max - count)));
    reply.header('x-ratelimit-reset', resetSeconds);
    if (count <= options.max) return undefined;
    return new ApiError(429, 'rest_too_many_requests', `Too many requests; retry in ${resetSeconds} seconds.`, {}, { 'retry-after': resetSeconds });
  };
}

/**
 * Per-process rate limit (in memory): `config.rateLimitPerMinute` requests per minute per bearer
 * credential (API token or JWT, keyed by its hash) or, without one, per client IP. A bearer token
 * that is not a genuine credential counts against the client IP: otherwise a fresh random token
 * per request would get a fresh allowance each time. Liveness and readiness probes are exempt.
 * Every answer carries `x-ratelimit-limit`, `x-ratelimit-remaining` and `x-ratelimit-reset`
 * (seconds until the window reopens); past the limit the answer is 429 `rest_too_many_requests`
 * with `Retry-After` in seconds.
 *
 * Our own hook rather than @fastify/rate-limit: the plugin adds its hook to each route after the
 * route's own `onRequest` hooks, so authentication (a database read) ran before the limit and a
 * flood of requests over the limit still cost one read each. This global hook runs before every
 * route's hooks, synchronously for a credential already known, and reads nothing per route
 * (`request.routeOptions` builds an object on every access): GET booking +6 % (docs/performance.md).
 */
export function registerRateLimit(app: App, context: Pick<AppContext, 'config' | 'db' | 'now'>): void {
  const genuine = genuineCredentials(context);
  const admit = limiter({ max: context.config.rateLimitPerMinute, now: context.now });
  const keyOf = (request: FastifyRequest): string | Promise<string> => {
    const token = bearerToken(request);
    if (!token) return `ip:${request.ip}`;
    const hash = bearerTokenHash(token);
    if (genuine.known(hash)) return `bearer:${hash}`;
    // Looked up even from an address over its limit (one indexed read): answered 429 unread, a
    // genuine credential behind an address that a flood of forged tokens had spent could never be
    // told from them, and would be refused for as long as the flood lasted (session 29, decided).
    return genuine.check(token, hash).then((isGenuine) => (isGenuine ? `bearer:${hash}` : `ip:${request.ip}`));
  };
  // Synchronous (done callback) on the path every known credential takes.
  app.addHook('onRequest', (request, reply, done) => {
    if (isProbe(request.url)) return done();
    const key = keyOf(request);
    if (typeof key === 'string') return done(admit(key, reply));
    key.then((resolved) => done(admit(resolved, reply)), done);
  });
}

/**
 * The stricter limit of the token endpoints (password guessing), on top of the global one:
 * `loginRateLimitPerMinute` per client IP, whatever credential is sent, shared by the routes
 * given this one hook (their `onRequest`). Its headers replace the global limit's.
 */
export function loginRateLimit(context: Pick<AppContext, 'config' | 'now'>): onRequestHookHandler {
  const admit = limiter({ max: context.config.loginRateLimitPerMinute, now: context.now });
  return (request, reply, done) => done(admit(`login:${request.ip}`, reply));
}

/**
 * Whether a bearer token is a credential this service issued: a JWT with a valid signature, an
 * API token whose hash is stored (expired or not), or a live hosted page session (each
 * cardholder's page keeps its own allowance, even when many arrive through one proxy address). Positive answers are remembered (at most
 * limits.rateLimitKnownCredentialsMax, oldest forgotten first), so a credential costs one look-up
 * per process; authentication proper (expiry, membership, revocation) happens in the route.
 */
function genuineCredentials(context: Pick<AppContext, 'config' | 'db' | 'now'>): { known(hash: string): boolean; check(token: string, hash: string): Promise<boolean> } {
  const known = new Set<string>();
  const check = async (token: string, hash: string): Promise<boolean> => {
    if (known.has(hash)) return true;
    let genuine = false;
    if (token.startsWith(apiTokenPrefix)) {
      genuine = (await context.db.maybeOne('SELECT 1 FROM api_tokens WHERE token_hash = $1', [hash])) !== undefined;
    } else if (looksLikeHostedSessionToken(token)) {
      genuine = (await findHostedSession(context.db, token, context.now())) !== null;
    } else if (looksLikeJwt(token)) {
      const secret = context.config.secrets.jwtSecret;
      genuine = (await verifyJwt(secret, token, 'user')) !== null || (await verifyJwt(secret, token, 'refresh')) !== null || (await verifyJwt(secret, token, 'cardvaultuser')) !== null;
    }
    if (!genuine) return false;
    makeRoomForOne(known, limits.rateLimitKnownCredentialsMax);
    known.add(hash);
    return true;
  };
  return { known: (hash) => known.has(hash), check };
}
