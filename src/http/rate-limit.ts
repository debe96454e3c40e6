import rateLimit, { type RateLimitOptions } from '@fastify/rate-limit';
import type { App } from '../app.js';
import type { Config } from '../config.js';
import type { AppContext } from '../context.js';
import { apiTokenPrefix, looksLikeJwt, verifyJwt } from '../domain/credentials.js';
import { findHostedSession, looksLikeHostedSessionToken } from '../domain/hosted/sessions.js';
import { limits } from '../limits.js';
import { bearerToken, bearerTokenHash } from './auth.js';
import { ApiError } from './errors.js';

const windowMs = 60_000;
const probePaths = new Set(['/healthz', '/readyz']);

/**
 * Per-process rate limit (in memory): `config.rateLimitPerMinute` requests per minute per bearer
 * credential (API token or JWT, keyed by its hash) or, without one, per client IP. A bearer token
 * that is not a genuine credential counts against the client IP: otherwise a fresh random token
 * per request would get a fresh allowance each time. Liveness and readiness probes are exempt.
 * Exceeding it answers 429 `rest_too_many_requests` with `Retry-After` in seconds. Must be
 * registered before the routes it covers.
 */
export async function registerRateLimit(app: App, context: Pick<AppContext, 'config' | 'db' | 'now'>): Promise<void> {
  const { config } = context;
  const genuine = genuineCredentials(context);
  await app.register(rateLimit, {
    global: true,
    max: config.rateLimitPerMinute,
    timeWindow: windowMs,
    // Synchronous for a credential already known to be genuine (every request but the first).
    keyGenerator: (request) => {
      const token = bearerToken(request);
      if (!token) return `ip:${request.ip}`;
      const hash = bearerTokenHash(token);
      if (genuine.known(hash)) return `bearer:${hash}`;
      return genuine.check(token, hash).then((isGenuine) => (isGenuine ? `bearer:${hash}` : `ip:${request.ip}`));
    },
    allowList: (request) => probePaths.has(request.url),
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'rest_too_many_requests', `Too many requests; retry in ${context.after}.`, {}, { 'retry-after': String(Math.max(1, Math.ceil(context.ttl / 1000))) }),
  });
}

/**
 * The stricter limit of the token endpoints (password guessing): `loginRateLimitPerMinute` per
 * client IP, whatever credential is sent. Used as a route's `config.rateLimit`.
 */
export function loginRateLimit(config: Config): RateLimitOptions {
  return { max: config.loginRateLimitPerMinute, timeWindow: windowMs, keyGenerator: (request) => `login:${request.ip}` };
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
    if (known.size >= limits.rateLimitKnownCredentialsMax) known.delete(known.values().next().value!);
    known.add(hash);
    return true;
  };
  return { known: (hash) => known.has(hash), check };
}
