import { pickedBy } from '../../storage/batches.js';
import type { Queryable } from '../../storage/db.js';
import { checkEntriesReadBack, entriesInsertSql, entryParameters, type EntryReadBack, type Posting } from '../ledger/postings.js';
import { mailRequestSql } from '../emails/outbox.js';
import { bookingMoneyParameters, bookingMoneySql, lockBookingsSql, type BookingMoneyUpdate, type LockedBooking } from './bookings.js';
import type { TransactionStatus } from './states.js';
import { noPaymentsReason, noPaymentsStatuses } from '../channels.js';
import { IdempotencyKeyTakenError, type TransactionRecord, type TransactionSource, type TransactionType } from './types.js';
import { viewSelectSql, type TransactionViewRow } from './view.js';

/** Storage of transaction rows and their booking shares; no rules here, only SQL. */

export const transactionColumns = `id, site_id, uuid, channel_id, author_id, source, type, status, total, currency, total_remaining, reserved_total,
  linked_id, card_id, token, processor_reference, auth_code, content, decline_code, language, attempt_3ds, redirect_url, three_ds_status,
  challenge_url, lookup_attempts, created_at, modified_at`;

interface TransactionRow {
  id: number;
  site_id: number;
  uuid: string;
  channel_id: number;
  author_id: number | null;
  source: TransactionSource;
  type: TransactionType;
  status: TransactionStatus;
  total: number;
  currency: string;
  total_remaining: number;
  reserved_total: number;
  linked_id: number | null;
  card_id: number | null;
  token: string | null;
  processor_reference: string | null;
  auth_code: string | null;
  content: string;
  decline_code: string | null;
  language: string;
  attempt_3ds: boolean;
  redirect_url: string | null;
  three_ds_status: string | null;
  challenge_url: string | null;
  lookup_attempts: number;
  created_at: Date;
  modified_at: Date;
}

export function toRecord(row: TransactionRow): TransactionRecord {
  return {
    id: row.id,
    siteId: row.site_id,
    uuid: row.uuid,
    channelId: row.channel_id,
    authorId: row.author_id,
    source: row.source,
    type: row.type,
    status: row.status,
    total: row.total,
    currency: row.currency.trim(),
    totalRemaining: row.total_remaining,
    reservedTotal: row.reserved_total,
    linkedId: row.linked_id,
    cardId: row.card_id,
    token: row.token,
    processorReference: row.processor_reference,
    authCode: row.auth_code,
    content: row.content,
    declineCode: row.decline_code,
    language: row.language,
    attempt3ds: row.attempt_3ds,
    redirectUrl: row.redirect_url,
    threeDsStatus: row.three_ds_status,
    challengeUrl: row.challenge_url,
    lookupAttempts: row.lookup_attempts,
    createdAt: row.created_at,
    modifiedAt: row.modified_at,
  };
}

/** One row of the site, optionally locked (`FOR NO KEY UPDATE`: children and entries referencing it can still be inserted) inside the caller's transaction. */
export async function findTransaction(db: Queryable, options: { siteId: number; id: number; lock?: boolean }): Promise<TransactionRecord | undefined> {
  if (!Number.isSafeInteger(options.id)) return undefined;
  const row = await db.maybeOne<TransactionRow & Record<string, unknown>>(
    `SELECT ${transactionColumns} FROM transactions WHERE id = $1 AND site_id = $2 ${options.lock ? 'FOR NO KEY UPDATE' : ''}`,
    [options.id, options.siteId],
  );
  return row ? toRecord(row) : undefined;
}

/** By id without a site (jobs, which work across sites), locked, skipping rows another worker holds. */
export async function lockTransactionForJob(tx: Queryable, id: number): Promise<TransactionRecord | undefined> {
  const row = await tx.maybeOne<TransactionRow & Record<string, unknown>>(`SELECT ${transactionColumns} FROM transactions WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED`, [id]);
  return row ? toRecord(row) : undefined;
}

export async function findTransactionByUuid(db: Queryable, uuid: string): Promise<TransactionRecord | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(uuid)) return undefined;
  const row = await db.maybeOne<TransactionRow & Record<string, unknown>>(`SELECT ${transactionColumns} FROM transactions WHERE uuid = $1`, [uuid]);
  return row ? toRecord(row) : undefined;
}

export interface BookingShare {
  bookingId: number;
  total: number;
  /** Of this share: still refundable / capturable / reversible. */
  totalRemaining: number;
}

export async function bookingShares(db: Queryable, transactionId: number): Promise<BookingShare[]> {
  const rows = await db.query<{ booking_id: number; total: number; total_remaining: number }>(
    'SELECT booking_id, total, total_remaining FROM transaction_bookings WHERE transaction_id = $1 ORDER BY position',
    [transactionId],
  );
  return rows.map((row) => ({ bookingId: row.booking_id, total: row.total, totalRemaining: row.total_remaining }));
}

/** Adds `delta` (may be negative) to the remaining amount of each named share of a transaction. */
export async function adjustShares(tx: Queryable, transactionId: number, deltas: { bookingId: number; delta: number }[]): Promise<void> {
  const changed = deltas.filter((item) => item.delta !== 0);
  if (changed.length === 0) return;
  await tx.query(
    `UPDATE transaction_bookings tb SET total_remaining = tb.total_remaining + d.delta
       FROM unnest($2::bigint[], $3::bigint[]) AS d(booking_id, delta)
      WHERE tb.transaction_id = $1 AND tb.booking_id = d.booking_id`,
    [transactionId, changed.map((item) => item.bookingId), changed.map((item) => item.delta)],
  );
}

/** What a new row needs: the record's own columns it starts with, plus the request's details. */
export interface NewTransactionRow
  extends Pick<
    TransactionRecord,
    'siteId' | 'channelId' | 'authorId' | 'source' | 'type' | 'status' | 'total' | 'currency' | 'totalRemaining' | 'reservedTotal' | 'linkedId' | 'cardId' | 'token' | 'content' | 'language' | 'attempt3ds' | 'redirectUrl' | 'createdAt'
  > {
  psp: string | null;
  paymentMethod: string | null;
  payeeName: string | null;
  payeeSurname: string | null;
  payeeEmail: string | null;
  country: string | null;
  ipAddress: string | null;
  statementDate: string;
  cardBrand: string | null;
  binNumber: string | null;
  lastFour: string | null;
  issuerCountry: string | null;
  shares: { bookingId: number; total: number; totalRemaining: number }[];
}

/** The columns a new row is written with, as `NewTransactionRow` names them (modified_at is created_at). */
const insertedColumns: [column: string, value: (row: NewTransactionRow) => unknown][] = [
  ['site_id', (row) => row.siteId], ['channel_id', (row) => row.channelId], ['author_id', (row) => row.authorId], ['source', (row) => row.source],
  ['type', (row) => row.type], ['status', (row) => row.status], ['total', (row) => row.total], ['currency', (row) => row.currency],
  ['total_remaining', (row) => row.totalRemaining], ['reserved_total', (row) => row.reservedTotal], ['linked_id', (row) => row.linkedId],
  ['card_id', (row) => row.cardId], ['token', (row) => row.token], ['content', (row) => row.content], ['psp', (row) => row.psp],
  ['payment_method', (row) => row.paymentMethod], ['payee_name', (row) => row.payeeName], ['payee_surname', (row) => row.payeeSurname],
  ['payee_email', (row) => row.payeeEmail], ['country', (row) => row.country], ['ip_address', (row) => row.ipAddress], ['language', (row) => row.language],
  ['statement_date', (row) => row.statementDate], ['card_brand', (row) => row.cardBrand], ['bin_number', (row) => row.binNumber],
  ['last_four', (row) => row.lastFour], ['issuer_country', (row) => row.issuerCountry], ['attempt_3ds', (row) => row.attempt3ds],
  ['redirect_url', (row) => row.redirectUrl], ['created_at', (row) => row.createdAt],
];
const insertedColumnList = insertedColumns.map(([column]) => column).join(', ');

/**
 * Inserts new rows with their booking shares, claiming each row's Idempotency-Key, in one
 * statement whatever the number of rows (issue 7: the attempts of concurrent requests are written
 * together, docs/performance-history.md "Batching across requests"):
 *  - `input` gives each row (a JSON array typed by the table's own row type) its id up front,
 *    so a key can be claimed before its row exists;
 *  - `kept` keeps the rows whose channel is still as their payment read it (`channel`: not
 *    deleted, same currency and account mode), key-share-locking it until the attempt commits, as
 *    a booking's insert does (insertBookingStatement). A change of the channel locks its row FOR
 *    UPDATE first (updateChannel, deleteChannel, `channel set`): one committed since the read is
 *    seen here; one in progress is waited for and, under READ COMMITTED, its new version checked
 *    again; one arriving later waits for this attempt's commit and then finds its money
 *    (hasMoneyHistory). Without it a PUT committed between a payment's read and this insert had
 *    found no money yet, and the payment was recorded in the old currency, or as test money on a
 *    live channel (docs/payments.md "A channel changed under a payment");
 *  - `open_kept` keeps of those the rows that take no new money (a refund or a void, `$13`) and the
 *    rows whose channel still takes it (`channel_status` not one noPaymentsReason stops), read from
 *    the same locked version: a channel closed or locked by the operator (`channel set`) since the
 *    read refuses the payments the read would have refused, and only them. Both carry ids only
 *    (what is written is read from `input` again), so a batch's rows are not copied twice more;
 *  - `claim` claims the keys of the open_kept rows; a key another request holds is skipped (ON
 *    CONFLICT DO NOTHING);
 *  - only the open_kept rows whose key was claimed (or that have none) are inserted, with their shares:
 *    a refused row leaves its batch-mates standing, and nothing of its own is written;
 *  - `locked` locks the named bookings in id order (`FOR NO KEY UPDATE`, as
 *    `bookings_lock_for_payment`), so the attempt's booking update needs no round trip of its own.
 * One result row per row given, its columns null when it was not inserted, `channel_kept` and the
 * kept row's channel status as locked (`channel_status_now`: why a row not open_kept was refused).
 * Parameters: $1 rows; $2-$4 claims (row ordinal, key, request hash); $5-$9 shares (row ordinal,
 * booking, total, remaining, position); $10 bookings to lock; $11-$12 each row's channel currency
 * and account mode as read (null: not checked); $13 whether each row takes new money.
 */
const insertStatement = {
  name: 'transaction_insert',
  text: `WITH input AS MATERIALIZED (
           SELECT nextval('transactions_id_seq') AS id, r.ordinality, ${insertedColumns.map(([column]) => `r.${column}`).join(', ')}
             FROM json_populate_recordset(null::transactions, $1::json) WITH ORDINALITY AS r
         ), kept AS MATERIALIZED (
           SELECT i.id, i.ordinality, e.takes_new_money, c.channel_status AS channel_status_now FROM input i
             JOIN unnest($11::text[], $12::text[], $13::boolean[]) WITH ORDINALITY AS e(currency, account_mode, takes_new_money, ordinality) ON e.ordinality = i.ordinality
             JOIN channels c ON c.id = i.channel_id AND ${pickedBy('c.id', 'SELECT channel_id FROM input')}
            WHERE e.currency IS NULL OR (c.deleted_at IS NULL AND c.currency = e.currency AND c.account_mode = e.account_mode)
              FOR KEY SHARE OF c
         ), open_kept AS (
           SELECT k.id, k.ordinality FROM kept k WHERE NOT (k.takes_new_money AND k.channel_status_now IN (${noPaymentsStatuses.map((status) => `'${status}'`).join(', ')}))
         ), claim AS (
           INSERT INTO idempotency_keys (site_id, key, request_hash, status, transaction_id, created_at)
           SELECT i.site_id, k.key, k.request_hash, 'in_flight', i.id, i.created_at
             FROM unnest($2::bigint[], $3::text[], $4::text[]) AS k(ordinality, key, request_hash) JOIN open_kept o USING (ordinality) JOIN input i USING (id)
           ON CONFLICT (site_id, key) DO NOTHING RETURNING transaction_id
         ), accepted AS (
           SELECT i.* FROM open_kept o JOIN input i USING (id) WHERE o.ordinality <> ALL ($2::bigint[]) OR o.id IN (SELECT transaction_id FROM claim)
         ), inserted AS (
           INSERT INTO transactions (id, ${insertedColumnList}, modified_at)
           SELECT id, ${insertedColumnList}, created_at FROM accepted
           RETURNING ${transactionColumns}
         ), shares AS (
           INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position)
           SELECT a.id, s.booking_id, s.total, s.remaining, s.position
             FROM unnest($5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::integer[]) AS s(ordinality, booking_id, total, remaining, position)
             JOIN accepted a USING (ordinality)
         ), locked AS (${lockBookingsSql('$10')})
         -- The locked bookings once (on the first row), not parsed again for every row of the batch.
         SELECT i.ordinality, k.id IS NOT NULL AS channel_kept, k.channel_status_now, inserted.*,
                CASE WHEN row_number() OVER () = 1 THEN (SELECT json_agg(locked ORDER BY locked.id) FROM locked) END AS locked_bookings
           FROM input i LEFT JOIN kept k ON k.id = i.id LEFT JOIN inserted ON inserted.id = i.id`,
};

/** A row to insert, with the Idempotency-Key to claim for it. */
export interface NewTransaction {
  row: NewTransactionRow;
  idempotency?: { key: string; requestHash: string };
  /**
   * The channel as the payment read it, and whether the payment takes new money: the row is
   * inserted only while the channel is still so, and still takes new money if it does
   * (insertStatement `kept`, `open_kept`).
   */
  channel?: { currency: string; accountMode: string; takesNewMoney: boolean };
}

/**
 * Why a row was not inserted: its Idempotency-Key is another request's, its channel changed since
 * it was read, or its channel was closed or locked since (noPaymentsReason) and it takes new money.
 */
export type NotInserted = 'key_taken' | 'channel_changed' | { noPayments: 'closed' | 'locked' };

/**
 * Inserts the rows (insertStatement). Each result is the stored record, or why nothing of that
 * row was written (NotInserted). With `lockBookings`, those bookings are locked in id order by the
 * same statement and returned in `lockedBookings`.
 */
export async function insertTransactions(
  tx: Queryable, rows: readonly NewTransaction[], options: { lockBookings?: number[] } = {},
): Promise<{ records: (TransactionRecord | NotInserted)[]; lockedBookings: LockedBooking[] }> {
  const claims = rows.flatMap((item, index) => (item.idempotency ? [{ ordinal: index + 1, ...item.idempotency }] : []));
  const shares = rows.flatMap((item, index) => item.row.shares.map((share, position) => ({ ordinal: index + 1, position: position + 1, ...share })));
  const answered = await tx.query<TransactionRow & { ordinality: string; channel_kept: boolean; channel_status_now: string | null; locked_bookings: LockedBooking[] | null } & Record<string, unknown>>(insertStatement, [
    JSON.stringify(rows.map(({ row }) => Object.fromEntries(insertedColumns.map(([column, value]) => [column, value(row)])))),
    claims.map((claim) => claim.ordinal), claims.map((claim) => claim.key), claims.map((claim) => claim.requestHash),
    shares.map((share) => share.ordinal), shares.map((share) => share.bookingId), shares.map((share) => share.total), shares.map((share) => share.totalRemaining),
    shares.map((share) => share.position),
    [...new Set(options.lockBookings ?? [])],
    rows.map((item) => item.channel?.currency ?? null), rows.map((item) => item.channel?.accountMode ?? null),
    rows.map((item) => item.channel?.takesNewMoney ?? false),
  ]);
  if (answered.length !== rows.length) throw new Error(`the insert of ${rows.length} transactions answered ${answered.length} rows`);
  const records: (TransactionRecord | NotInserted)[] = rows.map(() => 'key_taken');
  for (const row of answered) records[Number(row.ordinality) - 1] = row.id !== null ? toRecord(row) : notInserted(row, rows[Number(row.ordinality) - 1]!);
  return { records, lockedBookings: answered.find((row) => row.locked_bookings !== null)?.locked_bookings ?? [] };
}

/** Why a row the insert answered without an id was not inserted (NotInserted). */
function notInserted(row: { channel_kept: boolean; channel_status_now: string | null }, given: NewTransaction): NotInserted {
  if (!row.channel_kept) return 'channel_changed';
  // Kept with the mode it was read with, so the status alone tells (noPaymentsReason).
  const noPayments = given.channel?.takesNewMoney ? noPaymentsReason({ accountMode: given.channel.accountMode, channelStatus: row.channel_status_now ?? '' }) : null;
  return noPayments ? { noPayments } : 'key_taken';
}

/** One row (insertTransactions), its channel not checked; a key someone else holds throws IdempotencyKeyTakenError. */
export async function insertTransaction(
  tx: Queryable, row: NewTransactionRow, options: { idempotency?: { key: string; requestHash: string }; lockBookings?: number[] } = {},
): Promise<TransactionRecord & { lockedBookings: LockedBooking[] }> {
  const { records, lockedBookings } = await insertTransactions(tx, [{ row, ...(options.idempotency ? { idempotency: options.idempotency } : {}) }], options);
  const record = records[0]!;
  // Its channel is not checked, so a taken key is the only refusal it can meet.
  if (typeof record !== 'object' || 'noPayments' in record) throw new IdempotencyKeyTakenError();
  return { ...record, lockedBookings };
}

export interface SettlementUpdate {
  status: TransactionStatus;
  totalRemaining?: number;
  reservedTotal?: number;
  processorReference?: string | null;
  authCode?: string | null;
  content?: string;
  declineCode?: string | null;
  threeDsStatus?: string | null;
  challengeUrl?: string | null;
  settledAt?: Date | null;
  /** `YYYY-MM-DD`: a completed row's statement date, from when its money moved (settle.ts). */
  statementDate?: string;
  /** Every booking share's remaining amount back to its total (a completed payment). */
  restoreShares?: boolean;
  /** Request the mails of the new status in the same statement (a settlement: emails/outbox.ts). */
  requestMails?: boolean;
  at: Date;
}

/** A row's status change with what goes with it (writeSettlements). */
export interface SettlementWrite {
  id: number;
  update: SettlementUpdate;
  /** The balanced ledger entries of the change, written at `update.at`. */
  postings?: { siteId: number; postings: readonly Posting[] };
  /** The bookings' new money (locked and checked by the caller). */
  bookings?: BookingMoneyUpdate;
}

/**
 * Status changes (already checked against the state table by the caller) of any number of rows,
 * in one statement (issue 7: a batch of settlements writes them together): with each row, its
 * booking shares restored (`restoreShares`), its mails requested (`requestMails`), its ledger
 * entries and its bookings' money. Parameters: $1 the updates (JSON), $2-$11 the entries
 * (entriesInsertSql), $12-$17 the bookings' money (bookingMoneySql, with their time).
 * `returning` is what the CTE `updated` gives of each written row (with `u.request_mails`), and
 * `answer` the statement's final SELECT over `updated` and `entries`. The rows are found by key
 * (pickedBy): joined to the batch alone, they were read by a whole-table scan (session 17).
 */
function writeSql(returning: string, answer: string): string {
  return `WITH u AS MATERIALIZED (
           SELECT * FROM json_to_recordset($1::json) AS u(id bigint, status text, total_remaining bigint, reserved_total bigint, processor_reference text,
                    auth_code text, content text, decline_code text, three_ds_status text, challenge_url text, settled_at timestamptz, modified_at timestamptz,
                    statement_date date, restore_shares boolean, request_mails boolean)
         ), restored AS (
           UPDATE transaction_bookings tb SET total_remaining = tb.total WHERE ${pickedBy('tb.transaction_id', 'SELECT id FROM u WHERE restore_shares')}
         ), updated AS (
           UPDATE transactions t SET status = u.status,
                  total_remaining = coalesce(u.total_remaining, t.total_remaining), reserved_total = coalesce(u.reserved_total, t.reserved_total),
                  processor_reference = coalesce(u.processor_reference, t.processor_reference), auth_code = coalesce(u.auth_code, t.auth_code),
                  content = coalesce(u.content, t.content), decline_code = coalesce(u.decline_code, t.decline_code),
                  three_ds_status = coalesce(u.three_ds_status, t.three_ds_status), challenge_url = coalesce(u.challenge_url, t.challenge_url),
                  settled_at = coalesce(u.settled_at, t.settled_at), statement_date = coalesce(u.statement_date, t.statement_date), modified_at = u.modified_at
             FROM u WHERE t.id = u.id AND ${pickedBy('t.id', 'SELECT id FROM u')}
           RETURNING ${returning}, u.request_mails
         ), mails AS (${mailRequestSql('updated', 'request_mails')}),
         entries AS (${entriesInsertSql(2)}),
         booking_money AS (${bookingMoneySql(12, 17)})
         ${answer}`;
}

const writeStatement = {
  name: 'transactions_settle',
  text: writeSql('t.id, t.site_id, t.status', 'SELECT (SELECT count(*) FROM updated)::int AS updated, (SELECT json_agg(entries) FROM entries) AS entries'),
};

/**
 * The same, answering with the rows' views (viewSelectSql, one result row per written row; the
 * entries on the first): a settlement that answers its requests reads them without another
 * round trip, in the batch's serial time (docs/performance.md, session 16).
 */
const writeWithViewsStatement = {
  name: 'transactions_settle_views',
  text: writeSql('t.*', `SELECT v.*, CASE WHEN row_number() OVER () = 1 THEN (SELECT json_agg(entries) FROM entries) END AS entries_written
                    FROM (${viewSelectSql('updated', 'entries')}) v`),
};

/**
 * Writes the status changes (writeStatement); with `views`, answers with the written rows' views
 * (writeWithViewsStatement). The entries are checked before writing and on what was read back,
 * each row's on its own. A booking may appear in one write only.
 */
export async function writeSettlements(tx: Queryable, writes: readonly SettlementWrite[]): Promise<void>;
export async function writeSettlements(tx: Queryable, writes: readonly SettlementWrite[], options: { views: true }): Promise<TransactionViewRow[]>;
export async function writeSettlements(tx: Queryable, writes: readonly SettlementWrite[], options: { views?: boolean } = {}): Promise<TransactionViewRow[] | void> {
  if (writes.length === 0) return options.views ? [] : undefined;
  const parameters = settlementParameters(writes);
  if (!options.views) {
    const [result] = await tx.query<{ updated: number; entries: EntryReadBack[] | null }>(writeStatement, parameters);
    checkWritten(writes, result!.updated, result!.entries);
    return;
  }
  const rows = await tx.query<TransactionViewRow & { entries_written: EntryReadBack[] | null } & Record<string, unknown>>(writeWithViewsStatement, parameters);
  checkWritten(writes, rows.length, rows[0]?.entries_written ?? null);
  return rows;
}

function settlementParameters(writes: readonly SettlementWrite[]): unknown[] {
  const bookings: BookingMoneyUpdate = { ids: [], totalPaid: [], totalAuthorized: [], lockedTransactions: [], statuses: [] };
  for (const write of writes) {
    if (!write.bookings) continue;
    for (const key of Object.keys(bookings) as (keyof BookingMoneyUpdate)[]) (bookings[key] as unknown[]).push(...write.bookings[key]);
  }
  if (new Set(bookings.ids).size !== bookings.ids.length) throw new Error('a booking appears in two settlements of one batch');
  const updates = writes.map(({ id, update }) => ({
    id, status: update.status, total_remaining: update.totalRemaining ?? null, reserved_total: update.reservedTotal ?? null,
    processor_reference: update.processorReference ?? null, auth_code: update.authCode ?? null, content: update.content ?? null,
    decline_code: update.declineCode ?? null, three_ds_status: update.threeDsStatus ?? null, challenge_url: update.challengeUrl ?? null,
    settled_at: update.settledAt ?? null, modified_at: update.at, statement_date: update.statementDate ?? null, restore_shares: update.restoreShares ?? false, request_mails: update.requestMails ?? false,
  }));
  const entries = writes.flatMap(({ id, update, postings }) => (postings && postings.postings.length > 0 ? [{ siteId: postings.siteId, transactionId: id, at: update.at, postings: postings.postings }] : []));
  return [JSON.stringify(updates), ...entryParameters(entries), ...bookingMoneyParameters(bookings), writes[0]!.update.at];
}

function checkWritten(writes: readonly SettlementWrite[], updated: number, entries: EntryReadBack[] | null): void {
  if (updated !== writes.length) throw new Error(`settled ${updated} of ${writes.length} transactions: a row vanished`);
  checkEntriesReadBack(entries ?? []);
}

/**
 * Writes a status change (already checked against the state table by the caller); with
 * `restoreShares`, also sets each booking share's remaining amount to its total, and with
 * `requestMails`, requests the mails of the new status, in the same statement.
 */
export async function updateTransaction(tx: Queryable, id: number, update: SettlementUpdate): Promise<void> {
  await writeSettlements(tx, [{ id, update }]);
}

/** Moves `delta` into (positive) or out of (negative) a transaction's remaining amount. */
export async function adjustRemaining(tx: Queryable, id: number, delta: number, at: Date): Promise<void> {
  if (delta === 0) return;
  await tx.query('UPDATE transactions SET total_remaining = total_remaining + $2, modified_at = $3 WHERE id = $1', [id, delta, at]);
}
