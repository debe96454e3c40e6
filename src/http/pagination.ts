import { Type, type TArray, type TSchema, type TString, type TUnsafe } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { limits } from '../limits.js';
import type { Queryable, Row } from '../storage/db.js';
import { invalidParam } from './errors.js';
import { queryNameOf } from './querystring.js';
import { describedPattern } from '../domain/patterns.js';
import { calendarDateProblem, calendarDayProblem, isClockTime } from '../domain/gmt.js';

/**
 * Shared list machinery (decisions.md "Lists"): query parameter schemas, parsing of id and value
 * lists, a WHERE builder that only ever emits placeholders, page fetching with a total, and the
 * `X-Site-Total` / `X-Site-TotalPages` / RFC 8288 `Link` headers. Generic over resources.
 */

// ---------------------------------------------------------------------------------------------
// Schema fragments. Query strings are coerced (see http/validation.ts), so `per_page=5` becomes
// 5 and a single `include=1,2` becomes `['1,2']` for array schemas.

/**
 * A string enum with a readable validation message (`must be one of a, b`). The intersection
 * type lets the Fastify type provider (TypeBox 1.x `Static`) infer the union from `enum`.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: { default?: T[number]; description?: string } = {}): TUnsafe<T[number]> & { type: 'string'; enum: T } {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options }) as TUnsafe<T[number]> & { type: 'string'; enum: T };
}

/**
 * A string limited to a long list of codes (currencies, countries, languages), typed as plain
 * `string`: a union of dozens of literals is too deep for the type provider's inference.
 */
export function CodeEnum(values: readonly string[], options: { description?: string } = {}): TString {
  return Type.String({ enum: [...values], ...options } as Parameters<typeof Type.String>[0]);
}

const integerIdPattern = describedPattern('^[0-9]{1,15}(,[0-9]{1,15})*,?$', 'positive integer ids separated by commas');

/** Comma-separated positive integer ids, as one value or repeated (`include=1,2&include=3`). */
export const IntegerIdList = Type.Array(Type.String({ pattern: integerIdPattern, maxLength: limits.listFilterValuesMax * 16 }), { maxItems: limits.listFilterValuesMax });

/** Comma-separated values, each matching `itemPattern` (anchored here) and described by `itemsPhrase` ("4-digit numbers"). */
export function ValueList(itemPattern: string, itemsPhrase: string, itemLengthMax: number = limits.nameLengthMax): TArray<TString> {
  return Type.Array(
    Type.String({ pattern: describedPattern(`^(${itemPattern})(,(${itemPattern}))*,?$`, `${itemsPhrase}, one or more separated by commas`), maxLength: limits.listFilterValuesMax * (itemLengthMax + 1) }),
    { maxItems: limits.listFilterValuesMax },
  );
}

/** Comma-separated values drawn from a fixed set. */
export function EnumList(values: readonly string[]): TArray<TString> {
  return ValueList(values.map(escapeRegExp).join('|'), `values among ${values.join(', ')}`);
}

/** `schema` with the words the API reference shows for it: a copy, as list schemas are shared. */
export function described<T extends TSchema>(schema: T, description: string): T {
  return { ...schema, description };
}

export const pageParam = Type.Integer({ minimum: 1, maximum: limits.pageMax, default: 1, description: 'The page, from 1; a page past the last answers [] with the same headers.' });
export const perPageParam = Type.Integer({ minimum: 1, maximum: limits.perPageMax, default: limits.perPageDefault, description: `Items per page, 1 to ${limits.perPageMax}.` });
export const orderParam = StringEnum(['asc', 'desc'] as const, { default: 'asc', description: 'Ties of `orderby` are broken by id in the same direction, so pages never overlap.' });
/** What a "wildcard match" filter (wildcardPattern) does, for the API reference. */
export function wildcardDescription(field: string): string {
  return `Any case: \`*\` matches any run of characters, and a value without \`*\` matches anywhere in \`${field}\` (\`%\` and \`_\` match themselves).`;
}
export const orderbyDescription = 'The field to sort by; text sorts by Unicode code point (capitals before small letters, accented letters after z), the same on every installation.';

export const isoDateTimeRegExpSource = '[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?';

/** ISO 8601 date or date-time (`2026-01-31`, `2026-01-31T10:00:00`, with optional `Z`/offset). */
export const isoDateTimeParam = Type.String({
  pattern: describedPattern(`^${isoDateTimeRegExpSource}$`, 'an ISO 8601 date or date-time, such as 2026-01-31 or 2026-01-31T10:00:00Z'),
});
/** The creation-time filters of bookings and transactions (publishedRange). */
export const publishedFilters = {
  before: Type.Optional(described(isoDateTimeParam, 'Created before this instant (GMT unless an offset is given), to the second it names, excluded.')),
  after: Type.Optional(described(isoDateTimeParam, 'Created after this instant, compared at the whole seconds `created` shows: the `created` of the last item seen never brings it back.')),
};

/**
 * The transactions list's `statement_date_after` / `_before`, which the spec calls "timestamps":
 * an ISO 8601 date or date-time as everywhere, or a Unix timestamp in seconds (up to 11 digits,
 * the year 5138), whose GMT day is taken (statementDateOf).
 */
export const statementDateParam = Type.String({
  pattern: describedPattern(
    `^(${isoDateTimeRegExpSource}|[0-9]{1,11})$`,
    'an ISO 8601 date or date-time, such as 2026-01-31, or a Unix timestamp in seconds',
  ),
});

/** A `statementDateParam` value as its `YYYY-MM-DD` day. */
export function statementDateOf(name: string, value: string | undefined): string | undefined {
  if (value === undefined || !/^[0-9]{1,11}$/.test(value)) return isoCalendarDate(name, value);
  return new Date(Number(value) * 1000).toISOString().slice(0, 10);
}

const offsetRefusal = 'is not supported: page with page and per_page (offset N is page N / per_page + 1), or follow the Link header';
const searchRefusal = (filters: string) => `is not supported: filter with ${filters}`;

/**
 * `offset` and `search`, which WordPress REST clients send, shown in the reference as refused
 * (pageRequest refuses them): ignored as unknown names, a client paging with `offset` got page 1
 * forever and one searching got the whole list. `searchFilters` names the list's own filters.
 */
export function wordpressListProperties(searchFilters: string) {
  return {
    offset: Type.Optional(Type.Unknown({ description: `Refused with 400: offset ${offsetRefusal}.` })),
    search: Type.Optional(Type.Unknown({ description: `Refused with 400 unless empty: search ${searchRefusal(searchFilters)}.` })),
  };
}

/** `include`, `exclude`, `page`, `per_page`, `order`, `orderby` (limited to `orderbyFields`), and the refused `offset` and `search`. */
export function listQueryProperties<const F extends readonly string[]>(orderbyFields: F, searchFilters: string) {
  return {
    ...wordpressListProperties(searchFilters),
    include: Type.Optional(described(IntegerIdList, 'Only these ids: comma-separated, the parameter repeated, or both.')),
    exclude: Type.Optional(described(IntegerIdList, 'Not these ids: comma-separated, the parameter repeated, or both.')),
    page: Type.Optional(pageParam),
    per_page: Type.Optional(perPageParam),
    order: Type.Optional(orderParam),
    orderby: Type.Optional(StringEnum(orderbyFields, { default: orderbyFields[0], description: orderbyDescription })),
  };
}

/** `{path}` of every site-scoped route; unknown sites are refused by authentication. */
export const apiPrefix = '/:path/site-json/vendor/v2';
/** The absolute URL of a collection (or, with `id`, of one item) of the site's API, on `BASE_URL`. */
export function siteApiUrl(options: { baseUrl: string; sitePath: string; collection: string; id?: number }): string {
  const collection = `${options.baseUrl}/${options.sitePath}/site-json/vendor/v2/${options.collection}`;
  return options.id === undefined ? collection : `${collection}/${options.id}`;
}
/** The `Location` a 201 names its new resource with (RFC 9110 §15.3.2), documented in the OpenAPI answer. */
export const createdLocationHeader = { Location: Type.String({ description: 'The URL of the created resource' }) };
export const SiteParams = Type.Object({ path: Type.String({ maxLength: 63 }) });
/** Item routes take the id as text so a malformed id is a 404 like an unknown one. */
// The id is text of any length the router admits (routerOptions.maxParamLength; past it, 414):
// a malformed or over-long one is a 404 like an unknown one (parseItemId), never a schema's 400.
export const ItemParams = Type.Object({ path: Type.String({ maxLength: 63 }), id: Type.String() });

/** A positive integer id from a path segment, or undefined (callers answer 404). */
export function parseItemId(text: string): number | undefined {
  if (!/^[1-9][0-9]{0,14}$/.test(text)) return undefined;
  return Number(text);
}

// ---------------------------------------------------------------------------------------------
// Parsing.

export interface PageRequest {
  page: number;
  perPage: number;
  order: 'asc' | 'desc';
}

/** The page asked for; `searchFilters` names the list's filters for the refusal of `search` (wordpressListProperties). */
export function pageRequest(query: { page?: number; per_page?: number; order?: 'asc' | 'desc'; offset?: unknown; search?: unknown }, searchFilters: string): PageRequest {
  if (query.offset !== undefined) throw invalidParam('offset', offsetRefusal);
  // An empty search box asks for no search (WordPress reads it so): the whole list.
  if (query.search !== undefined && query.search !== '') throw invalidParam('search', searchRefusal(searchFilters));
  return { page: query.page ?? 1, perPage: query.per_page ?? limits.perPageDefault, order: query.order ?? 'asc' };
}

/** Splits repeated and comma-separated values into one list, dropping empties and duplicates. */
export function listValues(name: string, values: readonly string[] | string | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  const items = (Array.isArray(values) ? values : [values]).flatMap((value) => value.split(',')).map((value) => value.trim()).filter(Boolean);
  const unique = [...new Set(items)];
  if (unique.length > limits.listFilterValuesMax) throw invalidParam(name, `at most ${limits.listFilterValuesMax} values`);
  return unique;
}

/** Integer ids from an `IntegerIdList` parameter; ids beyond the safe range are refused. */
export function integerIds(name: string, values: readonly string[] | undefined): number[] | undefined {
  const items = listValues(name, values);
  if (!items) return undefined;
  return items.map((item) => {
    const id = Number(item);
    if (!Number.isSafeInteger(id)) throw invalidParam(name, 'contains an id out of range');
    return id;
  });
}

/** An `isoDateTimeParam` value as an instant; a date or time without offset is read as GMT. */
export function isoInstant(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const [datePart = '', timePart] = value.split(/[T ]/);
  const [year, month, day] = datePart.split('-').map(Number) as [number, number, number];
  const dayProblem = calendarDayProblem(year, month, day);
  if (dayProblem) throw invalidParam(name, dayProblem);
  let text = timePart === undefined ? `${datePart}T00:00:00Z` : `${datePart}T${timePart}`;
  if (timePart !== undefined && !/(Z|[+-]\d{2}:?\d{2})$/.test(timePart)) text += 'Z';
  const hours = Number(timePart?.slice(0, 2) ?? 0);
  const minutes = Number(timePart?.slice(3, 5) ?? 0);
  const seconds = Number(timePart?.slice(6, 8) || 0);
  const instant = new Date(text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  if (!isClockTime(hours, minutes, seconds) || Number.isNaN(instant.getTime())) throw invalidParam(name, 'is not a valid date-time');
  return instant;
}

/**
 * The `after` and `before` filters on publication (`created`), compared at the precision the API
 * shows it: whole seconds (`2026-11-27 05:24:38`), while the rows keep microseconds. Compared
 * with the raw instant, `after=<an item's own created>` returned that item again (it was created
 * some microseconds into that second), so a client polling "after the last one I saw" got it
 * twice. An item is after X when its shown second is after X, and before X when its shown second
 * is before X; as bounds on the stored instant (so the (site_id, created_at) index still serves
 * them): `created_at >= afterFrom` and `created_at < beforeUntil`.
 */
export function publishedRange(query: { after?: string; before?: string }): { afterFrom?: Date; beforeUntil?: Date } {
  const after = isoInstant('after', query.after);
  const before = isoInstant('before', query.before);
  return {
    ...(after ? { afterFrom: new Date(Math.floor(after.getTime() / 1000) * 1000 + 1000) } : {}),
    ...(before ? { beforeUntil: new Date(Math.ceil(before.getTime() / 1000) * 1000) } : {}),
  };
}

/** A `YYYY-MM-DD` calendar date from an ISO 8601 date or date-time parameter (its date part). */
export function isoCalendarDate(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  isoInstant(name, value);
  // Compared as a PostgreSQL date, which has no year 0 (publishedRange's instants do).
  const problem = calendarDateProblem(value.slice(0, 10));
  if (problem) throw invalidParam(name, problem);
  return value.slice(0, 10);
}

// ---------------------------------------------------------------------------------------------
// SQL.

/**
 * Collects AND-ed conditions. Values only enter through the tagged template, each as a `$n`
 * placeholder, so no input text ever becomes SQL:
 *   where.and`b.surname = ${surname}`;  where.and`b.id = ANY(${ids})`;
 */
export class WhereBuilder {
  private readonly clauses: string[] = [];
  readonly values: unknown[] = [];
  private scopeLength = 0;

  /**
   * Marks the clauses so far as the list's scope (its site, its live rows): what a kept total
   * (PageQuery.siteTotal) counts. Any clause added after it is a filter.
   */
  scope(): this {
    this.scopeLength = this.clauses.length;
    return this;
  }

  /** Whether a clause was added after scope() (all of them, if it was never called). */
  get filtered(): boolean {
    return this.clauses.length > this.scopeLength || this.scopeLength === 0;
  }

  /** Adds `value` as the next placeholder and returns it (for ORDER BY/LIMIT or hand-built SQL). */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  and(strings: TemplateStringsArray, ...values: unknown[]): this {
    let clause = strings[0]!;
    values.forEach((value, index) => {
      clause += this.param(value) + strings[index + 1]!;
    });
    this.clauses.push(`(${clause})`);
    return this;
  }

  /** Adds a condition written by code (never from input); values go in through param(). */
  raw(clause: string): this {
    this.clauses.push(`(${clause})`);
    return this;
  }

  /** Adds the condition only when `value` is defined (a filter that was sent). */
  andIf<T>(value: T | undefined, build: (where: this, value: T) => void): this {
    if (value !== undefined) build(this, value);
    return this;
  }

  get sql(): string {
    return this.clauses.length > 0 ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }
}

/**
 * A text column as lists sort it: by code point (`COLLATE "C"`), not by the database's collation,
 * which is whatever the cluster was created with (an English locale sorts `alpha, beta, Zeta`, C
 * `Zeta, alpha, beta`), so every installation pages alike (docs/resources.md "Sorting").
 */
export function codePointOrder(column: string): string {
  return `${column} COLLATE "C"`;
}

/** ORDER BY for a whitelisted wire field; ties broken by `idColumn` so pages are stable. */
export function orderBySql(columns: Record<string, string>, orderby: string, order: 'asc' | 'desc', idColumn: string): string {
  const column = Object.hasOwn(columns, orderby) ? columns[orderby] : undefined;
  if (!column) throw invalidParam('orderby', `must be one of ${Object.keys(columns).join(', ')}`);
  const direction = order === 'desc' ? 'DESC' : 'ASC';
  return column === idColumn ? `${column} ${direction}` : `${column} ${direction}, ${idColumn} ${direction}`;
}

export interface PageQuery {
  /** SQL select list and FROM clause, written by the caller (never from input). */
  select: string;
  from: string;
  /**
   * The FROM clause of the count, when `from` joins tables that cannot change the number of
   * rows (e.g. the author of each booking): the count then reads the filtered table alone,
   * from an index when one covers the filters.
   */
  countFrom?: string;
  /**
   * The table whose rows of this site the database keeps counted (migration 024): the total of a
   * list with nothing but its scope (WhereBuilder.scope) is read from there instead of counted.
   */
  siteTotal?: { relation: CountedRelation; siteId: number };
  /**
   * The unique column of `countFrom`'s rows (`b.id`): given, the page's keys are chosen first from
   * `countFrom` alone, narrow rows an index can give in the list's order, and only those rows are
   * read in full with `from`'s joins. Without it the database builds every row before the OFFSET
   * (the last page of 300,000 bookings sorted them all on disk: 1.5 s, then 0.1 s).
   */
  pageKey?: string;
  where: WhereBuilder;
  orderBy: string;
  page: PageRequest;
}

/** The tables counted per site by migration 024, with the scope each count has. */
export type CountedRelation = 'bookings' | 'transactions';

export interface Page<T> {
  rows: T[];
  total: number;
}

/**
 * One page of rows and the total count, in one round trip unless the page is past the end. The
 * total is an uncorrelated scalar subquery (computed once): the site's kept count when the list is
 * unfiltered and has one (`siteTotal`), else a count of the matches (an index-only count where an
 * index covers the filters), not `count(*) OVER ()`, which would build every matching row with
 * its select list and joins before the page's LIMIT could stop the scan.
 */
export async function fetchPage<T extends Row>(db: Queryable, query: PageQuery): Promise<Page<T>> {
  const { where, page } = query;
  const total = totalQuery(query);
  const totalSql = total.sql(where.param.bind(where));
  const limit = where.param(page.perPage);
  const offset = where.param((page.page - 1) * page.perPage);
  const pick = `ORDER BY ${query.orderBy} LIMIT ${limit} OFFSET ${offset}`;
  const rows = await db.query<T & { page_total_count: number }>(
    query.pageKey === undefined
      ? `SELECT ${query.select}, (${totalSql}) AS page_total_count FROM ${query.from} ${where.sql} ${pick}`
      : `SELECT ${query.select}, (${totalSql}) AS page_total_count FROM ${query.from}
          WHERE ${query.pageKey} IN (SELECT ${query.pageKey} FROM ${query.countFrom ?? query.from} ${where.sql} ${pick}) ORDER BY ${query.orderBy}`,
    where.values,
  );
  let count = rows[0]?.page_total_count;
  if (count === undefined && page.page === 1) count = 0;
  if (count === undefined) {
    // Past the last page: the total on its own, its placeholders numbered afresh.
    const alone = new WhereBuilder();
    alone.values.push(...where.values.slice(0, total.listValues));
    count = Number((await db.one<{ count: number }>(total.sql(alone.param.bind(alone)), alone.values)).count);
  }
  for (const row of rows) delete (row as Partial<typeof row>).page_total_count;
  return { rows, total: count };
}

/**
 * The total's SQL, given the builder's `param` to add values of its own, and how many of the list's
 * values (its filters, $1 onwards) it reads.
 */
function totalQuery(query: PageQuery): { sql: (param: (value: unknown) => string) => string; listValues: number } {
  const { where, siteTotal } = query;
  if (siteTotal && !where.filtered) {
    return {
      sql: (param) => `SELECT coalesce(sum(row_count), 0)::bigint AS count FROM site_row_counts WHERE site_id = ${param(siteTotal.siteId)} AND relation = ${param(siteTotal.relation)}`,
      listValues: 0,
    };
  }
  const sql = `SELECT count(*)::bigint AS count FROM ${query.countFrom ?? query.from} ${where.sql}`;
  return { sql: () => sql, listValues: where.values.length };
}

// ---------------------------------------------------------------------------------------------
// Response headers.

/**
 * Sets `X-Site-Total`, `X-Site-TotalPages` and a `Link` header with absolute `prev`/`next` URLs
 * (RFC 8288) that keep every other query parameter of the request.
 */
export function setPaginationHeaders(reply: FastifyReply, request: FastifyRequest, options: { baseUrl: string; total: number; page: PageRequest }): void {
  const { total, page } = options;
  const totalPages = Math.ceil(total / page.perPage);
  reply.header('X-Site-Total', String(total));
  reply.header('X-Site-TotalPages', String(totalPages));
  const links: string[] = [];
  const url = new URL(request.url, options.baseUrl + '/');
  const at = (pageNumber: number) => {
    const target = new URL(options.baseUrl + url.pathname);
    target.search = url.search;
    // Every other name read as `page` goes (`page[]=2`): a link keeping one beside the new `page`
    // would be refused as giving it twice. (`page` itself is set in its place.)
    for (const name of [...target.searchParams.keys()]) if (name !== 'page' && queryNameOf(name) === 'page') target.searchParams.delete(name);
    target.searchParams.set('page', String(pageNumber));
    return target.toString();
  };
  if (page.page > 1 && totalPages > 0) links.push(`<${at(Math.min(page.page - 1, totalPages))}>; rel="prev"`);
  if (page.page < totalPages) links.push(`<${at(page.page + 1)}>; rel="next"`);
  if (links.length > 0) reply.header('Link', links.join(', '));
}

/**
 * An ILIKE pattern for a "wildcard match" filter: `*` matches any run of characters; a value
 * without `*` matches anywhere in the field. `%`, `_` and backslash in the input match themselves.
 */
export function wildcardPattern(value: string): string {
  const escaped = value.replace(/[\\%_]/g, (character) => `\\${character}`);
  return value.includes('*') ? escaped.replace(/\*/g, '%') : `%${escaped}%`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
