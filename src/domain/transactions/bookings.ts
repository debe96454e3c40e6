import { deriveBookingStatus, gmtDate, type BookingStatus } from '../booking-status.js';
import { fundingHeldSql, fundingTypes, payableNowExplained } from '../bookings.js';
import { invalidParam, type ApiError } from '../../http/errors.js';
import type { Queryable, Transaction } from '../../storage/db.js';
import type { BookingDelta } from './effects.js';

/**
 * Booking side of payments, always inside the caller's database transaction: rows are locked in
 * id order (one order everywhere, so concurrent payments never deadlock on bookings), totals
 * change, and the status is re-derived through the one booking status table. The lock is
 * FOR NO KEY UPDATE: a concurrent insert of a transaction share holds FOR KEY SHARE on the
 * booking (its foreign key) and then locks the booking itself; FOR UPDATE would queue behind
 * that share and deadlock on the upgrade.
 */

export interface LockedBooking {
  id: number;
  status: BookingStatus;
  total: number;
  total_paid: number;
  total_authorized: number;
  locked_transactions: number;
  date_end: string;
}

/** Locks the bookings of `ids` (a bigint[] parameter) in id order; also a CTE of `transaction_insert`. */
export function lockBookingsSql(ids: string): string {
  return `SELECT id, status, total, total_paid, total_authorized, locked_transactions, date_end
           FROM bookings WHERE id = ANY(${ids}::bigint[]) ORDER BY id FOR NO KEY UPDATE`;
}

const lockBookingsStatement = { name: 'bookings_lock_for_payment', text: lockBookingsSql('$1') };

async function lockBookings(tx: Queryable, ids: number[]): Promise<LockedBooking[]> {
  if (ids.length === 0) return [];
  return tx.query<LockedBooking & Record<string, unknown>>(lockBookingsStatement, [[...new Set(ids)]]);
}

function derive(booking: LockedBooking, options: { today: string; isDraft: boolean }): BookingStatus {
  return deriveBookingStatus({
    total: booking.total,
    totalPaid: booking.total_paid,
    totalAuthorized: booking.total_authorized,
    hasLockedTransaction: booking.locked_transactions > 0,
    dateEnd: booking.date_end,
    today: options.today,
    isDraft: options.isDraft,
  });
}


/** One attempt's bookings (recordAttempts). */
export interface BookingAttempt {
  bookingIds: number[];
  transactionId: number;
  /** The payment's channel: its bookings must still be on it, under the lock. */
  channelId: number;
  refuseOverfunding: boolean;
}

/**
 * Payments were attempted: each booking (locked in id order) lists its transaction and stops
 * being a modal draft, in one multi-row UPDATE for every attempt of a batch. No booking may
 * appear in two attempts (the attempt batcher keeps such requests apart).
 *
 * With `refuseOverfunding`, refuses an attempt that would put more money on a booking than its
 * total: the spec keeps a booking's total at or above its linked transactions. Counts what
 * fundingHeldSql counts: settled money (paid, authorised), every funding attempt still in flight
 * (incomplete or pending, the new one included), so two concurrent payments cannot both pass, and
 * money under an open chargeback, which a reversal would bring back on top of a second payment.
 * The count is in the UPDATE's RETURNING, not in the locking SELECT: the UPDATE starts after the
 * locks are held, so its snapshot sees an attempt committed by whoever held a booking's lock
 * before us (a subquery of the locking statement would read the snapshot taken before waiting). The statement itself
 * refuses (migration 023's refuse_overfunding, SQLSTATE TF001), so it ends the caller's database
 * transaction: its COMMIT goes right behind it (Transaction.withCommit), as nothing after it can
 * decide to roll back; with no booking to list, the caller's transaction commits as usual. A
 * refusal throws a 400 and the attempt is rolled back (attempts.ts retries a batch's members alone).
 */
export async function recordAttempts(tx: Transaction, attempts: readonly BookingAttempt[], options: { at: Date; locked?: LockedBooking[] }): Promise<void> {
  const attemptOf = new Map<number, BookingAttempt>();
  for (const attempt of attempts) {
    for (const id of attempt.bookingIds) {
      if (attemptOf.has(id)) throw new Error(`booking ${id} appears in two attempts of one batch`);
      attemptOf.set(id, attempt);
    }
  }
  if (attemptOf.size === 0) return;
  // Locked already by the statement that inserted the transactions (a separate, earlier statement
  // all the same: the UPDATE below still starts after the locks are held).
  const { locked } = options;
  const covered = locked !== undefined && [...attemptOf.keys()].every((id) => locked.some((booking) => booking.id === id));
  const bookings = covered ? locked.filter((booking) => attemptOf.has(booking.id)) : await lockBookings(tx, [...attemptOf.keys()]);
  if (bookings.length === 0) return;
  const today = gmtDate(options.at);
  try {
    await tx.withCommit().query(recordAttemptStatement, [
      bookings.map((booking) => booking.id),
      bookings.map((booking) => derive(booking, { today, isDraft: false })),
      bookings.map((booking) => attemptOf.get(booking.id)!.transactionId),
      options.at,
      bookings.map((booking) => attemptOf.get(booking.id)!.refuseOverfunding),
      fundingTypes,
      bookings.map((booking) => attemptOf.get(booking.id)!.channelId),
    ]);
  } catch (error) {
    throw attemptRefusalOf(error) ?? error;
  }
}

/**
 * The statement's refusals as the API's 400 on `bookings`, by the SQLSTATE its function raised
 * with the facts in DETAIL: TF001 over-funding (migration 023/032, refuse_overfunding), TF002 a
 * booking deleted or moved since the payment was prepared (migration 035, refuse_changed_booking).
 */
function attemptRefusalOf(error: unknown): ApiError | undefined {
  const { code, detail } = error as { code?: string; detail?: string };
  if (detail === undefined || (code !== 'TF001' && code !== 'TF002')) return undefined;
  const facts = JSON.parse(detail) as { booking_id: number; total?: number; payable?: number; change?: 'deleted' | 'moved' };
  const id = facts.booking_id;
  if (code === 'TF001') return invalidParam('bookings', `Booking ${id}: this payment would take the money on the booking above its total (${facts.total}); ${facts.payable} can be paid on it now: ${payableNowExplained}.`);
  return invalidParam('bookings', facts.change === 'deleted' ? `Unknown booking ${id}.` : `Booking ${id} was moved to another channel while this payment was being prepared; nothing was charged.`);
}

/**
 * The attempts listed on their bookings; answers no rows, or refuses the first booking deleted or
 * moved to another channel since the payment was prepared (its checks took no locks: migration
 * 035), or the first over-funded one (CASE fixes the order: refuse_overfunding runs only for a
 * booking held above its total). The refusal names what could be paid before this attempt
 * (payableNow): the held sum counts the attempt's own share, in flight, so it is given back; read
 * only in the refusing branch. Like the held sum, the booking's state is read by the UPDATE, after
 * the locks are held, so it is what a DELETE or PUT committed meanwhile left.
 */
const recordAttemptStatement = {
  name: 'bookings_record_attempt',
  text: `WITH attempted AS (
           UPDATE bookings b SET transaction_ids = array_append(b.transaction_ids, d.transaction_id), status = d.status, modified_at = $4
             FROM unnest($1::bigint[], $2::text[], $3::bigint[], $5::boolean[], $7::bigint[]) AS d(id, status, transaction_id, refuse_overfunding, channel_id)
            WHERE b.id = d.id
        RETURNING b.id, b.total, d.transaction_id, b.deleted_at IS NOT NULL AS deleted, b.channel_id <> d.channel_id AS moved,
                  CASE WHEN d.refuse_overfunding THEN ${fundingHeldSql('b', '$6')}::bigint END AS held
         )
         SELECT id FROM attempted a
          WHERE CASE WHEN deleted THEN refuse_changed_booking(id, 'deleted')
                     WHEN moved THEN refuse_changed_booking(id, 'moved')
                     WHEN held > total
                     THEN refuse_overfunding(id, total, greatest(0, total - held + (SELECT tb.total FROM transaction_bookings tb WHERE tb.transaction_id = a.transaction_id AND tb.booking_id = a.id)))
                     ELSE false END`,
};

/** New money columns and status of each booking a settlement changes (`bookings_apply_money`'s arrays). */
export interface BookingMoneyUpdate {
  ids: number[];
  totalPaid: number[];
  totalAuthorized: number[];
  lockedTransactions: number[];
  statuses: BookingStatus[];
}

/**
 * Applies money deltas and re-derives each booking's status (one lock, one multi-row UPDATE).
 * `locked`: the bookings as the caller already locked them in this database transaction; used
 * when they cover every booking to change.
 */
export async function applyBookingDeltas(tx: Queryable, deltas: BookingDelta[], at: Date, locked?: LockedBooking[]): Promise<void> {
  const update = await planBookingDeltas(tx, deltas, at, locked);
  if (update.ids.length === 0) return;
  await tx.query(applyDeltasStatement, [...bookingMoneyParameters(update), at]);
}

/**
 * The bookings' new totals and statuses, computed (and checked) here; the caller writes them,
 * with `applyBookingDeltas` or inside its own statement (the settlement's status update, issue 7).
 * Locks the bookings unless `locked` covers them.
 */
export async function planBookingDeltas(tx: Queryable, deltas: BookingDelta[], at: Date, locked?: LockedBooking[]): Promise<BookingMoneyUpdate> {
  const byId = new Map(deltas.filter((d) => d.paid !== 0 || d.authorized !== 0 || d.lockedTransactions !== 0).map((d) => [d.bookingId, d]));
  const update: BookingMoneyUpdate = { ids: [], totalPaid: [], totalAuthorized: [], lockedTransactions: [], statuses: [] };
  if (byId.size === 0) return update;
  const covered = locked !== undefined && [...byId.keys()].every((id) => locked.some((booking) => booking.id === id));
  const bookings = covered ? locked.filter((booking) => byId.has(booking.id)) : await lockBookings(tx, [...byId.keys()]);
  for (const booking of bookings) {
    const delta = byId.get(booking.id)!;
    const next: LockedBooking = {
      ...booking,
      total_paid: booking.total_paid + delta.paid,
      total_authorized: booking.total_authorized + delta.authorized,
      locked_transactions: booking.locked_transactions + delta.lockedTransactions,
    };
    if (next.total_authorized < 0 || next.locked_transactions < 0) {
      throw new Error(`booking ${booking.id} totals would go negative (authorized ${next.total_authorized}, locked ${next.locked_transactions})`);
    }
    update.ids.push(next.id);
    update.totalPaid.push(next.total_paid);
    update.totalAuthorized.push(next.total_authorized);
    update.lockedTransactions.push(next.locked_transactions);
    update.statuses.push(derive(next, { today: gmtDate(at), isDraft: booking.status === 'draft' }));
  }
  return update;
}

export function bookingMoneyParameters(update: BookingMoneyUpdate): unknown[] {
  return [update.ids, update.totalPaid, update.totalAuthorized, update.lockedTransactions, update.statuses];
}

/** `bookings_apply_money` with its five arrays from parameter `first` on and the time in `at`. */
export function bookingMoneySql(first: number, at: number): string {
  const p = (offset: number) => `$${first + offset}`;
  return `UPDATE bookings b SET total_paid = d.total_paid, total_authorized = d.total_authorized, locked_transactions = d.locked_transactions,
                              status = d.status, modified_at = $${at}
           FROM unnest(${p(0)}::bigint[], ${p(1)}::bigint[], ${p(2)}::bigint[], ${p(3)}::integer[], ${p(4)}::text[]) AS d(id, total_paid, total_authorized, locked_transactions, status)
          WHERE b.id = d.id`;
}

export const applyDeltasStatement = { name: 'bookings_apply_money', text: bookingMoneySql(1, 6) };
