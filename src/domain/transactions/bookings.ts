import { deriveBookingStatus, gmtDate, type BookingStatus } from '../booking-status.js';
import { invalidParam } from '../../http/errors.js';
import type { Queryable } from '../../storage/db.js';
import type { BookingDelta } from './effects.js';

/**
 * Booking side of payments, always inside the caller's database transaction: rows are locked in
 * id order (one order everywhere, so concurrent payments never deadlock on bookings), totals
 * change, and the status is re-derived through the one booking status table. The lock is
 * FOR NO KEY UPDATE: a concurrent insert of a transaction share holds FOR KEY SHARE on the
 * booking (its foreign key) and then locks the booking itself; FOR UPDATE would queue behind
 * that share and deadlock on the upgrade.
 */

interface LockedBooking {
  id: number;
  status: BookingStatus;
  total: number;
  total_paid: number;
  total_authorized: number;
  locked_transactions: number;
  date_end: string;
}

async function lockBookings(tx: Queryable, ids: number[]): Promise<LockedBooking[]> {
  if (ids.length === 0) return [];
  return tx.query<LockedBooking & Record<string, unknown>>(
    `SELECT id, status, total, total_paid, total_authorized, locked_transactions, date_end
       FROM bookings WHERE id = ANY($1::bigint[]) ORDER BY id FOR NO KEY UPDATE`,
    [[...new Set(ids)]],
  );
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

/** A payment was attempted: the booking lists the transaction, and stops being a modal draft. */
export async function recordAttempt(tx: Queryable, options: { bookingIds: number[]; transactionId: number; at: Date }): Promise<void> {
  for (const booking of await lockBookings(tx, options.bookingIds)) {
    const status = derive(booking, { today: gmtDate(options.at), isDraft: false });
    await tx.query(
      'UPDATE bookings SET transaction_ids = array_append(transaction_ids, $2::bigint), status = $3, modified_at = $4 WHERE id = $1',
      [booking.id, options.transactionId, status, options.at],
    );
  }
}

/** Types whose money adds to what a booking holds (a capture only converts an authorisation). */
export const fundingTypes: readonly string[] = ['purchase', 'authorize', 'retained_purchase', 'retained_authorize'];

/**
 * Refuses an attempt that would put more money on a booking than its total: the spec keeps a
 * booking's total at or above its linked transactions. Counts settled money (paid, authorised)
 * and every funding attempt still in flight (incomplete or pending, the new one included), so
 * two concurrent payments cannot both pass. Call after recordAttempt, with the rows locked.
 */
export async function refuseOverfunding(tx: Queryable, bookingIds: number[]): Promise<void> {
  if (bookingIds.length === 0) return;
  const rows = await tx.query<{ id: number; total: number; held: number }>(
    `SELECT b.id, b.total,
            (b.total_paid + b.total_authorized + coalesce((
               SELECT sum(tb.total) FROM transaction_bookings tb JOIN transactions t ON t.id = tb.transaction_id
                WHERE tb.booking_id = b.id AND t.status IN ('incomplete', 'pending') AND t.type = ANY($2::text[])), 0))::bigint AS held
       FROM bookings b WHERE b.id = ANY($1::bigint[]) ORDER BY b.id`,
    [[...new Set(bookingIds)], fundingTypes],
  );
  const over = rows.find((row) => Number(row.held) > Number(row.total));
  if (over) {
    throw invalidParam('bookings', `Booking ${over.id}: this payment would take the money on the booking above its total (${over.total}); pay at most its unpaid total.`);
  }
}

/** Applies money deltas and re-derives each booking's status. */
export async function applyBookingDeltas(tx: Queryable, deltas: BookingDelta[], at: Date): Promise<void> {
  const byId = new Map(deltas.filter((d) => d.paid !== 0 || d.authorized !== 0 || d.lockedTransactions !== 0).map((d) => [d.bookingId, d]));
  for (const booking of await lockBookings(tx, [...byId.keys()])) {
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
    const status = derive(next, { today: gmtDate(at), isDraft: booking.status === 'draft' });
    await tx.query(
      'UPDATE bookings SET total_paid = $2, total_authorized = $3, locked_transactions = $4, status = $5, modified_at = $6 WHERE id = $1',
      [booking.id, next.total_paid, next.total_authorized, next.locked_transactions, status, at],
    );
  }
}
