import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { enumPhrase, patternPhrase } from '../domain/patterns.js';
import { limits } from '../limits.js';

/**
 * An expected failure with the spec's error shape `{code, message, data: {status, ...}}`.
 * Domain code throws these (or returns typed results mapped to them); the one error handler
 * below turns them into responses.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly data: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toJSON(): ErrorBody {
    return { code: this.code, message: this.message, data: { status: this.status, ...this.data } };
  }
}

export interface ErrorBody {
  code: string;
  message: string;
  data: { status: number; [key: string]: unknown };
}

/** 400 with `data.params` keyed by the offending parameter, as the spec's booking example. */
export function invalidParams(params: Record<string, string>, data: Record<string, unknown> = {}): ApiError {
  const names = Object.keys(params);
  return new ApiError(400, 'rest_invalid_param', `Invalid parameter(s): ${names.join(', ')}`, { ...data, params });
}

export function invalidParam(name: string, message: string): ApiError {
  return invalidParams({ [name]: message });
}

/**
 * `error` with the parameter `from` called `to`: for a route whose body names a field differently
 * from the domain input it feeds (the hosted pages send `card_token`, the payments core checks
 * `token`), so the refusal names the field the client sent.
 */
export function renamedParam(error: unknown, from: string, to: string): unknown {
  if (!(error instanceof ApiError) || error.status !== 400) return error;
  const params = error.data.params;
  if (Array.isArray(params) && params.includes(from)) return missingParams(params.map((name) => (name === from ? to : String(name))));
  if (params && typeof params === 'object' && Object.hasOwn(params, from)) {
    return invalidParams(Object.fromEntries(Object.entries(params as Record<string, string>).map(([name, message]) => [name === from ? to : name, message])));
  }
  return error;
}

export function missingParams(names: string[]): ApiError {
  return new ApiError(400, 'rest_missing_callback_param', `Missing parameter(s): ${names.join(', ')}`, { params: names });
}

/** Not found, and also "exists but belongs to another site": never confirm existence. */
export function invalidId(what = 'ID'): ApiError {
  return new ApiError(404, 'rest_post_invalid_id', `Invalid ${what}.`);
}

export function forbidden(message = 'Sorry, you are not allowed to do that.'): ApiError {
  return new ApiError(403, 'rest_forbidden', message);
}

/**
 * No bearer credential. The defaults of these three speak to the REST API's caller, an integrator
 * with nothing but the answer to go on: each says what to send instead.
 */
export function notLoggedIn(message = 'You are not currently logged in: send an API token, or a JWT from the token endpoint, in the header Authorization: Bearer <token>.'): ApiError {
  return new ApiError(401, 'rest_not_logged_in', message);
}

export function invalidToken(message = 'Invalid or expired token: send a current API token, or a new JWT from the token or token/refresh endpoint.'): ApiError {
  return new ApiError(401, 'jwt_auth_invalid_token', message);
}

/** A valid credential on a site path it does not belong to, the site unknown or another's: never confirm it exists. */
export function invalidSite(): ApiError {
  return new ApiError(404, 'rest_post_invalid_id', 'Invalid site: the site path at the start of the URL is not one this credential belongs to.');
}

/** A body with a Content-Encoding (gzip, ...): the service reads bodies as they are sent. */
export function unsupportedContentEncoding(): ApiError {
  return new ApiError(415, 'rest_unsupported_media_type', 'Send the body uncompressed, without a Content-Encoding.');
}

/**
 * A card payment, or a card capture for one, in the processor's live mode on a server whose
 * processor does not move money (processor/index.ts takesLiveMode): 409, the request is sound, the
 * channel's mode conflicts with how this server is set up; a 4xx, so the hosted pages show it as
 * a refusal, not a decline, and do not count it as a card attempt (docs/sandbox.md "Live channels").
 */
export function noLiveProcessor(what: 'payment' | 'capture'): ApiError {
  const nothing = what === 'payment' ? 'Nothing was processed.' : 'The card was not stored.';
  return conflict('rest_no_live_processor', `Card payments on this channel are not available: no live payment processor is configured. ${nothing}`);
}

export function conflict(code: string, message: string, data: Record<string, unknown> = {}): ApiError {
  return new ApiError(409, code, message, data);
}

/** 413 saying how large a body may be, so a client can split what it sends or trim it. */
function bodyTooLarge(bytesMax: number): ApiError {
  return new ApiError(413, 'rest_request_too_large', `The request body is too large: send at most ${bytesMax} bytes (${Math.round(bytesMax / 1024)} KB).`, { max_bytes: bytesMax });
}

/** Maps anything thrown in a request to the error shape, hiding internals of 5xx errors. */
export function errorHandler(error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply): void {
  const api = toApiError(error, { bodyBytesMax: request.routeOptions.bodyLimit });
  // The request goes with it (through the logger's req serializer, which redacts the URL): at
  // LOG_LEVEL=warn there is no "incoming request" line to find it by reqId.
  if (api.status >= 500) request.log.error({ err: error, req: request, res: { statusCode: api.status } }, 'request failed');
  for (const [name, value] of Object.entries(api.headers)) reply.header(name, value);
  void reply.code(api.status).send(api.toJSON());
}

/** `bodyBytesMax`: the bound of the route that refused a body as too large (the app's, limits.bodyBytesMax, unless the route sets its own). */
export function toApiError(error: unknown, options: { bodyBytesMax?: number | undefined } = {}): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fastifyError.validation) return fromValidation(fastifyError.validation, fastifyError.validationContext);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge(options.bodyBytesMax ?? limits.bodyBytesMax);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'rest_invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'rest_unsupported_media_type', 'Send the body as application/json.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'rest_invalid_content_length', 'The Content-Length header does not match the body.');
    // The router's (frameworkErrors in app.ts): a path part that does not decode, or one past routerOptions.maxParamLength.
    case 'FST_ERR_BAD_URL':
      return new ApiError(400, 'rest_invalid_request', 'The URL is not valid: a percent-encoded part of its path is not UTF-8.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError(414, 'rest_invalid_request', 'A part of the URL path is too long.');
  }
  if (fastifyError.statusCode === 429) {
    return new ApiError(429, 'rest_too_many_requests', 'Too many requests; retry later.');
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new ApiError(fastifyError.statusCode, 'rest_invalid_request', 'The request could not be processed.');
  }
  return new ApiError(500, 'rest_internal_error', 'An internal error occurred. It has been logged.');
}

/**
 * The answer to a request Node's HTTP parser refused before Fastify saw it (client-errors.ts),
 * by the parser's error code: request line and headers past Node's 16 KB (a long query string),
 * a request that took too long to arrive, anything else malformed (a space in a header name,
 * both Content-Length and Transfer-Encoding).
 */
export function parserErrorOf(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') return new ApiError(431, 'rest_request_headers_too_large', 'The URL and headers of the request are too large.');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError(408, 'rest_request_timeout', 'The request took too long to arrive.');
  return new ApiError(400, 'rest_invalid_request', 'The request is not valid HTTP.');
}

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  /** The value at fault: only from validators compiled with `verbose` (query strings and paths, http/validation.ts). */
  data?: unknown;
}

function fromValidation(allIssues: ValidationIssue[], context = 'body'): ApiError {
  // A failed `if`/`then` is also reported by the `then` keyword that failed, on the field itself.
  const issues = allIssues.filter((issue) => issue.keyword !== 'if');
  const missing = issues.filter((issue) => issue.keyword === 'required').map((issue) => joinPath(issue.instancePath, String(issue.params.missingProperty)));
  if (missing.length > 0 && missing.length === issues.length) return missingParams(missing);
  // No prototype: a field the client named `constructor` or `toString` is a name like any other.
  const params: Record<string, string> = Object.create(null);
  const byParam = new Map<string, ValidationIssue[]>();
  for (const issue of issues) {
    if (issue.keyword === 'required') {
      params[joinPath(issue.instancePath, String(issue.params.missingProperty))] = 'is required';
      continue;
    }
    const name = paramName(issue, context);
    byParam.set(name, [...(byParam.get(name) ?? []), issue]);
  }
  for (const [name, found] of byParam) params[name] ??= describeAll(found, context);
  return invalidParams(params);
}

/**
 * One message for the issues of one parameter. A union (`anyOf`) reports each branch's failure:
 * a value of the right type is told what its own branch wanted (`"00"` → "must be a month from 1
 * to 12", not "must be integer"), literals are listed together ("must be one of flat, percent"),
 * and a value no branch's type fits is told every type, or every format (`must match format "ipv4"
 * or "ipv6"`). A query parameter given twice arrives as
 * a list where one value is expected: that is what it is told, not "must be integer".
 */
function describeAll(issues: ValidationIssue[], context: string): string {
  // The body itself is no object (none sent, or `[]`, `null`, a string): say how to send one.
  if (context === 'body' && issues.every((issue) => issue.instancePath === '' && issue.keyword === 'type')) return 'must be a JSON object of the fields, sent with Content-Type: application/json';
  if (context !== 'body' && issues.some((issue) => issue.keyword === 'type' && Array.isArray(issue.data))) return 'was given more than once: send it once';
  // A value no format of a union fits (`ip_address`: ipv4 or ipv6) is told each, not only the first tried.
  const formats = [...new Set(issues.filter((issue) => issue.keyword === 'format').map((issue) => `"${String(issue.params.format)}"`))];
  if (formats.length > 1) return `must match format ${formats.join(' or ')}`;
  const unionParts = new Set(['type', 'const', 'anyOf', 'oneOf']);
  const specific = issues.find((issue) => !unionParts.has(issue.keyword));
  if (specific) return describe(specific);
  const constants = issues.filter((issue) => issue.keyword === 'const').map((issue) => String(issue.params.allowedValue));
  const types = issues.filter((issue) => issue.keyword === 'type').map((issue) => String(issue.params.type));
  if (constants.length > 0) return `must be one of ${[...new Set([...constants, ...types])].join(', ')}`;
  if (types.length > 1) return `must be ${[...new Set(types)].join(' or ')}`;
  return describe(issues[0]!);
}

/**
 * The key of `data.params` (spec, Errors 3: "keyed by the offending parameter"): an unknown field
 * by its own name, a body's nested value by its path (`bookings.0.total`), a query parameter by
 * its name alone. Query lists are arrays only after coercion (`status=Paid` is checked as
 * `status/0`), so an index there names nothing the client sent.
 */
function paramName(issue: ValidationIssue, context: string): string {
  if (issue.keyword === 'additionalProperties') return joinPath(issue.instancePath, String(issue.params.additionalProperty));
  if (!issue.instancePath) return context;
  const path = issue.instancePath.slice(1).split('/');
  return context === 'body' ? path.join('.') : path[0]!;
}

function joinPath(instancePath: string, property: string): string {
  const parent = instancePath.slice(1).replace(/\//g, '.');
  return parent ? `${parent}.${property}` : property;
}

function describe(issue: ValidationIssue): string {
  if (issue.keyword === 'enum') {
    const allowed = issue.params.allowedValues as unknown[];
    const phrase = enumPhrase(allowed);
    return phrase ? `must be ${phrase}` : `must be one of ${allowed.join(', ')}`;
  }
  if (issue.keyword === 'additionalProperties') return `unknown field ${String(issue.params.additionalProperty)}`;
  const phrase = issue.keyword === 'pattern' ? patternPhrase(String(issue.params.pattern)) : undefined;
  if (phrase) return `must be ${phrase}`;
  return issue.message ?? 'is invalid';
}
