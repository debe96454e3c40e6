import type { AppContext } from '../../context.js';
import { invalidParam, type ApiError } from '../../http/errors.js';
import type { Queryable, Transaction } from '../../storage/db.js';
import { fundingTypes } from '../bookings.js';
import { redeemCaptureTokens } from '../vault/index.js';
import { recordAttempts, type BookingAttempt } from './bookings.js';
import { assertForexPart, recordForexAndAllocations } from './forex-allocations.js';
import { noPaymentsRefusal, takesNewMoney, unknownCardToken, type PaymentPlan } from './prepare.js';
import { adjustRemaining, adjustShares, bookingShares, findTransaction, insertTransactions, type BookingShare, type NewTransaction, type NewTransactionRow, type NotInserted } from './repository.js';
import { statementDate, type StatementPeriod } from '../statements/dates.js';
import { canonicalText } from '../text.js';
import { IdempotencyKeyTakenError, isRetainedType, type Actor, type TransactionRecord } from './types.js';

/**
 * Step one of every processor-backed transaction, for one request or a batch of them, in the
 * caller's short database transaction (attempts.ts, which also prepared the plans in it): lock
 * the linked transaction (if any), reserve the amount this one will consume from its
 * `total_remaining`, and insert the new rows as `incomplete` (one statement for the batch, with
 * the Idempotency-Keys and the bookings' locks), then list them on their bookings (one statement).
 * It commits before the processor is called, so a crash afterwards leaves rows reconciliation can
 * finish, and concurrent captures, voids and refunds of one transaction are serialised by the
 * lock on it. A result is the request's refusal (nothing of it is written) when its
 * Idempotency-Key is another request's (IdempotencyKeyTakenError) or its channel changed since the
 * request was checked (channelChanged); a follow-up's reservation is then rolled back: it throws
 * that refusal. Any other refusal found under locks throws. Its last statement
 * carries the COMMIT (recordAttempts), so it is the caller's last database work.
 */
export async function insertAttempts(context: AppContext, tx: Transaction, members: readonly { actor: Actor; plan: PaymentPlan }[]): Promise<(TransactionRecord | Error)[]> {
  const at = context.now();
  const rows: NewTransaction[] = [];
  for (const { actor, plan } of members) {
    // Only a follow-up has a linked row to reserve from, and follow-ups are attempted alone.
    const reserved = plan.linked && !isRetainedType(plan.input.type) ? await reserveOnParent(tx, plan, at) : 0;
    rows.push({
      row: newRow(actor, plan, { reserved, at }),
      ...(actor.idempotency ? { idempotency: { key: actor.idempotency.key, requestHash: actor.idempotency.requestHash } } : {}),
      channel: { currency: plan.channel.currency, accountMode: plan.channel.accountMode, takesNewMoney: takesNewMoney(plan.input.type) },
    });
  }
  const inserted = await insertTransactions(tx, rows, { lockBookings: members.flatMap(({ plan }) => plan.shares.map((share) => share.bookingId)) });
  const records = inserted.records.map((record, index) => refusalOf(record, members[index]!.plan));
  // A follow-up not inserted (a replay of another request's key, its channel changed, or a capture
  // on a channel closed or locked since) has already reserved its amount on the parent: rolled
  // back with the rest, or each replay of a refund would shrink what remains refundable.
  // Follow-ups are attempted alone, so nothing else is lost with it.
  const unreserved = records.find((record, index) => record instanceof Error && rows[index]!.row.reservedTotal > 0);
  if (unreserved) throw unreserved;
  await redeemCaptureTokensOf(tx, members, records);
  const attempts: BookingAttempt[] = [];
  for (const [index, record] of records.entries()) {
    if (record instanceof Error) continue;
    const { plan } = members[index]!;
    await recordForexAndAllocations(tx, { record, channel: plan.channel, plan: plan.extras });
    attempts.push({ bookingIds: plan.shares.map((share) => share.bookingId), transactionId: record.id, channelId: plan.channel.id, refuseOverfunding: fundingTypes.includes(plan.input.type) });
  }
  // The last statement of the attempt's database transaction: its COMMIT goes with it.
  await recordAttempts(tx, attempts, { at, locked: inserted.lockedBookings });
  return records;
}

/** A row's refusal by the insert (NotInserted) as the request's answer, or its record. */
function refusalOf(record: TransactionRecord | NotInserted, plan: PaymentPlan): TransactionRecord | Error {
  if (record === 'key_taken') return new IdempotencyKeyTakenError();
  if (record === 'channel_changed') return channelChanged();
  return 'noPayments' in record ? noPaymentsRefusal(plan.input.type, record.noPayments) : record;
}

/**
 * The channel's currency or account mode changed (or it was deleted) between the payment's checks
 * and its attempt (insertTransactions): the payment was prepared for what the channel no longer is.
 * Sent again, it is checked against the channel as it is now.
 */
function channelChanged(): ApiError {
  return invalidParam('channels', "The channel's currency or account mode changed, or the channel was deleted, while this payment was being prepared; nothing was charged. Send it again to pay on the channel as it is now.");
}

/**
 * A capture token pays for one charge (docs/vault.md "CVV"): it is redeemed here, with the row of
 * the charge it pays, so a refusal that rolls the attempt back leaves it usable. A request that
 * wrote no row (its Idempotency-Key is another request's) redeems nothing. When another charge
 * redeemed the token since this request was checked, the attempt is refused as the check would
 * have refused it, before the processor is called; in a batch, the rollback has each member
 * attempted again alone, and the check then refuses this one.
 */
async function redeemCaptureTokensOf(tx: Transaction, members: readonly { plan: PaymentPlan }[], records: readonly (TransactionRecord | Error)[]): Promise<void> {
  const redemptions = members.flatMap(({ plan }, index) => (!(records[index] instanceof Error) && plan.captureRedemption ? [plan.captureRedemption] : []));
  if ((await redeemCaptureTokens(tx, redemptions)) < redemptions.length) throw unknownCardToken();
}

/** Payee text kept in NFC, as the list's payee_surname and payee_email filters read theirs (text.ts canonicalText). */
function canonicalOrNull(text: string | undefined): string | null {
  return text === undefined ? null : canonicalText(text);
}

function newRow(actor: Actor, plan: PaymentPlan, options: { reserved: number; at: Date }): NewTransactionRow {
  const { input, card } = plan;
  return {
    siteId: actor.siteId,
    channelId: plan.channel.id,
    authorId: actor.userId,
    source: actor.source,
    type: input.type,
    status: 'incomplete',
    total: plan.total,
    currency: plan.currency,
    totalRemaining: 0,
    reservedTotal: options.reserved,
    linkedId: plan.linked?.id ?? null,
    cardId: card?.id ?? null,
    token: card?.token ?? null,
    content: '',
    psp: input.psp ?? null,
    paymentMethod: input.paymentMethod ?? (card ? 'credit-card' : null),
    payeeName: canonicalOrNull(input.payeeName),
    payeeSurname: canonicalOrNull(input.payeeSurname),
    payeeEmail: canonicalOrNull(input.payeeEmail),
    country: input.country ?? null,
    ipAddress: input.ipAddress ?? null,
    language: plan.language,
    statementDate: statementDate(options.at, plan.channel.statementPeriod as StatementPeriod),
    cardBrand: card?.brand ?? null,
    binNumber: card?.bin ?? null,
    lastFour: card?.lastFour ?? null,
    issuerCountry: card?.issuerCountry ?? null,
    attempt3ds: input.attempt3ds ?? false,
    redirectUrl: input.redirectUrl ?? null,
    createdAt: options.at,
    shares: plan.shares.map((share) => ({ ...share, totalRemaining: 0 })),
  };
}

/**
 * Locks the captured/authorised transaction and takes this request's amount out of its
 * remaining amount (and out of each booking share), refusing what would over-commit it.
 * Returns the amount reserved, given back if the processor declines.
 */
async function reserveOnParent(tx: Queryable, plan: PaymentPlan, at: Date): Promise<number> {
  const parent = await findTransaction(tx, { siteId: plan.channel.siteId, id: plan.linked!.id, lock: true });
  if (!parent) throw new Error(`linked transaction ${plan.linked!.id} vanished`);
  if (parent.status === 'locked') throw invalidParam('linked_id', 'The linked transaction is locked by a chargeback.');
  if (parent.status !== 'complete') throw invalidParam('linked_id', `The linked transaction is ${parent.status}; only complete transactions can be adjusted.`);
  const parentShares = await bookingShares(tx, parent.id);
  const type = plan.input.type;
  let reserve: number;
  if (type === 'capture' || type === 'void') {
    if (parent.totalRemaining === 0) {
      throw invalidParam('linked_id', type === 'void' ? 'A captured or voided authorisation cannot be voided.' : 'The authorisation has already been captured or voided.');
    }
    if (type === 'capture' && plan.total > parent.totalRemaining) throw invalidParam('total', `The capture exceeds the authorised amount ${parent.totalRemaining}.`);
    if (type === 'void' && plan.total !== parent.totalRemaining) throw invalidParam('total', `A void is for the authorisation's full remaining amount, ${parent.totalRemaining}.`);
    assertSharesWithin(plan.shares, parentShares, 'total');
    assertForexPart({ forex: plan.extras.forex, parent, parentShares, total: plan.total });
    // Capture happens once: the whole authorisation is consumed, the uncaptured rest released.
    reserve = parent.totalRemaining;
    await adjustShares(tx, parent.id, parentShares.map((share) => ({ bookingId: share.bookingId, delta: -share.totalRemaining })));
  } else {
    // Forex first: its refusal names the exact total to send now.
    assertForexPart({ forex: plan.extras.forex, parent, parentShares, total: plan.total });
    if (plan.total > parent.totalRemaining) throw invalidParam('total', `The refund exceeds the amount still refundable, ${parent.totalRemaining}.`);
    assertSharesWithin(plan.shares, parentShares, 'totalRemaining');
    reserve = plan.total;
    await adjustShares(tx, parent.id, plan.shares.map((share) => ({ bookingId: share.bookingId, delta: -share.total })));
  }
  await adjustRemaining(tx, parent.id, -reserve, at);
  return reserve;
}

function assertSharesWithin(shares: PaymentPlan['shares'], parentShares: BookingShare[], field: 'total' | 'totalRemaining'): void {
  const byBooking = new Map(parentShares.map((share) => [share.bookingId, share]));
  for (const share of shares) {
    const parentShare = byBooking.get(share.bookingId);
    if (!parentShare) throw invalidParam('bookings', `Booking ${share.bookingId} was not paid by the linked transaction.`);
    if (share.total > parentShare[field]) throw invalidParam('bookings', `Booking ${share.bookingId}: at most ${parentShare[field]} of the linked transaction is available for it.`);
  }
}
