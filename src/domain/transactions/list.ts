import type { Queryable } from '../../storage/db.js';
import { codePointOrder, fetchPage, orderBySql, WhereBuilder, type PageRequest } from '../../http/pagination.js';

/** Filters of GET /transactions (spec "Transaction list query parameters"), parsed. */
export interface TransactionFilters {
  include?: number[];
  exclude?: number[];
  /** Created at or after this instant (http/pagination.ts publishedRange: `after`, by whole seconds). */
  afterFrom?: Date;
  /** Created before this instant (`before`, by whole seconds). */
  beforeUntil?: Date;
  status?: string[];
  channels?: number[];
  channelsExclude?: number[];
  binNumber?: string[];
  countries?: string[];
  currencies?: string[];
  currenciesExclude?: string[];
  lastFourDigits?: string[];
  paymentMethods?: string[];
  transactionTypes?: string[];
  payeeSurname?: string;
  payeeEmail?: string;
  reference?: string[];
  statementDateAfter?: string;
  statementDateBefore?: string;
}

export const transactionOrderColumns: Record<string, string> = {
  id: 't.id',
  date: 't.created_at',
  created: 't.created_at',
  modified: 't.modified_at',
  total: 't.total',
  status: codePointOrder('t.status'),
  statement_date: 't.statement_date',
};

/** One page of transaction ids of the site, with the total count. */
export async function listTransactionIds(db: Queryable, options: { siteId: number; filters: TransactionFilters; page: PageRequest; orderby: string }): Promise<{ ids: number[]; total: number }> {
  const f = options.filters;
  const where = new WhereBuilder().and`t.site_id = ${options.siteId}`.scope();
  where
    .andIf(f.include, (w, v) => w.and`t.id = ANY(${v}::bigint[])`)
    .andIf(f.exclude, (w, v) => w.and`NOT (t.id = ANY(${v}::bigint[]))`)
    .andIf(f.afterFrom, (w, v) => w.and`t.created_at >= ${v}`)
    .andIf(f.beforeUntil, (w, v) => w.and`t.created_at < ${v}`)
    .andIf(f.status, (w, v) => w.and`t.status = ANY(${v}::text[])`)
    .andIf(f.channels, (w, v) => w.and`t.channel_id = ANY(${v}::bigint[])`)
    .andIf(f.channelsExclude, (w, v) => w.and`NOT (t.channel_id = ANY(${v}::bigint[]))`)
    .andIf(f.binNumber, (w, v) => w.and`t.bin_number = ANY(${v}::text[])`)
    .andIf(f.countries, (w, v) => w.and`t.country = ANY(${v}::text[])`)
    .andIf(f.currencies, (w, v) => w.and`t.currency = ANY(${v}::text[])`)
    .andIf(f.currenciesExclude, (w, v) => w.and`NOT (t.currency = ANY(${v}::text[]))`)
    .andIf(f.lastFourDigits, (w, v) => w.and`t.last_four = ANY(${v}::text[])`)
    .andIf(f.paymentMethods, (w, v) => w.and`t.payment_method = ANY(${v}::text[])`)
    .andIf(f.transactionTypes, (w, v) => w.and`t.type = ANY(${v}::text[])`)
    .andIf(f.payeeSurname, (w, v) => w.and`t.payee_surname = ${v}`)
    .andIf(f.payeeEmail, (w, v) => w.and`lower(t.payee_email COLLATE "C") = lower(${v}::text COLLATE "C")`)
    // From the site's bookings of those references (their index, migration 056) to their
    // transactions, not a look-up per transaction of the site. A booking with transactions is never
    // deleted (deleteBooking), so the live ones are all there are.
    .andIf(f.reference, (w, v) => w.and`t.id IN (SELECT tb.transaction_id FROM bookings b JOIN transaction_bookings tb ON tb.booking_id = b.id
                                                  WHERE b.site_id = ${options.siteId} AND b.deleted_at IS NULL AND b.reference COLLATE "C" = ANY(${v}::text[]))`)
    .andIf(f.statementDateAfter, (w, v) => w.and`t.statement_date >= ${v}::date`)
    .andIf(f.statementDateBefore, (w, v) => w.and`t.statement_date <= ${v}::date`);
  const page = await fetchPage<{ id: number }>(db, {
    select: 't.id',
    from: 'transactions t',
    siteTotal: { relation: 'transactions', siteId: options.siteId },
    where,
    orderBy: orderBySql(transactionOrderColumns, options.orderby, options.page.order, 't.id'),
    page: options.page,
  });
  return { ids: page.rows.map((row) => row.id), total: page.total };
}
