import type { AppContext } from '../../context.js';
import type { Queryable } from '../../storage/db.js';
import type { ProcessorOutcome, ThreeDsResult } from '../../processor/connector.js';
import { applyBookingDeltas, planBookingDeltas, type LockedBooking } from './bookings.js';
import { completionBookingDeltas, keepsRemaining } from './effects.js';
import { completionPostingsWithAllocations } from './forex-allocations.js';
import {
  adjustRemaining, adjustShares, bookingShares, findTransaction, toRecord, transactionColumns, updateTransaction, writeSettlements, type BookingShare, type SettlementUpdate,
  type SettlementWrite,
} from './repository.js';
import type { StoredForex } from '../forex/payments.js';
import { formatDecimal, parseDecimal } from '../money.js';
import { nextStatus, type TransactionStatus } from './states.js';
import type { TransactionRecord } from './types.js';
import { statementDate, type StatementPeriod } from '../statements/dates.js';

/**
 * Step three: apply a processor outcome to a row, in one database transaction that locks the
 * row, moves it through the status table, writes the ledger entries, updates the linked
 * transaction and the bookings, and requests the mails (in the status update's statement). Safe to call twice or from two processes
 * (the answer and reconciliation): whoever locks the row second finds it settled and does nothing.
 */

export type Decline = { code: string | null; message: string; processorReference?: string | null; threeDs?: ThreeDsResult };

export async function settleWithOutcome(context: AppContext, id: number, outcome: ProcessorOutcome): Promise<TransactionStatus> {
  const at = context.now();
  return context.db.transaction((tx) => settleInTransaction(tx, id, outcome, at), { genericPlans: true });
}

/**
 * settleWithOutcome inside the caller's database transaction (create.ts reads the answer back in
 * the same one). Run it with `genericPlans`: its statements are the payment path's fixed ones.
 */
export async function settleInTransaction(tx: Queryable, id: number, outcome: ProcessorOutcome, at: Date): Promise<TransactionStatus> {
  return settleLockedRow(tx, await lockRow(tx, id), outcome, at);
}

/** settleInTransaction for a row the caller locked (lockRows). */
export async function settleLockedRow(tx: Queryable, row: LockedRow, outcome: ProcessorOutcome, at: Date): Promise<TransactionStatus> {
  return written(tx, await planSettlement(tx, row, outcome, at));
}

/** A row's settlement: its new status and its own write (none when the row does not change). */
export interface SettledRow {
  status: TransactionStatus;
  write?: SettlementWrite;
}

/**
 * settleLockedRow without writing the row itself: its write is returned for the caller, so a
 * batch of settlements writes all its rows in one statement (create.ts). Anything the settlement
 * changes on other rows (a declined follow-up's reservation given back) is written at once.
 */
export async function planSettlement(tx: Queryable, row: LockedRow, outcome: ProcessorOutcome, at: Date): Promise<SettledRow> {
  if (row.status !== 'incomplete' && row.status !== 'pending') return { status: row.status };
  switch (outcome.kind) {
    case 'approved':
      return planCompletion(tx, row, { processorReference: outcome.processorReference, authCode: outcome.authCode, message: outcome.message, threeDs: outcome.threeDs }, at);
    case 'declined':
      return planFailure(tx, row, { code: outcome.code, message: outcome.message, processorReference: outcome.processorReference, threeDs: outcome.threeDs }, at);
    case 'challenge':
      return planChallenge(row, outcome, at);
  }
}

async function written(tx: Queryable, settled: SettledRow): Promise<TransactionStatus> {
  if (settled.write) await writeSettlements(tx, [settled.write]);
  return settled.status;
}

/** Pending for too long: expired (the expiry job, after the processor had no answer either). */
export async function expireRow(tx: Queryable, row: TransactionRecord, at: Date): Promise<TransactionStatus> {
  const status = nextStatus(row.status, 'expire');
  await updateTransaction(tx, row.id, { status, threeDsStatus: 'failed', content: row.content || '3-D Secure was not completed in time', settledAt: at, requestMails: true, at });
  return status;
}

/**
 * What settling a row needs besides the row: its booking shares, its forex columns and whether
 * it carries allocations. Read with the row's lock in one statement by `lockRow` (issue 7); the
 * jobs, which lock rows their own way, get it from `settlementFactsOf`. Share totals, forex terms
 * and allocations are written with the attempt and never change, so reading them with the
 * locking statement's snapshot is safe.
 */
export interface SettlementFacts {
  shares: BookingShare[];
  forex: StoredForex;
  hasAllocations: boolean;
  /** The channel's statement period now (null without a channel): the settled row's statement_date. */
  statementPeriod: StatementPeriod | null;
  /** The bookings, when lockRow locked them already. */
  lockedBookings?: LockedBooking[];
}

export type LockedRow = TransactionRecord & { facts?: SettlementFacts };

const factsColumns = `forex_quote_id, forex_rate::text AS forex_rate, channel_currency, channel_total,
  coalesce((SELECT json_agg(json_build_object('bookingId', tb.booking_id, 'total', tb.total, 'totalRemaining', tb.total_remaining) ORDER BY tb.position)
              FROM transaction_bookings tb WHERE tb.transaction_id = t.id), '[]'::json) AS share_list,
  EXISTS (SELECT 1 FROM allocations a WHERE a.transaction_id = t.id) AS has_allocations,
  (SELECT c.statement_period FROM channels c WHERE c.id = t.channel_id) AS statement_period`;

/**
 * The rows, locked in id order, with their facts; for a payment without allocations still to
 * settle, also its bookings, locked after the rows in id order (the lock order of
 * docs/payments.md: such a settlement locks nothing else), saving applyBookingDeltas its own
 * locking round trip. One row for a settlement of its own, many for a batch (create.ts).
 */
const lockRowsStatement = {
  name: 'transaction_lock_for_settlement',
  text: `WITH locked_rows AS (SELECT ${transactionColumns}, ${factsColumns} FROM transactions t WHERE id = ANY ($1::bigint[]) ORDER BY id FOR NO KEY UPDATE),
              payable AS (
                SELECT tb.transaction_id, tb.booking_id FROM transaction_bookings tb JOIN locked_rows r ON tb.transaction_id = r.id
                 WHERE r.type IN ('purchase', 'retained_purchase', 'authorize', 'retained_authorize') AND NOT r.has_allocations
                   AND r.status IN ('incomplete', 'pending')),
              locked_bookings AS (
                SELECT b.id, b.status, b.total, b.total_paid, b.total_authorized, b.locked_transactions, b.date_end FROM bookings b
                 WHERE b.id IN (SELECT booking_id FROM payable)
                 ORDER BY b.id FOR NO KEY UPDATE)
         SELECT r.*, (SELECT json_agg(lb ORDER BY lb.id) FROM locked_bookings lb JOIN payable p ON p.booking_id = lb.id WHERE p.transaction_id = r.id) AS locked_booking_list
           FROM locked_rows r`,
};
const factsStatement = { name: 'transaction_settlement_facts', text: `SELECT ${factsColumns} FROM transactions t WHERE id = $1` };

interface FactsRow {
  forex_quote_id: number | null;
  forex_rate: string | null;
  channel_currency: string | null;
  channel_total: number | null;
  share_list: BookingShare[];
  has_allocations: boolean;
  statement_period: StatementPeriod | null;
}

function factsOf(row: FactsRow): SettlementFacts {
  return {
    shares: row.share_list,
    forex: {
      forexQuoteId: row.forex_quote_id,
      forexRate: row.forex_rate === null ? null : formatDecimal(parseDecimal(row.forex_rate)),
      channelCurrency: row.channel_currency?.trim() ?? null,
      channelTotal: row.channel_total,
    },
    hasAllocations: row.has_allocations,
    statementPeriod: row.statement_period,
  };
}

export async function lockRow(tx: Queryable, id: number): Promise<LockedRow> {
  const row = (await lockRows(tx, [id])).get(id);
  if (!row) throw new Error(`transaction ${id} does not exist`);
  return row;
}

/** lockRow for many rows in one statement, by id; a missing id is missing from the map. */
export async function lockRows(tx: Queryable, ids: number[]): Promise<Map<number, LockedRow>> {
  const rows = await tx.query(lockRowsStatement, [ids]);
  return new Map(rows.map((row) => {
    const lockedBookings = (row as { locked_booking_list: LockedBooking[] | null }).locked_booking_list;
    const locked: LockedRow = { ...toRecord(row as never), facts: { ...factsOf(row as unknown as FactsRow), ...(lockedBookings ? { lockedBookings } : {}) } };
    return [locked.id, locked];
  }));
}

async function settlementFactsOf(tx: Queryable, row: LockedRow): Promise<SettlementFacts> {
  return row.facts ?? factsOf(await tx.one<FactsRow & Record<string, unknown>>(factsStatement, [row.id]));
}

function planChallenge(row: TransactionRecord, outcome: Extract<ProcessorOutcome, { kind: 'challenge' }>, at: Date): SettledRow {
  if (row.status === 'pending') return { status: row.status };
  const status = nextStatus(row.status, 'challenge');
  return {
    status,
    write: {
      id: row.id,
      update: { status, processorReference: outcome.processorReference, challengeUrl: outcome.challengeUrl, threeDsStatus: 'challenge', content: outcome.message, at },
    },
  };
}

type Approval = { processorReference: string | null; authCode: string | null; message: string; threeDs?: ThreeDsResult };

export async function completeRow(tx: Queryable, row: LockedRow, answer: Approval, at: Date): Promise<TransactionStatus> {
  return written(tx, await planCompletion(tx, row, answer, at));
}

async function planCompletion(tx: Queryable, row: LockedRow, answer: Approval, at: Date): Promise<SettledRow> {
  const status = nextStatus(row.status, 'approved');
  const facts = await settlementFactsOf(tx, row);
  const releasesAuthorization = row.type === 'capture' || row.type === 'void';
  const authorization = releasesAuthorization ? await findTransaction(tx, { siteId: row.siteId, id: row.linkedId! }) : undefined;
  const authorizationShares = authorization ? await bookingShares(tx, authorization.id) : [];
  // Channel-currency amounts (forex) and allocation movements: forex-allocations.ts (issue 4).
  const postings = await completionPostingsWithAllocations(tx, row, authorization, facts);
  // Computed and checked now, written by the status update's statement (issue 7).
  const bookingMoney = await planBookingDeltas(tx, completionBookingDeltas({ type: row.type, shares: facts.shares, authorizationShares }), at, facts.lockedBookings);
  const remaining = keepsRemaining(row.type) ? row.total : 0;
  // The status change, the balanced entries and the bookings' money, in one statement (issue 7).
  const update: SettlementUpdate = {
    status,
    totalRemaining: remaining,
    // What is left of the transaction is left of each of its booking shares.
    restoreShares: remaining > 0,
    processorReference: answer.processorReference,
    authCode: answer.authCode,
    content: answer.message,
    threeDsStatus: threeDsAfter(row, 'approved', answer.threeDs),
    settledAt: at,
    // The money moves now, so the row belongs to the statements of now: fixed at the attempt, a
    // payment settled past a period boundary (a 3DS challenge passed after midnight, a
    // reconciliation the next day) named one period while its entries were in the next.
    ...(facts.statementPeriod ? { statementDate: statementDate(at, facts.statementPeriod) } : {}),
    requestMails: true,
    at,
  };
  return { status, write: { id: row.id, update, postings: { siteId: row.siteId, postings }, bookings: bookingMoney } };
}

export async function failRow(tx: Queryable, row: LockedRow, decline: Decline, at: Date): Promise<TransactionStatus> {
  return written(tx, await planFailure(tx, row, decline, at));
}

async function planFailure(tx: Queryable, row: LockedRow, decline: Decline, at: Date): Promise<SettledRow> {
  const status = nextStatus(row.status, 'declined');
  await releaseReservation(tx, row, at);
  const update: SettlementUpdate = {
    status,
    reservedTotal: 0,
    processorReference: decline.processorReference ?? null,
    content: decline.code ? `${decline.code} ${decline.message}` : decline.message,
    declineCode: decline.code,
    threeDsStatus: threeDsAfter(row, 'declined', decline.threeDs),
    settledAt: at,
    requestMails: true,
    at,
  };
  return { status, write: { id: row.id, update } };
}

/** A declined capture, void or refund gives its reserved amount back to the linked transaction. */
async function releaseReservation(tx: Queryable, row: LockedRow, at: Date): Promise<void> {
  if (row.reservedTotal === 0 || row.linkedId === null) return;
  await adjustRemaining(tx, row.linkedId, row.reservedTotal, at);
  if (row.type === 'capture' || row.type === 'void') {
    // Capture and void took the untouched authorisation whole; its shares return whole.
    await tx.query('UPDATE transaction_bookings SET total_remaining = total WHERE transaction_id = $1', [row.linkedId]);
  } else {
    const shares = (await settlementFactsOf(tx, row)).shares;
    await adjustShares(tx, row.linkedId, shares.map((share) => ({ bookingId: share.bookingId, delta: share.total })));
  }
}

/** The 3DS status recorded on settlement: what the processor reported, else what the path implies. */
function threeDsAfter(row: TransactionRecord, event: 'approved' | 'declined', reported: ThreeDsResult | undefined): string | null {
  if (!row.attempt3ds) return 'not_attempted';
  if (reported) return reported;
  if (row.status === 'pending') return event === 'approved' ? 'authenticated' : 'failed';
  return event === 'approved' ? 'frictionless' : null;
}
