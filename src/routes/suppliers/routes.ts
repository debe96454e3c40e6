import { Type, type Static } from '@sinclair/typebox';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { supplierCategoryCodes, supplierIdItemPattern, supplierIdPattern } from '../../domain/reference-data.js';
import { errorResponseSchema } from '../../http/openapi.js';
import { requireAccess } from '../../http/auth.js';
import { invalidId } from '../../http/errors.js';
import {
  CodeEnum, EnumList, ItemParams, SiteParams, StringEnum, ValueList, WhereBuilder, apiPrefix, codePointOrder, fetchPage, listValues, orderBySql, pageParam, pageRequest, perPageParam, orderParam, orderbyDescription, described, wildcardDescription,
  setPaginationHeaders, wildcardPattern, wordpressListProperties,
} from '../../http/pagination.js';
import { limits } from '../../limits.js';
import { Text } from '../../domain/text.js';

/**
 * Suppliers: a platform-wide, read-only directory (imported by the operator CLI). Every
 * authenticated user of any site may read it; nothing here writes.
 */

export const SupplierSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  country: Type.String(),
  category: CodeEnum(supplierCategoryCodes),
});
export type SupplierWire = Static<typeof SupplierSchema>;

const supplierIdRegExp = new RegExp(supplierIdPattern);
// Supplier ids are text too (GB-1042-ACC), so even the default order is by code point (migration 050's index).
const supplierIdOrder = codePointOrder('id');
const orderColumns: Record<string, string> = { id: supplierIdOrder, name: codePointOrder('name'), url: codePointOrder('url'), country: codePointOrder('country'), category: codePointOrder('category') };

/** What a `search` should have been (pageRequest's refusal). */
const supplierSearchFilters = 'name or url (wildcard), countries or categories';
const SupplierIdList = ValueList(supplierIdItemPattern, 'supplier ids such as GB-1042-ACC', 20);
export const SupplierListQuery = Type.Object({
  ...wordpressListProperties(supplierSearchFilters),
  include: Type.Optional(described(SupplierIdList, 'Only these supplier ids (exact, capitals): comma-separated, the parameter repeated, or both.')),
  exclude: Type.Optional(described(SupplierIdList, 'Not these supplier ids: comma-separated, the parameter repeated, or both.')),
  page: Type.Optional(pageParam),
  per_page: Type.Optional(perPageParam),
  order: Type.Optional(orderParam),
  orderby: Type.Optional(StringEnum(['id', 'name', 'url', 'country', 'category'] as const, { default: 'id', description: orderbyDescription })),
  name: Type.Optional(Text({ maxLength: limits.nameLengthMax, kind: 'line', description: wildcardDescription('name') })),
  url: Type.Optional(Text({ maxLength: limits.stringLengthMax, kind: 'line', description: wildcardDescription('url') })),
  countries: Type.Optional(described(ValueList('[A-Z]{2}', 'two-letter country codes in capitals', 2), 'Suppliers of these countries (`country`), comma-separated.')),
  categories: Type.Optional(described(EnumList(supplierCategoryCodes), 'Suppliers of these categories (`category`), comma-separated.')),
});

interface SupplierRow {
  [column: string]: unknown;
  id: string;
  name: string;
  url: string;
  country: string;
  category: string;
}

const tags = ['Suppliers'];
const errors = { 400: errorResponseSchema, 401: errorResponseSchema, 404: errorResponseSchema, 429: errorResponseSchema };

const select = 'id, name, url, country, category';

export async function supplierRoutes(app: App, context: AppContext): Promise<void> {
  const read = requireAccess({ db: context.db, jwtSecret: context.config.secrets.jwtSecret });
  const base = `${apiPrefix}/suppliers`;

  app.get(base, { onRequest: read, schema: { operationId: 'listSuppliers', summary: 'List suppliers (platform-wide directory)', tags, params: SiteParams, querystring: SupplierListQuery, response: { ...errors, 200: Type.Array(SupplierSchema) } } }, async (request, reply) => {
    const query = request.query;
    const page = pageRequest(query, supplierSearchFilters);
    const where = new WhereBuilder()
      .andIf(listValues('include', query.include), (w, ids) => w.and`id = ANY(${ids}::text[])`)
      .andIf(listValues('exclude', query.exclude), (w, ids) => w.and`NOT (id = ANY(${ids}::text[]))`)
      .andIf(query.name, (w, name) => w.and`name ILIKE ${wildcardPattern(name)}`)
      .andIf(query.url, (w, url) => w.and`url ILIKE ${wildcardPattern(url)}`)
      .andIf(listValues('countries', query.countries), (w, countries) => w.and`country = ANY(${countries}::text[])`)
      .andIf(listValues('categories', query.categories), (w, categories) => w.and`category = ANY(${categories}::text[])`);
    const result = await fetchPage<SupplierRow>(context.db, { select, from: 'suppliers', where, orderBy: orderBySql(orderColumns, query.orderby ?? 'id', page.order, supplierIdOrder), page });
    setPaginationHeaders(reply, request, { baseUrl: context.config.baseUrl, total: result.total, page });
    return result.rows.map(supplierToWire);
  });

  app.get(`${base}/:id`, { onRequest: read, schema: { operationId: 'getSupplier', summary: 'Get a supplier', tags, params: ItemParams, response: { ...errors, 200: SupplierSchema } } }, async (request) => {
    const id = request.params.id;
    const row = supplierIdRegExp.test(id) ? await context.db.maybeOne<SupplierRow>(`SELECT ${select} FROM suppliers WHERE id = $1`, [id]) : undefined;
    if (!row) throw invalidId('supplier ID');
    return supplierToWire(row);
  });
}

function supplierToWire(row: SupplierRow): SupplierWire {
  return { id: row.id, name: row.name, url: row.url, country: row.country.trim(), category: row.category };
}
