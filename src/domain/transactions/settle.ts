import type { AppContext } from '../../context.js';
import type { Queryable } from '../../storage/db.js';
import type { ProcessorOutcome } from '../../processor/connector.js';
import { enqueueMailsForTransaction } from '../emails/outbox.js';
import { appendEntries } from '../ledger/postings.js';
import { applyBookingDeltas } from './bookings.js';
import { completionBookingDeltas, keepsRemaining } from './effects.js';
import { completionPostingsWithAllocations } from './forex-allocations.js';
import { adjustRemaining, adjustShares, bookingShares, findTransaction, toRecord, transactionColumns, updateTransaction } from './repository.js';
import { nextStatus, type TransactionStatus } from './states.js';
import type { TransactionRecord } from './types.js';

/**
 * Step three: apply a processor outcome to a row, in one database transaction that locks the
 * row, moves it through the status table, writes the ledger entries, updates the linked
 * transaction and the bookings, and queues the mails. Safe to call twice or from two processes
 * (the answer and reconciliation): whoever locks the row second finds it settled and does nothing.
 */

export type Decline = { code: string | null; message: string; processorReference?: string | null };

export async function settleWithOutcome(context: AppContext, id: number, outcome: ProcessorOutcome): Promise<TransactionStatus> {
  const at = context.now();
  return context.db.transaction(async (tx) => {
    const row = await lockRow(tx, id);
    if (row.status !== 'incomplete' && row.status !== 'pending') return row.status;
    switch (outcome.kind) {
      case 'approved':
        return completeRow(tx, row, { processorReference: outcome.processorReference, authCode: outcome.authCode, message: outcome.message }, at);
      case 'declined':
        return failRow(tx, row, { code: outcome.code, message: outcome.message, processorReference: outcome.processorReference }, at);
      case 'challenge':
        return challengeRow(tx, row, outcome, at);
    }
  });
}

/** Pending for too long: expired (the expiry job, after the processor had no answer either). */
export async function expireRow(tx: Queryable, row: TransactionRecord, at: Date): Promise<TransactionStatus> {
  const status = nextStatus(row.status, 'expire');
  await updateTransaction(tx, row.id, { status, threeDsStatus: 'failed', content: row.content || '3-D Secure was not completed in time', settledAt: at, at });
  await enqueueMailsForTransaction(tx, row.id);
  return status;
}

export async function lockRow(tx: Queryable, id: number): Promise<TransactionRecord> {
  const row = await tx.maybeOne(`SELECT ${transactionColumns} FROM transactions WHERE id = $1 FOR NO KEY UPDATE`, [id]);
  if (!row) throw new Error(`transaction ${id} does not exist`);
  return toRecord(row as never);
}

async function challengeRow(tx: Queryable, row: TransactionRecord, outcome: Extract<ProcessorOutcome, { kind: 'challenge' }>, at: Date): Promise<TransactionStatus> {
  if (row.status === 'pending') return row.status;
  const status = nextStatus(row.status, 'challenge');
  await updateTransaction(tx, row.id, {
    status,
    processorReference: outcome.processorReference,
    challengeUrl: outcome.challengeUrl,
    threeDsStatus: 'challenge',
    content: outcome.message,
    at,
  });
  return status;
}

export async function completeRow(tx: Queryable, row: TransactionRecord, answer: { processorReference: string | null; authCode: string | null; message: string }, at: Date): Promise<TransactionStatus> {
  const status = nextStatus(row.status, 'approved');
  const shares = await bookingShares(tx, row.id);
  const releasesAuthorization = row.type === 'capture' || row.type === 'void';
  const authorization = releasesAuthorization ? await findTransaction(tx, { siteId: row.siteId, id: row.linkedId! }) : undefined;
  const authorizationShares = authorization ? await bookingShares(tx, authorization.id) : [];
  // Channel-currency amounts (forex) and allocation movements: forex-allocations.ts (issue 4).
  const postings = await completionPostingsWithAllocations(tx, row, authorization);
  await appendEntries(tx, { siteId: row.siteId, transactionId: row.id, at }, postings);
  await applyBookingDeltas(tx, completionBookingDeltas({ type: row.type, shares, authorizationShares }), at);
  const remaining = keepsRemaining(row.type) ? row.total : 0;
  if (remaining > 0) await tx.query('UPDATE transaction_bookings SET total_remaining = total WHERE transaction_id = $1', [row.id]);
  await updateTransaction(tx, row.id, {
    status,
    totalRemaining: remaining,
    processorReference: answer.processorReference,
    authCode: answer.authCode,
    content: answer.message,
    threeDsStatus: threeDsAfter(row, 'approved'),
    settledAt: at,
    at,
  });
  await enqueueMailsForTransaction(tx, row.id);
  return status;
}

export async function failRow(tx: Queryable, row: TransactionRecord, decline: Decline, at: Date): Promise<TransactionStatus> {
  const status = nextStatus(row.status, 'declined');
  await releaseReservation(tx, row, at);
  await updateTransaction(tx, row.id, {
    status,
    reservedTotal: 0,
    processorReference: decline.processorReference ?? null,
    content: decline.code ? `${decline.code} ${decline.message}` : decline.message,
    declineCode: decline.code,
    threeDsStatus: threeDsAfter(row, 'declined'),
    settledAt: at,
    at,
  });
  await enqueueMailsForTransaction(tx, row.id);
  return status;
}

/** A declined capture, void or refund gives its reserved amount back to the linked transaction. */
async function releaseReservation(tx: Queryable, row: TransactionRecord, at: Date): Promise<void> {
  if (row.reservedTotal === 0 || row.linkedId === null) return;
  await adjustRemaining(tx, row.linkedId, row.reservedTotal, at);
  if (row.type === 'capture' || row.type === 'void') {
    // Capture and void took the untouched authorisation whole; its shares return whole.
    await tx.query('UPDATE transaction_bookings SET total_remaining = total WHERE transaction_id = $1', [row.linkedId]);
  } else {
    const shares = await bookingShares(tx, row.id);
    await adjustShares(tx, row.linkedId, shares.map((share) => ({ bookingId: share.bookingId, delta: share.total })));
  }
}

function threeDsAfter(row: TransactionRecord, event: 'approved' | 'declined'): string | null {
  if (!row.attempt3ds) return 'not_attempted';
  if (row.status === 'pending') return event === 'approved' ? 'authenticated' : 'failed';
  return event === 'approved' ? 'frictionless' : null;
}
