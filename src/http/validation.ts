import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError } from './errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// `unicode: false`: maxLength counts UTF-16 code units, as `.length` does in textProblem, the
// pages' maxlength and limits.ts say. Ajv's default counts code points, so a schema took twice
// the bound in emoji where the same rule elsewhere refused it (a name the vaulting app refused was
// taken by POST /cards: session 29).
// Ajv calls that option deprecated, in two lines on stderr at every server start and CLI command;
// chosen on purpose, that notice alone is dropped.
const logger = {
  log: console.log,
  warn: (...parts: unknown[]) => (String(parts[0]).startsWith('DEPRECATED: option unicode.') ? undefined : console.warn(...parts)),
  error: console.error,
};
const common: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false, unicode: false, logger };

/**
 * Bodies are validated strictly: `"100"` is not the integer 100, money included. Query strings
 * and path parameters are text by nature, so they are coerced (and `a,b` lists become arrays
 * through the route schemas' own handling).
 */
const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
// `verbose` keeps the refused value on each issue, so a parameter repeated where one value is
// expected (`page=1&page=2` arrives as a list) is told so (http/errors.ts), not "must be integer".
const textAjv = addFormats(new Ajv({ ...common, coerceTypes: 'array', verbose: true }));

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/**
 * PostgreSQL text cannot hold U+0000, so a NUL in any string would fail deep inside a query
 * (a 500, after side effects such as a counted login failure). Refuse it at the edge instead,
 * in bodies and query strings alike.
 */
export function findNulCharacter(value: unknown, path = '', depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path || 'body' : null;
  if (value === null || typeof value !== 'object' || depth > 32) return null;
  // for...in and paths built only when descending: this runs on every request.
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (key.includes('\u0000')) return path ? `${path}.${key}` : key;
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'string' ? !item.includes('\u0000') : item === null || typeof item !== 'object') continue;
    const found = findNulCharacter(item, path ? `${path}.${key}` : key, depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * JSON is UTF-8 (RFC 8259 section 8.1) and bodies are read as UTF-8: a body declared in another
 * charset (`application/json; charset=iso-8859-1`) would have its accented letters turned into
 * U+FFFD without a word, so it is refused (415) instead. No charset, `utf-8` and `utf8` are UTF-8;
 * `us-ascii` (and `ascii`) is taken too: ASCII text is the same bytes in UTF-8, and RFC 8259
 * gives the parameter no meaning for JSON, so a client declaring it loses nothing.
 */
export function foreignCharsetError(contentType: string | undefined): ApiError | undefined {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset === undefined || utf8Charsets.has(charset)) return undefined;
  return new ApiError(415, 'rest_unsupported_media_type', 'Send the body as application/json in UTF-8.');
}

const utf8Charsets = new Set(['utf-8', 'utf8', 'us-ascii', 'ascii']);
