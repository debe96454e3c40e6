import rateLimit, { type RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import type { Config } from '../config.js';
import { hashToken } from '../domain/credentials.js';
import { bearerToken } from './auth.js';
import { ApiError } from './errors.js';

const windowMs = 60_000;
const probePaths = new Set(['/healthz', '/readyz']);

/**
 * Per-process rate limit (in memory): `config.rateLimitPerMinute` requests per minute per bearer
 * credential (API token or JWT, keyed by its hash) or, without one, per client IP. Liveness and
 * readiness probes are exempt. Exceeding it answers 429 `rest_too_many_requests` with
 * `Retry-After` in seconds. Must be registered before the routes it covers.
 */
export async function registerRateLimit(app: App, config: Config): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: config.rateLimitPerMinute,
    timeWindow: windowMs,
    keyGenerator: credentialOrIp,
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

function credentialOrIp(request: FastifyRequest): string {
  const token = bearerToken(request);
  return token ? `bearer:${hashToken(token)}` : `ip:${request.ip}`;
}
