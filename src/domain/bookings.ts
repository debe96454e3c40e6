import type { Queryable } from '../storage/db.js';
import { loadChannel } from './channels.js';
import { deriveBookingStatus, type BookingStatus } from './booking-status.js';
import { countryCodeProblem, isCountryCode } from './reference-data.js';
import { calendarDateProblem, gmtDateTime, gmtDateTimeOfJson } from './gmt.js';
import { canonicalText } from './text.js';
import { limits } from '../limits.js';

/**
 * Bookings: what a traveller buys and transactions pay for. Plain functions over the database;
 * expected refusals come back as values keyed by the wire parameter they concern, so the route
 * can answer the spec's `rest_invalid_param` with `data.params`.
 */

export interface BookingInput {
  firstname: string;
  surname: string;
  email: string;
  /** End date, `YYYY-MM-DD`. */
  dateEnd: string;
  dateStart?: string | null;
  pax?: number | null;
  reference?: string;
  content?: string;
  total: number;
  currency: string;
  country: string;
  channelId: number;
  language?: string;
  suppliers?: string[];
}

export type BookingPatch = Partial<BookingInput>;

export interface BookingRecord {
  id: number;
  siteId: number;
  uuid: string;
  channelId: number;
  authorId: number;
  authorUsername: string;
  authorName: string;
  /** As stored; show currentBookingStatus(...) of it. */
  status: BookingStatus;
  content: string;
  firstname: string;
  surname: string;
  email: string;
  dateEnd: string;
  dateStart: string | null;
  pax: number | null;
  reference: string;
  total: number;
  currency: string;
  country: string;
  language: string;
  suppliers: string[];
  totalPaid: number;
  totalAuthorized: number;
  transactionIds: number[];
  /** GMT `YYYY-MM-DD HH:MM:SS` (gmtDateTime): the only use of the timestamps is the answer. */
  created: string;
  modified: string;
}

/** Refusal of an input, keyed by wire parameter name (`channels`, `total`, ...). */
export interface BookingRefusal {
  params: Record<string, string>;
}

export const bookingSelect = `b.*, u.username AS author_username, u.display_name AS author_name`;
export const bookingFrom = 'bookings b JOIN users u ON u.id = b.author_id';

export interface BookingRow {
  [column: string]: unknown;
  id: number;
  site_id: number;
  uuid: string;
  channel_id: number;
  author_id: number;
  author_username: string;
  author_name: string;
  status: BookingStatus;
  content: string;
  firstname: string;
  surname: string;
  email: string;
  date_end: string;
  date_start: string | null;
  pax: number | null;
  reference: string;
  total: number;
  currency: string;
  country: string;
  language: string;
  suppliers: string[];
  total_paid: number;
  total_authorized: number;
  transaction_ids: number[];
  created_at: Date;
  modified_at: Date;
}

/** BookingRow's named columns (Omit of a type with an index signature would keep only the signature). */
type BookingColumns = { [K in keyof BookingRow as string extends K ? never : K]: BookingRow[K] };

export function bookingFromRow(row: BookingRow): BookingRecord {
  return bookingFromColumns(row, row, gmtDateTime(row.created_at), gmtDateTime(row.modified_at));
}

/** The columns both row forms share (the table's, less its timestamps). */
type BookingTableColumns = Omit<BookingColumns, 'author_username' | 'author_name' | 'created_at' | 'modified_at'>;

// Property by property: a spread of a 28-property row costs several microseconds (issue 7).
function bookingFromColumns(row: BookingTableColumns, author: Pick<BookingColumns, 'author_username' | 'author_name'>, created: string, modified: string): BookingRecord {
  return {
    id: row.id,
    siteId: row.site_id,
    uuid: row.uuid,
    channelId: row.channel_id,
    authorId: row.author_id,
    authorUsername: author.author_username,
    authorName: author.author_name,
    status: row.status,
    content: row.content,
    firstname: row.firstname,
    surname: row.surname,
    email: row.email,
    dateEnd: row.date_end,
    dateStart: row.date_start,
    pax: row.pax,
    reference: row.reference,
    total: row.total,
    currency: row.currency,
    country: row.country,
    language: row.language,
    suppliers: row.suppliers,
    totalPaid: row.total_paid,
    totalAuthorized: row.total_authorized,
    transactionIds: row.transaction_ids,
    created,
    modified,
  };
}

/**
 * The booking's table row as one JSON value (`to_json(b)`), for hot single-booking reads: the API
 * process parses one JSON value far more cheaply than 28 typed columns (issue 7). Timestamps
 * arrive as ISO 8601 text, bigints as JSON numbers. Without the author's names: GET booking has
 * them from AuthorNameMemory (src/domain/users/author-names.ts), with no join on users.
 */
export const bookingJsonSelect = 'to_json(b) AS booking';

export type BookingJson = BookingTableColumns & { created_at: string; modified_at: string };

export interface BookingJsonRow {
  [column: string]: unknown;
  booking: BookingJson;
}

export function bookingFromJsonRow(row: BookingJsonRow, author: Pick<BookingColumns, 'author_username' | 'author_name'>): BookingRecord {
  const { booking } = row;
  return bookingFromColumns(booking, author, gmtDateTimeOfJson(booking.created_at), gmtDateTimeOfJson(booking.modified_at));
}

/** `<site_id>-<id>`, the booking ID prefixed with the site ID. */
export function bookingTrustId(booking: Pick<BookingRecord, 'siteId' | 'id'>): string {
  return `${booking.siteId}-${booking.id}`;
}

/** The generated title: `<trust_id> | <surname> | <email>`. */
export function bookingTitle(booking: Pick<BookingRecord, 'siteId' | 'id' | 'surname' | 'email'>): string {
  return `${bookingTrustId(booking)} | ${booking.surname} | ${booking.email}`;
}

/** Money still owed: total less captured money, never negative. */
export function bookingTotalUnpaid(booking: Pick<BookingRecord, 'total' | 'totalPaid'>): number {
  return Math.max(0, booking.total - booking.totalPaid);
}

const loadBookingSql = `SELECT ${bookingSelect} FROM ${bookingFrom} WHERE b.id = $1 AND b.site_id = $2 AND b.deleted_at IS NULL`;
const loadBookingStatement = { name: 'booking_by_id', text: loadBookingSql };
const loadBookingForUpdateStatement = { name: 'booking_by_id_for_update', text: `${loadBookingSql} FOR UPDATE OF b` };

/** A live booking of the site, or undefined; `lock: 'update'` inside a transaction. */
export async function loadBooking(db: Queryable, options: { siteId: number; id: number; lock?: 'update' }): Promise<BookingRecord | undefined> {
  if (!Number.isSafeInteger(options.id)) return undefined;
  // Named statements (bench, issue 7): GET bookings/{id} is a hot path; PostgreSQL parses and
  // plans each once per connection instead of once per request.
  const statement = options.lock === 'update' ? loadBookingForUpdateStatement : loadBookingStatement;
  const row = await db.maybeOne<BookingRow>(statement as never, [options.id, options.siteId]);
  return row ? bookingFromRow(row) : undefined;
}

/** Why a booking's date is not a real calendar date `YYYY-MM-DD` from the bound (the schema checks the shape, this the calendar and the bound). */
function bookingDateProblem(text: string): string | null {
  return calendarDateProblem(text, limits.bookingDateYearMin);
}

/**
 * The refusal of a booking in another currency than its channel's base currency, keyed by
 * `channels` as the spec's example of an invalid booking parameter: POST and PUT bookings, and the
 * payment modal's booking_error (its `currencies` is the booking's).
 */
export function currencyMismatch(bookingCurrency: string, channelCurrency: string): string {
  return `The booking currency (${bookingCurrency}) must match the channel base currency (${channelCurrency}).`;
}

/**
 * The checks that need no database: a known country, real dates in order. Dates out of order are
 * blamed on `date_start`, unless `orderOn` names `date`: a PUT that sent only `date` and moved it
 * before the stored start date (the client sent no `date_start`, and must be told of the field it did send).
 */
function refuseShape(booking: BookingInput, orderOn: 'date' | 'date_start' = 'date_start'): Record<string, string> {
  const params: Record<string, string> = {};
  if (!isCountryCode(booking.country)) params.countries = countryCodeProblem;
  const endProblem = bookingDateProblem(booking.dateEnd);
  if (endProblem) params.date = endProblem;
  if (booking.dateStart != null) {
    const startProblem = bookingDateProblem(booking.dateStart);
    if (startProblem) params.date_start = startProblem;
    // Against a real end date only: beside an invalid one the order says nothing.
    else if (!params.date && booking.dateStart > booking.dateEnd) {
      if (orderOn === 'date') params.date = `must not be before the start date (date_start, ${booking.dateStart})`;
      else params.date_start = 'must not be after the end date (date)';
    }
  }
  return params;
}

/**
 * Checks the parts of a booking the schema cannot: real dates in order, a live channel of the
 * same site whose base currency is the booking currency, and known suppliers. The channel row is
 * key-share-locked: channel updates and deletions lock it FOR UPDATE (which conflicts) and then
 * look for bookings, so it cannot be deleted or re-currencied under the booking, while bookings
 * of one channel (and payments, which only take weaker locks) do not wait for each other.
 */
/**
 * `joinsChannel`: the booking is new to its channel (a create, or a move); false keeps a booking
 * where it is. `orderOn`: the field refuseShape blames for dates out of order.
 */
async function refuseInvalid(
  tx: Queryable, siteId: number, booking: BookingInput, options: { joinsChannel?: boolean; orderOn?: 'date' | 'date_start' } = {},
): Promise<BookingRefusal | null> {
  const { joinsChannel = true } = options;
  const params = refuseShape(booking, options.orderOn);
  const channel = await loadChannel(tx, { siteId, id: booking.channelId, lock: 'key share' });
  if (!channel) params.channels = 'Invalid channel ID.';
  // A closed channel takes no payments (prepare.ts), so no new bookings to be paid through it
  // either; one it already holds can still be corrected.
  else if (joinsChannel && channel.accountMode === 'closed') params.channels = 'The channel is closed and takes no new bookings.';
  else if (channel.currency !== booking.currency) params.channels = currencyMismatch(booking.currency, channel.currency);
  const suppliers = booking.suppliers ?? [];
  if (suppliers.length > 0) {
    const known = await tx.query<{ id: string }>('SELECT id FROM suppliers WHERE id = ANY($1::text[])', [suppliers]);
    const missing = suppliers.filter((id) => !known.some((row) => row.id === id));
    if (missing.length > 0) params.suppliers = `Unknown supplier ID(s): ${missing.join(', ')}`;
  }
  return Object.keys(params).length > 0 ? { params } : null;
}

/**
 * The whole create in one statement (one round trip, atomic on its own): the row is inserted
 * only when the channel is one of the site's, neither deleted nor closed, in the booking's currency
 * (key-share-locked as in refuseInvalid; under READ COMMITTED a concurrent channel update is waited
 * for and its new version re-checked) and every supplier exists; it answers the booking as
 * loadBooking does.
 */
const insertBookingStatement = {
  name: 'booking_insert',
  text: `WITH inserted AS (
           INSERT INTO bookings (site_id, channel_id, author_id, status, content, firstname, surname, email, date_end, date_start, pax, reference, total, currency, country, language, suppliers)
           SELECT c.site_id, c.id, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, c.currency, $15, coalesce($16::text, c.language), $17::text[]
             FROM channels c
            WHERE c.id = $2 AND c.site_id = $1 AND c.deleted_at IS NULL AND c.currency = $14::text AND c.account_mode <> 'closed'
              AND (SELECT count(*) FROM suppliers WHERE id = ANY($17::text[])) = cardinality($17::text[])
              FOR KEY SHARE OF c
           RETURNING *)
         SELECT ${bookingSelect.replaceAll('b.', 'inserted.')} FROM inserted JOIN users u ON u.id = inserted.author_id`,
};

/** Inserts and reads back in one statement, or undefined when a check of insertBookingStatement failed. */
async function insertBooking(db: Queryable, options: { siteId: number; authorId: number; input: BookingInput & { suppliers: string[] }; draft?: boolean }): Promise<BookingRecord | undefined> {
  const { input } = options;
  const row = await db.maybeOne<BookingRow>(insertBookingStatement, [
    options.siteId, input.channelId, options.authorId, options.draft ? 'draft' : 'unpaid', input.content ?? '', input.firstname, input.surname, input.email,
    input.dateEnd, input.dateStart ?? null, input.pax ?? null, input.reference ?? '', input.total, input.currency, input.country,
    // Without one, the channel's "default mail receipt language" (spec), itself enGB by default:
    // the booking's language is what its receipts fall back to (docs/emails.md).
    input.language ?? null, input.suppliers,
  ]);
  return row ? bookingFromRow(row) : undefined;
}

/**
 * Creates an unpaid booking (or a draft, for the payment modal): one statement, so `db` may be
 * the pool or the caller's transaction. A refused insert is explained by refuseInvalid; when that
 * finds nothing wrong, the channel changed in between and the insert is tried once more.
 */
export async function createBooking(db: Queryable, options: { siteId: number; authorId: number; input: BookingInput; draft?: boolean }): Promise<BookingRecord | BookingRefusal> {
  const input = { ...inCanonicalText(options.input), suppliers: [...new Set(options.input.suppliers ?? [])] };
  const attemptsMax = 2;
  for (let attempt = 1; attempt <= attemptsMax; attempt++) {
    if (!Number.isSafeInteger(input.channelId) || Object.keys(refuseShape(input)).length > 0) break;
    const created = await insertBooking(db, { ...options, input });
    if (created) return created;
    const refusal = await refuseInvalid(db, options.siteId, input);
    if (refusal) return refusal;
  }
  return (await refuseInvalid(db, options.siteId, input)) ?? { params: { channels: 'The channel changed during the request; try again.' } };
}

/** The text fields the bookings list filters on exactly (and the first name beside the surname), kept in NFC. */
const canonicalFields = ['firstname', 'surname', 'email', 'reference'] as const;

/** A copy of `input` with its canonicalFields in NFC (text.ts canonicalText). */
function inCanonicalText<T extends BookingPatch>(input: T): T {
  const result = { ...input };
  for (const field of canonicalFields) {
    const value = result[field];
    if (value !== undefined) result[field] = canonicalText(value) as T[typeof field];
  }
  return result;
}

const patchColumns: { [K in keyof BookingPatch]-?: string } = {
  firstname: 'firstname',
  surname: 'surname',
  email: 'email',
  dateEnd: 'date_end',
  dateStart: 'date_start',
  pax: 'pax',
  reference: 'reference',
  content: 'content',
  total: 'total',
  currency: 'currency',
  country: 'country',
  channelId: 'channel_id',
  language: 'language',
  suppliers: 'suppliers',
};

/** Types whose money adds to what a booking holds (a capture only converts an authorisation). */
export const fundingTypes: readonly string[] = ['purchase', 'authorize', 'retained_purchase', 'retained_authorize'];

/**
 * SQL: a one-row subquery over booking `booking`'s (an alias) shares, in one scan, of the money
 * that is not on the booking's settled columns (total_paid, total_authorized) yet may still land
 * there, `types` a text[] parameter holding fundingTypes:
 * - `in_flight`: funding attempts still in flight (`incomplete`, or `pending` a 3DS challenge);
 * - `disputed`: what chargebacks took and have not closed (their shares' remaining amounts). A
 *   reversal (dispute won) gives it back to total_paid; an override (dispute lost for good)
 *   closes it, and from then on it is the cardholder's and counts no more.
 */
function fundingUnsettledSql(booking: string, types: string): string {
  return `(SELECT coalesce(sum(tb.total) FILTER (WHERE t.status IN ('incomplete', 'pending') AND t.type = ANY(${types}::text[])), 0) AS in_flight,
                  coalesce(sum(tb.total_remaining) FILTER (WHERE t.type = 'chargeback'), 0) AS disputed
             FROM transaction_bookings tb JOIN transactions t ON t.id = tb.transaction_id
            WHERE tb.booking_id = ${booking}.id)`;
}

/**
 * SQL: the money that is, or may still be, on booking `booking` (an alias): settled (paid,
 * authorised) plus fundingUnsettledSql. The one sum each place that holds a booking's total
 * against its money counts (a new funding attempt, recordAttempts; a lower total, updateBooking;
 * spec Limits: the total is never below the linked transactions), so neither a second payment nor
 * a lower total can leave the booking paid above its total once a payment in flight settles or a
 * disputed one is reversed. Read it after the booking's lock is held: a later statement sees what
 * the lock's previous holder committed.
 */
export function fundingHeldSql(booking: string, types: string): string {
  return `(${booking}.total_paid + ${booking}.total_authorized + (SELECT unsettled.in_flight + unsettled.disputed FROM ${fundingUnsettledSql(booking, types)} unsettled))`;
}

/** A booking's money as fundingHeldSql counts it (`held`), with its unsettled parts named. */
export interface BookingFunding {
  total: number;
  held: number;
  inFlight: number;
  disputed: number;
}

// The parts again beside the sum: for the words of a refusal, and for the pages that say why
// nothing can be paid (a PUT of a total, a page shown, a modal opened: not the payment hot path).
const bookingFundingStatement = {
  name: 'booking_funding_held',
  text: `SELECT b.total, ${fundingHeldSql('b', '$2')}::bigint AS held, unsettled.in_flight::bigint AS in_flight, unsettled.disputed::bigint AS disputed
           FROM bookings b CROSS JOIN LATERAL ${fundingUnsettledSql('b', '$2')} unsettled WHERE b.id = $1`,
};

export async function loadBookingFunding(db: Queryable, bookingId: number): Promise<BookingFunding> {
  const row = await db.one<{ total: number; held: number; in_flight: number; disputed: number }>(bookingFundingStatement, [bookingId, fundingTypes]);
  return { total: row.total, held: row.held, inFlight: row.in_flight, disputed: row.disputed };
}

/**
 * What can still be paid on the booking now: its total less fundingHeldSql's sum (paid,
 * authorised, in flight, under an open chargeback), never negative. The one amount a payment
 * page may offer and the modal may open for, as a new payment above it is refused
 * (recordAttempts). `total_unpaid`, the spec's field, stays total less captured money: it says
 * what the booking is owed, not what a card may be charged for it at this moment.
 */
export function payableNow(funding: Pick<BookingFunding, 'total' | 'held'>): number {
  return Math.max(0, funding.total - funding.held);
}

/**
 * Why a booking owed money takes no payment now: the pages and the modal say which, in the payer's
 * language. `not_online`: its channel takes no payments (closed or locked).
 */
export type NothingPayableReason = 'paid' | 'disputed' | 'in_progress' | 'held' | 'not_online';

/**
 * Why nothing can be paid on the booking now, or null when something can (or it is owed nothing,
 * a zero total). Fully paid first; then money under an open chargeback (for the company and the
 * payer's bank to settle, not a second payment), a payment still being processed, and otherwise
 * authorisations holding the rest.
 */
export function nothingPayableReason(booking: Pick<BookingRecord, 'total' | 'totalPaid'>, funding: BookingFunding): NothingPayableReason | null {
  if (booking.total <= 0 || payableNow(funding) > 0) return null;
  if (bookingTotalUnpaid(booking) <= 0) return 'paid';
  if (funding.disputed > 0) return 'disputed';
  return funding.inFlight > 0 ? 'in_progress' : 'held';
}

/** What payableNow leaves out, in the words of every refusal of an amount above it. */
export const payableNowExplained = 'its total less the money paid, authorised, in payments still being processed or under an open chargeback';

/** Why a total below `held` is refused, naming the money not settled yet. */
function totalBelowHeldMessage(funding: BookingFunding): string {
  const parts = [
    funding.inFlight > 0 ? `${funding.inFlight} in payments still being processed` : null,
    funding.disputed > 0 ? `${funding.disputed} under an open chargeback` : null,
  ].filter((part): part is string => part !== null);
  return parts.length > 0
    ? `The total cannot be less than the money linked to the booking (${funding.held}, of which ${parts.join(' and ')}).`
    : `The total cannot be less than the money already linked to the booking (${funding.held}).`;
}

/**
 * Applies a patch inside the caller's transaction, with the booking row locked against the
 * payments code. The total may not drop below the money linked to the booking (fundingHeldSql:
 * captured, authorised, attempted by payments still in flight, disputed), a booking with
 * transactions stays on its channel, and the status is re-derived.
 */
export async function updateBooking(tx: Queryable, options: { siteId: number; id: number; patch: BookingPatch; today: string }): Promise<BookingRecord | BookingRefusal | undefined> {
  const current = await loadBooking(tx, { siteId: options.siteId, id: options.id, lock: 'update' });
  if (!current) return undefined;
  const patch: BookingPatch = inCanonicalText(options.patch);
  if (patch.suppliers) patch.suppliers = [...new Set(patch.suppliers)];
  const next: BookingInput = {
    firstname: patch.firstname ?? current.firstname,
    surname: patch.surname ?? current.surname,
    email: patch.email ?? current.email,
    dateEnd: patch.dateEnd ?? current.dateEnd,
    dateStart: patch.dateStart === undefined ? current.dateStart : patch.dateStart,
    total: patch.total ?? current.total,
    currency: patch.currency ?? current.currency,
    country: patch.country ?? current.country,
    channelId: patch.channelId ?? current.channelId,
    suppliers: patch.suppliers ?? [],
  };
  // Dates out of order are blamed on the one the client sent: `date` when it sent only that.
  const orderOn = patch.dateEnd !== undefined && patch.dateStart === undefined ? 'date' : 'date_start';
  const refusal = (await refuseInvalid(tx, options.siteId, next, { joinsChannel: next.channelId !== current.channelId, orderOn })) ?? { params: {} };
  if (patch.total !== undefined) {
    const funding = await loadBookingFunding(tx, current.id);
    if (next.total < funding.held) refusal.params.total = totalBelowHeldMessage(funding);
  }
  if (next.channelId !== current.channelId && current.transactionIds.length > 0) refusal.params.channels = 'A booking with transactions cannot move to another channel.';
  if (Object.keys(refusal.params).length > 0) return refusal;

  const status = deriveBookingStatus({
    total: next.total,
    totalPaid: current.totalPaid,
    totalAuthorized: current.totalAuthorized,
    // Locks come from chargebacks, which only the payments code records; a PUT keeps them.
    hasLockedTransaction: current.status === 'locked',
    dateEnd: next.dateEnd,
    today: options.today,
    isDraft: current.status === 'draft',
  });
  const sets: string[] = ['status = $2'];
  const values: unknown[] = [current.id, status];
  for (const [key, column] of Object.entries(patchColumns) as [keyof BookingPatch, string][]) {
    if (patch[key] === undefined) continue;
    values.push(patch[key]);
    sets.push(`${column} = $${values.length}`);
  }
  await tx.query(`UPDATE bookings SET ${sets.join(', ')}, modified_at = now() WHERE id = $1`, values);
  return (await loadBooking(tx, { siteId: options.siteId, id: options.id }))!;
}

export type BookingDeleteResult = 'deleted' | 'not_found' | 'has_transactions';

/** Soft-deletes a booking; refused once any transaction was attempted against it. */
export async function deleteBooking(tx: Queryable, options: { siteId: number; id: number }): Promise<BookingDeleteResult> {
  const current = await loadBooking(tx, { ...options, lock: 'update' });
  if (!current) return 'not_found';
  if (current.transactionIds.length > 0) return 'has_transactions';
  await tx.query('UPDATE bookings SET deleted_at = now(), modified_at = now() WHERE id = $1', [current.id]);
  return 'deleted';
}
