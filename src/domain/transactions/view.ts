import type { Config } from '../../config.js';
import type { Queryable } from '../../storage/db.js';
import { gmtDateTime } from '../gmt.js';
import { forexJson } from '../forex/payments.js';
import { formatDecimal, parseDecimal } from '../money.js';
import { loadAllocationJson, type AllocationJson } from '../allocations/index.js';
import { bookingTitle } from '../bookings.js';
import { serverHashKey, transactionHash } from './hash.js';

/**
 * The Transaction object as the API returns it (spec "Transaction", every field including the
 * deprecated ones). Loaded in batches: one statement for any number of transactions (two when
 * some have allocations).
 */

export interface TransactionBookingJson {
  id: number;
  total: number;
  reference: string;
  country: string;
  channels: string;
  currencies: string;
}

export interface ThreeDsResponseJson {
  /** not_attempted, not_enrolled, frictionless, challenge, authenticated or failed. */
  status: string;
  /** While `pending`: the page where the cardholder completes the challenge. */
  challenge_url: string | null;
}

export interface TransactionJson {
  id: number;
  uuid: string;
  trust_id: string;
  author: number | null;
  author_id: number | null;
  authorname: string;
  status: string;
  created: string;
  modified: string;
  title: string;
  total_remaining: number;
  card_type: string | null;
  card_types: string | null;
  statement_date: string | null;
  last_four_digits: string | null;
  forex: ReturnType<typeof forexJson>['forex'];
  forex_id: number | null;
  forex_rate: string | null;
  payment_ids: number[];
  adjustments: number[];
  content: string;
  language: string;
  channels: number;
  currencies: string;
  total: number;
  transaction_type: string;
  transaction_types: string;
  allocations: AllocationJson[];
  bookings: TransactionBookingJson[];
  psp: string | null;
  payment_methods: string | null;
  payee_name: string | null;
  payee_surname: string | null;
  payee_email: string | null;
  countries: string | null;
  issuer_countries: string | null;
  token: string | null;
  ip_address: string | null;
  bin_number: string | null;
  attempt_3ds: boolean;
  redirect_url: string | null;
  linked_id: number | null;
  auth_code: string | null;
  hash: string;
  '3ds_response': ThreeDsResponseJson | null;
  api_urls: { self: string; collection: string };
  statement_batches: unknown[];
  _links: { self: { href: string }[]; collection: { href: string }[]; challenge?: { href: string }[] };
}

interface ViewRow {
  id: number;
  site_id: number;
  uuid: string;
  channel_id: number;
  author_id: number | null;
  author_name: string | null;
  type: string;
  status: string;
  total: number;
  currency: string;
  total_remaining: number;
  linked_id: number | null;
  token: string | null;
  auth_code: string | null;
  content: string;
  psp: string | null;
  payment_method: string | null;
  payee_name: string | null;
  payee_surname: string | null;
  payee_email: string | null;
  country: string | null;
  ip_address: string | null;
  language: string;
  statement_date: string | null;
  card_brand: string | null;
  bin_number: string | null;
  last_four: string | null;
  issuer_country: string | null;
  attempt_3ds: boolean;
  redirect_url: string | null;
  three_ds_status: string | null;
  challenge_url: string | null;
  created_at: Date;
  modified_at: Date;
  channel_secret: string;
  site_path: string;
  forex_quote_id: number | null;
  forex_rate: string | null;
  channel_currency: string | null;
  channel_total: number | null;
}

interface BookingRow {
  transaction_id: number;
  total: number;
  id: number;
  site_id: number;
  reference: string;
  country: string;
  channel_id: number;
  currency: string;
  surname: string;
  email: string;
}

/**
 * The types listed as a transaction's `adjustments`: those of the partial index
 * transactions_adjustments_idx (migration 013). Written into the SQL as literals, so the planner
 * can tell that index applies.
 */
const adjustingTypes = ['capture', 'void', 'refund', 'chargeback', 'chargeback-reversal', 'chargeback-override'];
const adjustingTypesSql = adjustingTypes.map((type) => `'${type}'`).join(', ');

/**
 * The view's row for each row of `source` (a table, or a CTE of transactions rows, aliased t)
 * with its bookings, ledger entry ids and adjustment ids, in one statement (issue 7: every round
 * trip counts on the payments path, which answers with this view). `newEntries` names a CTE of
 * ledger entries written by the same statement, whose snapshot does not see them in
 * ledger_entries (writeSettlements' statement reads the views it answers with this way).
 */
export function viewSelectSql(source: string, newEntries?: string): string {
  const written = newEntries ? ` UNION ALL SELECT n.id FROM ${newEntries} n WHERE n.transaction_id = t.id` : '';
  return `SELECT t.*, u.display_name AS author_name, c.channel_secret, s.path AS site_path,
                coalesce((SELECT json_agg(json_build_object('transaction_id', tb.transaction_id, 'total', tb.total, 'id', b.id, 'site_id', b.site_id,
                                                            'reference', b.reference, 'country', b.country, 'channel_id', b.channel_id,
                                                            'currency', b.currency, 'surname', b.surname, 'email', b.email) ORDER BY tb.position)
                            FROM transaction_bookings tb JOIN bookings b ON b.id = tb.booking_id WHERE tb.transaction_id = t.id), '[]'::json) AS booking_list,
                ARRAY(SELECT e.id FROM ledger_entries e WHERE e.transaction_id = t.id${written} ORDER BY 1)::text AS payment_id_list,
                ARRAY(SELECT a.id FROM transactions a WHERE a.linked_id = t.id AND a.type IN (${adjustingTypesSql}) ORDER BY a.id)::text AS adjustment_id_list,
                EXISTS (SELECT 1 FROM allocations al WHERE al.transaction_id = t.id) AS has_allocations
           FROM ${source} t JOIN channels c ON c.id = t.channel_id JOIN sites s ON s.id = t.site_id LEFT JOIN users u ON u.id = t.author_id`;
}

const viewStatement = {
  name: 'transaction_views',
  text: `${viewSelectSql('transactions')}
          WHERE t.site_id = $1 AND t.id = ANY($2::bigint[])`,
};

/** A row of viewSelectSql. */
export interface TransactionViewRow extends ViewRow {
  booking_list: BookingRow[];
  payment_id_list: string;
  adjustment_id_list: string;
  has_allocations: boolean;
}

/** `{1,2,3}` (a bigint array as text, parsed here once instead of by pg's string array parser). */
function idList(text: string): number[] {
  return text === '{}' ? [] : text.slice(1, -1).split(',').map(Number);
}

/** The wire objects of `ids` (of one site), in the order of `ids`; unknown ids are skipped. */
export async function loadTransactionViews(db: Queryable, config: Config, siteId: number, ids: number[]): Promise<TransactionJson[]> {
  if (ids.length === 0) return [];
  const views = await viewsOfRows(db, config, await db.query<TransactionViewRow & Record<string, unknown>>(viewStatement, [siteId, ids]));
  return ids.flatMap((id) => views.get(id) ?? []);
}

/** The wire objects of rows read by viewSelectSql, by id; their allocations read in one more statement when some have any. */
export async function viewsOfRows(db: Queryable, config: Config, rows: readonly TransactionViewRow[]): Promise<Map<number, TransactionJson>> {
  // Allocations (issue 4): arrays in every response (docs/allocations.md).
  const allocated = rows.filter((row) => row.has_allocations).map((row) => row.id);
  const allocations = allocated.length > 0 ? await loadAllocationJson(db, allocated) : new Map<number, AllocationJson[]>();
  return new Map(rows.map((row) => [
    row.id,
    toJson(row, config, {
      bookings: row.booking_list,
      paymentIds: idList(row.payment_id_list),
      adjustments: idList(row.adjustment_id_list),
      allocations: allocations.get(row.id) ?? [],
    }),
  ]));
}

function toJson(row: ViewRow, config: Config, related: { bookings: BookingRow[]; paymentIds: number[]; adjustments: number[]; allocations: AllocationJson[] }): TransactionJson {
  const created = gmtDateTime(row.created_at);
  const currency = row.currency.trim();
  const self = `${config.baseUrl}/${row.site_path}/site-json/vendor/v2/transactions/${row.id}`;
  const collection = `${config.baseUrl}/${row.site_path}/site-json/vendor/v2/transactions`;
  const first = related.bookings[0];
  const title = `${first ? bookingTitle({ siteId: first.site_id, id: first.id, surname: first.surname, email: first.email }) : `${row.site_id}-${row.id}`} | ${row.type}`;
  const hashKey = row.channel_secret || serverHashKey(config.secrets.signingSecret);
  const pendingChallenge = row.status === 'pending' && row.challenge_url ? row.challenge_url : null;
  return {
    id: row.id,
    uuid: row.uuid,
    trust_id: `${row.site_id}-${row.id}`,
    author: row.author_id,
    author_id: row.author_id,
    authorname: row.author_name ?? 'operator',
    status: row.status,
    created,
    modified: gmtDateTime(row.modified_at),
    title,
    total_remaining: row.total_remaining,
    card_type: row.card_brand,
    card_types: row.card_brand,
    statement_date: row.statement_date,
    last_four_digits: row.last_four,
    // Forex (issue 4, docs/forex.md).
    ...forexJson({
      forexQuoteId: row.forex_quote_id,
      forexRate: row.forex_rate === null ? null : formatDecimal(parseDecimal(row.forex_rate)),
      channelCurrency: row.channel_currency?.trim() ?? null,
      channelTotal: row.channel_total,
    }),
    payment_ids: related.paymentIds,
    adjustments: related.adjustments,
    content: row.content,
    language: row.language,
    channels: row.channel_id,
    currencies: currency,
    total: row.total,
    transaction_type: row.type,
    transaction_types: row.type,
    allocations: related.allocations,
    bookings: related.bookings.map((booking) => ({
      id: booking.id,
      total: booking.total,
      reference: booking.reference,
      country: booking.country.trim(),
      channels: String(booking.channel_id),
      currencies: booking.currency.trim(),
    })),
    psp: row.psp,
    payment_methods: row.payment_method,
    payee_name: row.payee_name,
    payee_surname: row.payee_surname,
    payee_email: row.payee_email,
    countries: row.country?.trim() ?? null,
    issuer_countries: row.issuer_country?.trim() ?? null,
    token: row.token,
    ip_address: row.ip_address,
    bin_number: row.bin_number,
    attempt_3ds: row.attempt_3ds,
    redirect_url: row.redirect_url,
    linked_id: row.linked_id,
    auth_code: row.auth_code,
    hash: transactionHash({ id: row.id, status: row.status, total: row.total, created }, hashKey),
    '3ds_response': row.attempt_3ds ? { status: row.three_ds_status ?? 'not_attempted', challenge_url: pendingChallenge } : null,
    api_urls: { self, collection },
    statement_batches: [],
    _links: {
      self: [{ href: self }],
      collection: [{ href: collection }],
      ...(pendingChallenge ? { challenge: [{ href: pendingChallenge }] } : {}),
    },
  };
}

