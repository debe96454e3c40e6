import { parse } from 'fast-querystring';

/**
 * The query string parser of every route: Fastify's own (fast-querystring), then list brackets
 * taken off names. Many clients write a list as `status[]=failed&status[]=paid` (jQuery, axios,
 * Rails) or `status[0]=failed` (PHP's http_build_query, the `qs` package), and WordPress REST
 * reads both as `status`; taken as unknown names they would be ignored, and the list come back
 * unfiltered. So `name[]` and `name[<digits>]` are `name`, their values joined to any `name`
 * given as well. Other bracketed names (`name[key]`) stay unknown names.
 * A query string without a bracket (`[`, or `%5B` encoded) costs one regular-expression test.
 */
export function parseQueryString(text: string): Record<string, string | string[]> {
  // As find-my-way's own parser: most requests (GET booking among them) have no query string.
  if (text.length === 0) return {};
  const query = parse(text) as Record<string, string | string[]>;
  return bracketsInText.test(text) ? withoutListBrackets(query) : query;
}

const bracketsInText = /\[|%5b/i;
const listBrackets = /\[\d*\]$/;

/** The name a query parameter is read as: `name[]` and `name[<digits>]` are `name`. */
export function queryNameOf(name: string): string {
  return name.replace(listBrackets, '');
}

function withoutListBrackets(query: Record<string, string | string[]>): Record<string, string | string[]> {
  // No prototype, as fast-querystring's own result: a name such as `__proto__[]` stays a name.
  const result: Record<string, string | string[]> = Object.create(null);
  for (const name in query) {
    const value = query[name]!;
    const base = queryNameOf(name);
    const known = result[base];
    result[base] = known === undefined ? value : [...toList(known), ...toList(value)];
  }
  return result;
}

function toList(value: string | string[]): string[] {
  return Array.isArray(value) ? value : [value];
}
