import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const common: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false };

/**
 * Bodies are validated strictly: `"100"` is not the integer 100, money included. Query strings
 * and path parameters are text by nature, so they are coerced (and `a,b` lists become arrays
 * through the route schemas' own handling).
 */
const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
const textAjv = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));

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
