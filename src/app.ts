import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { DestinationStream } from 'pino';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from './context.js';
import { limits } from './limits.js';
import { luhnValid } from './domain/vault/card-types.js';
import { ApiError, errorHandler, invalidParam, unsupportedContentEncoding } from './http/errors.js';
import { clientErrorHandler, frameworkErrorHandler } from './http/client-errors.js';
import { parseQueryString } from './http/querystring.js';
import { findNulCharacter, foreignCharsetError, validatorCompiler } from './http/validation.js';
import { registerRoutes } from './routes/index.js';
import { registerRateLimit } from './http/rate-limit.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { registerOpenApi } from './http/openapi.js';
import { registerIdempotency } from './http/idempotency.js';

export type { AppContext } from './context.js';

export interface BuildAppOptions {
  context: AppContext;
  logger?: FastifyServerOptions['logger'];
  /** Where the default logger writes (stdout when absent); tests capture logs with it. */
  logStream?: DestinationStream;
}

export type App = FastifyInstance<any, any, any, any, TypeBoxTypeProvider>;

// Card data and credentials never reach the logs, whatever a route logs.
export const redactedLogPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.body.password',
  'req.body.card_number',
  'req.body.cvv',
  'req.body.pan',
  'req.body.otp',
  'res.headers["set-cookie"]',
  'req.body.refresh_token',
  'req.body.token',
  'req.body.number',
  'req.body.card',
];

// Query parameters that carry credentials or card data (the vaulting app takes its JWT in
// `auth`): their values are replaced in logged URLs, also written as a list (`auth[]=`, read as
// `auth`: src/http/querystring.ts).
const secretQueryNames = 'auth|token|access_token|refresh_token|api_token|api_key|apikey|jwt|password|passwd|pass|otp|card_number|number|cvv|pan|secret|key';
const secretQueryParameters = new RegExp(`([?&](?:${secretQueryNames})(?:\\[\\d*\\]|%5B\\d*%5D)?=)[^&#]*`, 'gi');
// The same names as the query string parser reads them once decoded (`a%75th` is `auth`).
const secretQueryName = new RegExp(`^(?:${secretQueryNames})(?:\\[\\d*\\])?$`, 'i');

// The token of a payment request link (`/pay/<token>`) is a capability: it pays the booking.
const secretPathSegments = /^(\/pay\/)[^/?#]+/;

// A card number anywhere else in a URL, as someone pasting one into a page's query string would
// put it: 12 to 19 digits, maybe split by spaces (`+`, `%20`), dashes, dots, underscores or an
// encoded plus (`%2B`), that pass the Luhn check.
const digitRuns = /[0-9](?:(?:[ +._-]|%20|%2[BbDdEe])?[0-9]){11,18}/g;

// A credential of this service under any name (an integrator's own `?t=`): API tokens, page
// sessions, capture tokens and JWTs have shapes no ordinary value has.
const credentialShapes = /\b(?:tfat_|hps_|ct_)[A-Za-z0-9_-]{16,}|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

export function redactUrl(url: string): string {
  const redacted = url.replace(secretPathSegments, '$1[redacted]').replace(secretQueryParameters, '$1[redacted]').replace(credentialShapes, '[redacted]');
  // Percent-escapes in the query may spell a secret name the pattern above cannot see: only then
  // are the names decoded, so the common URL costs one `indexOf`.
  const query = redacted.indexOf('?');
  const names = query >= 0 && redacted.includes('%', query) ? redactEncodedNames(redacted, query) : redacted;
  // The escapes go first: `%2B` holds a digit that is no part of the number.
  return names.replace(digitRuns, (run) => (luhnValid(run.replace(/%[0-9A-Fa-f]{2}/g, '').replace(/[^0-9]/g, '')) ? '[redacted]' : run));
}

/** Redacts the value of each parameter whose percent-encoded name decodes, as fast-querystring decodes it, to a secret one. */
function redactEncodedNames(url: string, query: number): string {
  const parameters = url.slice(query + 1).split('&').map((parameter) => {
    const equals = parameter.indexOf('=');
    const name = equals < 0 ? '' : parameter.slice(0, equals);
    if (!name.includes('%')) return parameter;
    return secretQueryName.test(decodedQueryName(name)) ? `${name}=[redacted]` : parameter;
  });
  return `${url.slice(0, query + 1)}${parameters.join('&')}`;
}

/** A name as the query string parser reads it: `+` is a space, and an undecodable name stays as written. */
function decodedQueryName(name: string): string {
  const spaced = name.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced) || spaced;
  } catch {
    return spaced;
  }
}

const requestSerializer = (request: FastifyRequest) => ({
  method: request.method,
  url: redactUrl(request.url),
  host: request.host,
  remoteAddress: request.ip,
  remotePort: request.socket?.remotePort,
});

/** Builds the application; never listens (server.ts does, tests use inject). */
export async function buildApp(options: BuildAppOptions): Promise<App> {
  const { context } = options;
  const app = Fastify({
    logger: options.logger ?? {
      level: context.config.logLevel,
      redact: { paths: redactedLogPaths, censor: '[redacted]' },
      serializers: { req: requestSerializer },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    bodyLimit: limits.bodyBytesMax,
    requestTimeout: limits.requestArrivalTimeoutMs,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    },
    requestIdHeader: false,
    trustProxy: context.config.trustProxy as FastifyServerOptions['trustProxy'],
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200, querystringParser: parseQueryString },
    // Errors met before a request reaches a route (an undecodable path part) and requests Node's
    // parser refuses (431, malformed headers) are answered in the error shape like any other.
    frameworkErrors: frameworkErrorHandler(context.config),
    clientErrorHandler: clientErrorHandler(context.config),
    ajv: { customOptions: { coerceTypes: 'array', allErrors: true } },
    // Answered below in the error shape: Fastify's own was {"error":"Service Unavailable",...}.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => {
    const error = new ApiError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
    void reply.code(404).send(error.toJSON());
  });
  app.decorateRequest('principal', null);
  // JSON is the one media type of bodies (docs/resources.md: another is 415): Fastify's built-in
  // text/plain parser would hand a route a string, refused as "must be object".
  app.removeContentTypeParser('text/plain');
  // DELETE and GET take no body, nor do the POST routes without a body schema (the spec's
  // `token/refresh`: "no body"), but many HTTP clients send `Content-Type: application/json` on
  // every request: an empty body there is no body, not "invalid JSON". A compressed body is not
  // decompressed, so it is refused as the media type it is (RFC 9110 15.5.16), not parsed as
  // invalid JSON. Everything else goes to Fastify's own parser (prototype-poisoning checks included).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' && (request.method === 'DELETE' || request.method === 'GET' || !request.routeOptions.schema?.body)) return done(null, undefined);
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return done(unsupportedContentEncoding(), undefined);
    const charsetError = foreignCharsetError(request.headers['content-type']);
    if (charsetError) return done(charsetError, undefined);
    parseJson(request, body as string, done);
  });
  // Both synchronous (done callback): an async hook costs a promise and a microtask per request.
  app.addHook('preValidation', (request, _reply, done) => {
    const found = findNulCharacter(request.query) ?? findNulCharacter(request.body) ?? findNulCharacter(request.params);
    done(found ? invalidParam(found, 'must not contain NUL characters') : undefined);
  });
  // Once the server stops (SIGTERM), a request still arriving on an open keep-alive connection
  // is refused before any work, with Connection: close: the client's next try opens a connection
  // to a server that runs, and the stop is not held up by new work.
  let stopping = false;
  // Connections that carried a request sent before the one ahead of it was answered (HTTP/1.1
  // pipelining: Node queues its answer, and its reply has no socket yet).
  const pipelined = new WeakSet<object>();
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    // The answer of a request that was in flight when the stop began closes its connection too.
    // Kept alive, that connection (idle once answered, after Node's close had reaped the idle
    // ones) held the stop until the grace period ended: exit 1, "requests or job batches still
    // running", seconds after the last payment was answered (session 32). Not on a pipelining
    // connection: closed after this answer, it would lose the answers of the requests queued
    // behind it, some of which may have run; its last answer closes it.
    if (stopping && !pipelined.has(request.raw.socket)) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('preClose', (done) => {
    stopping = true;
    done();
  });
  // Answered here, not thrown: the error handler logs every 5xx as a failure, and this one is expected.
  const stoppingError = new ApiError(503, 'rest_internal_error', 'The server is shutting down; nothing was done. Send the request again.');
  app.addHook('onRequest', (request, reply, done) => {
    if (reply.raw.socket === null && request.raw.socket) pipelined.add(request.raw.socket);
    if (!stopping) return done();
    void reply.code(503).header('connection', 'close').send(stoppingError.toJSON());
  });

  // Before the routes: each collects the routes registered after it.
  registerRateLimit(app, context);
  registerSecurityHeaders(app, context.config);
  await registerOpenApi(app, context.config);
  registerIdempotency(app, context);
  await registerRoutes(app, context);
  return app;
}
