import swagger from '@fastify/swagger';
import { Type } from '@sinclair/typebox';
import type { App } from '../app.js';
import type { Config } from '../config.js';
import { limits } from '../limits.js';
import { packageVersion } from '../version.js';

/**
 * The spec's error shape as a response schema, for routes to declare their error statuses in
 * the OpenAPI document: `{code, message, data: {status, ...}}` (`data` may carry `params` etc.).
 */
export const errorResponseSchema = Type.Object(
  {
    code: Type.String({ description: 'Machine-readable error code, e.g. rest_invalid_param.' }),
    message: Type.String(),
    data: Type.Object({ status: Type.Integer({ description: 'The HTTP status.' }) }, { additionalProperties: true }),
  },
  { description: 'Error' },
);

/**
 * Error statuses documented with the error shape, one definition for every route:
 * `errorResponses(401, 404)` is `{401: errorResponseSchema, 404: errorResponseSchema}`.
 */
export function errorResponses<const S extends number>(...statuses: S[]): Record<S, typeof errorResponseSchema> {
  return Object.fromEntries(statuses.map((status) => [status, errorResponseSchema])) as Record<S, typeof errorResponseSchema>;
}

/**
 * What a site-scoped REST route of the resource modules can answer besides its success: 400
 * (validation, malformed JSON), 401 (no or bad credential), 403 (role or read-only refused), 404
 * (unknown site or item), 409 (Idempotency-Key conflict, state conflicts) and 429 (rate limit).
 */
export const siteApiErrors = errorResponses(400, 401, 403, 404, 409, 429);

/**
 * What the body parser answers on every route whose method takes a body, before the route runs:
 * 413 (over limits.bodyBytesMax) and 415 (not JSON in UTF-8, or compressed). Added to those
 * routes' documents in one place (registerOpenApi's transform), as the parser is one for all;
 * GET routes never read a body, so they do not list them.
 */
const bodyParserErrors = errorResponses(413, 415);
const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

type SecurityRequirement = Record<string, string[]>;
type Schema = Record<string, unknown>;

/**
 * The `Idempotency-Key` a route honours (idempotency.ts): every POST taking the site API's bearer
 * credential (the document's default scheme, so no `security` of its own), unless its answer is a
 * credential (`idempotencyExempt`); keys are scoped by that credential's site.
 */
const idempotencyKeyHeader = Type.Object({
  'Idempotency-Key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: limits.idempotencyKeyLengthMax,
      pattern: '^[\\x21-\\x7e]+$',
      description: `Makes a retry safe (visible ASCII, 1 to ${limits.idempotencyKeyLengthMax} characters, kept ${limits.idempotencyKeyRetentionHours} hours per site): the same key with the same request answers the first response again, with Idempotent-Replayed: true; with another request, 409 rest_idempotency_conflict.`,
    }),
  ),
});
const replayedHeader = { 'Idempotent-Replayed': Type.Literal('true', { description: 'Present on an answer replayed for a repeated Idempotency-Key: the first request\'s answer, sent again.' }) };
/** What every list with `page`/`per_page` answers besides its items (pagination.ts setPaginationHeaders). */
const paginationHeaders = {
  'X-Site-Total': Type.String({ pattern: '^[0-9]+$', description: 'Items matching the query, over every page.' }),
  'X-Site-TotalPages': Type.String({ pattern: '^[0-9]+$', description: 'Pages at this per_page.' }),
  Link: Type.String({ description: 'RFC 8288 links to the previous and next pages (rel="prev", rel="next"); absent when there is a single page.' }),
};
const retryAfterHeader = { 'Retry-After': Type.String({ pattern: '^[0-9]+$', description: 'Seconds until the rate limit lets a request through again.' }) };

/** `response` with `headers` added to the answer of `status`, when the route documents it (schemas are shared: copied, never changed). */
function withHeaders(response: Schema, status: string, headers: Schema): Schema {
  const answer = response[status] as Schema | undefined;
  if (!answer) return response;
  return { ...response, [status]: { ...answer, headers: { ...(answer.headers as Schema | undefined), ...headers } } };
}

/** The request and response headers the shared hooks send or read, added to a route's documented schema. */
function documentHeaders(routeSchema: Schema, response: Schema, route: { method: string | string[]; config?: unknown }): { schema: Schema; response: Schema } {
  const methods = [route.method].flat();
  const exempt = (route.config as { idempotencyExempt?: boolean } | undefined)?.idempotencyExempt === true;
  const query = routeSchema.querystring as { properties?: Schema } | undefined;
  let documented = withHeaders(response, '429', retryAfterHeader);
  if (methods.includes('GET') && query?.properties?.per_page) documented = withHeaders(documented, '200', paginationHeaders);
  if (methods.includes('POST') && routeSchema.security === undefined && !exempt) {
    // Stored and replayed: what the route answered (created, or refused by its own checks); not
    // what was refused before the key was claimed (credential, role, body schema, parser, rate limit).
    const replayed = ['201', '400', '404', '409'].reduce((answers, status) => withHeaders(answers, status, replayedHeader), documented);
    return { schema: { ...routeSchema, headers: idempotencyKeyHeader }, response: replayed };
  }
  return { schema: routeSchema, response: documented };
}

/**
 * The `security` of a route that takes no credential (hosted pages, their assets, the 3DS return):
 * the document's default is the bearer scheme.
 */
export const noCredential: SecurityRequirement[] = [];

/** The page payment API takes the hosted page session (`hps_...`) its page was opened with. */
export const hostedSessionSecurity: SecurityRequirement[] = [{ hostedSession: [] }];

/** `POST .../token/refresh` takes the refresh JWT a login issued, nothing else. */
export const refreshTokenSecurity: SecurityRequirement[] = [{ refreshToken: [] }];

/** Card capture: the vaulting-app JWT of the site, or a hosted page session; never an API token. */
export const cardCaptureSecurity: SecurityRequirement[] = [{ cardVaultUser: [] }, { hostedSession: [] }];

/** A page answered as HTML (hosted pages, error pages). Sent as a string: the schema is documentation. */
export function htmlResponse(description: string) {
  return { description, content: { 'text/html': { schema: Type.String() } } };
}

/** A built browser bundle or stylesheet (sent as bytes: the schema is documentation). */
export function assetResponse(description: string) {
  return { description, content: { 'text/javascript': { schema: Type.String() }, 'text/css': { schema: Type.String() } } };
}

/** Paths of the service itself that take no credential. */
const publicPaths = new Set(['/healthz', '/readyz']);

/**
 * Registers the OpenAPI 3.1 generator. It collects every route registered AFTER it, so
 * buildApp registers it before the route modules; the document is served at /openapi.json.
 * Routes requiring a bearer credential need nothing extra (it is the document's default);
 * routes that take none declare `security: noCredential` (`[]`) in their schema, and routes taking
 * a page credential name its scheme (`hostedSessionSecurity`, `cardCaptureSecurity`).
 */
export async function registerOpenApi(app: App, config: Config): Promise<void> {
  const version = packageVersion();
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'trustfare',
        version,
        license: { name: 'MIT', identifier: 'MIT' },
        description:
          'Card vaulting and booking payment service for travel businesses. Every REST request carries `Authorization: Bearer <token>`: an API token (`tfat_...`, recommended) or a user JWT from the token endpoints. Errors are `{code, message, data: {status}}`.',
      },
      servers: [{ url: config.baseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An API token (tfat_...) or a user JWT.' },
          hostedSession: { type: 'http', scheme: 'bearer', description: 'A hosted page session (hps_...): the token a hosted page (vaulting app, payment modal frame, payment request page) was opened with; 30 minutes, one site and channel.' },
          refreshToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The refresh JWT (kind refresh) a login issued; only for POST /{path}/site-json/jwt-auth/v1/token/refresh.' },
          cardVaultUser: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A vaulting-app JWT (kind cardvaultuser) of the site, from POST /{path}/site-json/jwt-auth/v1/token/cardvaultuser.' },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: ({ schema, url, route }) => {
      const routeSchema = (schema ?? {}) as Record<string, unknown>;
      const takesBody = [route.method].flat().some((method) => bodyMethods.has(method));
      // Every route can answer 400: a NUL anywhere in the URL is refused before the route (app.ts),
      // with the error shape. Routes documenting their own 400 keep it.
      const responses = routeSchema.response as Record<string, unknown> | undefined;
      const requestErrors = responses && !('400' in responses) ? { 400: errorResponseSchema } : {};
      const withErrors = responses ? documentHeaders(routeSchema, { ...responses, ...requestErrors, ...(takesBody ? bodyParserErrors : {}) }, route) : undefined;
      const documented = withErrors ? { ...withErrors.schema, response: withErrors.response } : routeSchema;
      return { schema: (publicPaths.has(url) ? { ...documented, security: [] } : documented) as never, url };
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
    void reply.header('cache-control', 'no-cache');
    return app.swagger();
  });
}
