import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** One validator for the served OpenAPI document's schemas (formats such as date and ipv4 checked). */
export const documentAjv = addFormats(new Ajv({ strict: false, allErrors: true }));

/**
 * A documented schema with every object closed (`additionalProperties: false` unless it says
 * otherwise), so a field the server sends but the document does not name is found too.
 */
export function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'enum' || key === 'const' ? value : closed(value)]));
  if ('properties' in copy && copy.additionalProperties === undefined && copy.patternProperties === undefined) copy.additionalProperties = false;
  return copy;
}
