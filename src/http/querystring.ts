import { parse } from 'fast-querystring';
import { canonicalText } from '../domain/text.js';

/**
 * The query string parser of every route: Fastify's own (fast-querystring), then list brackets
 * taken off names. Many clients write a list as `status[]=failed&status[]=paid` (jQuery, axios,
 * Rails) or `status[0]=failed` (PHP's http_build_query, the `qs` package), and WordPress REST
 * reads both as `status`; taken as unknown names they would be ignored, and the list come back
 * unfiltered. So `name[]` and `name[<digits>]` are `name`, their values joined to any `name`
 * given as well. Other bracketed names (`name[key]`) stay unknown names. Values are read in NFC.
 * A query string without a bracket (`[`, or `%5B` encoded) costs one regular-expression test, one
 * without a byte over 0x7f another.
 */
export function parseQueryString(text: string): Record<string, string | string[]> {
  // As find-my-way's own parser: most requests (GET booking among them) have no query string.
  if (text.length === 0) return {};
  const query = parse(text) as Record<string, string | string[]>;
  if (nonAsciiInText.test(text)) inNfc(query);
  return bracketsInText.test(text) ? withoutListBrackets(query) : query;
}

const bracketsInText = /\[|%5b/i;
// A byte over 0x7f, percent-encoded or not: only then can a value be other than its NFC.
const nonAsciiInText = /%[89a-f]|[^\x00-\x7f]/i;

/**
 * Every value in NFC (canonicalText), as the fields lists filter on are kept: `surname=Müller`
 * finds a surname sent decomposed (`u` + U+0308), and the other way round.
 */
function inNfc(query: Record<string, string | string[]>): void {
  for (const name in query) {
    const value = query[name]!;
    query[name] = Array.isArray(value) ? value.map(canonicalText) : canonicalText(value);
  }
}

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
