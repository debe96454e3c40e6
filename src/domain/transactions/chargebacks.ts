import type { AppContext } from '../../context.js';
import { forbidden, invalidId, invalidParam, missingParams } from '../../http/errors.js';
import type { Queryable } from '../../storage/db.js';
import { loadChannel } from '../channels.js';
import { loadStoredForex, recordForexTerms, type ForexTerms } from '../forex/payments.js';
import { requestMails } from '../emails/outbox.js';
import { appendEntries } from '../ledger/postings.js';
import { applyBookingDeltas } from './bookings.js';
import { completionBookingDeltas, completionPostings, type BookingDelta, type ShareAmount } from './effects.js';
import { ForexPartRefusal, channelPartOf } from './forex-parts.js';
import { adjustRemaining, adjustShares, bookingShares, findTransaction, insertTransaction, updateTransaction, type BookingShare } from './repository.js';
import { canTransition, nextStatus } from './states.js';
import { statementDate, type StatementPeriod } from '../statements/dates.js';
import { isCapturedMoney, type Actor, type AdminTransactionType, type TransactionInput, type TransactionRecord } from './types.js';

/**
 * Chargebacks are recorded by platform operators (the CLI); no processor call, one database
 * transaction each. A chargeback takes money back from a captured transaction and locks it and
 * its bookings; a reversal (dispute won) gives the money back and, once no chargeback of it is
 * open, returns it to complete; an override (dispute lost) makes the loss final and leaves it
 * locked. docs/payments.md "Chargebacks", docs/ledger.md for the entries.
 */
export async function recordChargeback(context: AppContext, actor: Actor, input: TransactionInput & { type: AdminTransactionType }): Promise<number> {
  if (!actor.isPlatformAdmin) throw forbidden('Chargebacks are recorded by the platform operator only.');
  const missing = [input.linkedId === undefined ? 'linked_id' : null, input.total === undefined ? 'total' : null].filter((name): name is string => name !== null);
  if (missing.length > 0) throw missingParams(missing);
  if (!input.total || input.total <= 0) throw invalidParam('total', 'The total must be a positive amount in cents.');
  const at = context.now();
  return context.db.transaction(async (tx) => {
    const target = await findTransaction(tx, { siteId: actor.siteId, id: input.linkedId! });
    if (!target) throw invalidId('linked_id');
    assertNamesTarget(input, target);
    const id = input.type === 'chargeback' ? await chargeBack(tx, actor, target, input.total!, at) : await closeChargeback(tx, actor, { type: input.type, target, total: input.total!, at });
    await actor.onAdminRecorded?.(tx, id);
    return id;
  });
}

/**
 * A record takes only `linked_id` and `total`, the total in the currency the cardholder paid. A
 * request naming another currency or channel than its transaction's means something else (a USD
 * total of a EUR payment): refused, since read as the payment's it would book another amount.
 */
function assertNamesTarget(input: TransactionInput, target: TransactionRecord): void {
  if (input.currency !== undefined && input.currency !== target.currency) {
    throw invalidParam('currencies', `The transaction was paid in ${target.currency}; a chargeback's total is in that currency.`);
  }
  if (input.channelId !== undefined && input.channelId !== target.channelId) throw invalidParam('channels', `The transaction is on channel ${target.channelId}.`);
}

async function chargeBack(tx: Queryable, actor: Actor, target: TransactionRecord, total: number, at: Date): Promise<number> {
  const parent = (await findTransaction(tx, { siteId: actor.siteId, id: target.id, lock: true }))!;
  if (!isCapturedMoney(parent.type)) throw invalidParam('linked_id', 'Only purchases, retained purchases and captures can be charged back.');
  if (!canTransition(parent.status, 'chargeback')) throw invalidParam('linked_id', `A ${parent.status} transaction cannot be charged back.`);
  if (total > parent.totalRemaining) throw invalidParam('total', `The chargeback exceeds the amount not yet refunded or charged back, ${parent.totalRemaining}.`);
  const parentShares = await bookingShares(tx, parent.id);
  // `total` is in the paid currency; booking shares and the ledger are in the channel currency.
  const money = await partMoney(tx, parent, parentShares, total);
  const taken = fill(parentShares, money.channelTotal);
  await adjustShares(tx, parent.id, taken.map((share) => ({ bookingId: share.bookingId, delta: -share.total })));
  await adjustRemaining(tx, parent.id, -total, at);
  await updateTransaction(tx, parent.id, { status: nextStatus(parent.status, 'chargeback'), at });
  const id = await insertAdminRow(tx, actor, { type: 'chargeback', parent, money, at, shares: taken.map((share) => ({ ...share, totalRemaining: share.total })), totalRemaining: total });
  const deltas = completionBookingDeltas({ type: 'chargeback', shares: taken });
  // Bookings count locked transactions, not chargebacks: a second one of a locked transaction
  // adds no lock (the last one decided takes it off, closeChargeback).
  await applyBookingDeltas(tx, parent.status === 'locked' ? deltas : withLockChange(deltas, parentShares, +1), at);
  await requestMails(tx, id);
  return id;
}

async function closeChargeback(tx: Queryable, actor: Actor, options: { type: 'chargeback-reversal' | 'chargeback-override'; target: TransactionRecord; total: number; at: Date }): Promise<number> {
  const { target, total, at } = options;
  // `--transaction` names the chargeback, or the charged-back transaction (its latest open one).
  const parentId = target.type === 'chargeback' ? target.linkedId! : target.id;
  const parent = (await findTransaction(tx, { siteId: actor.siteId, id: parentId, lock: true }))!;
  const chargebackId = target.type === 'chargeback' ? target.id : await latestOpenChargeback(tx, parent.id);
  if (chargebackId === undefined) throw invalidParam('linked_id', 'The transaction has no open chargeback.');
  const chargeback = (await findTransaction(tx, { siteId: actor.siteId, id: chargebackId, lock: true }))!;
  if (chargeback.totalRemaining === 0) throw invalidParam('linked_id', 'The chargeback is already closed.');
  if (total > chargeback.totalRemaining) throw invalidParam('total', `At most ${chargeback.totalRemaining} of the chargeback is still open.`);
  const chargebackShares = await bookingShares(tx, chargeback.id);
  // A forex chargeback is closed in parts of its own two amounts, so closing all of it gives
  // back exactly the channel amount it took.
  const money = await partMoney(tx, chargeback, chargebackShares, total);
  const closed = fill(chargebackShares, money.channelTotal);
  await adjustShares(tx, chargeback.id, closed.map((share) => ({ bookingId: share.bookingId, delta: -share.total })));
  await adjustRemaining(tx, chargeback.id, -total, at);
  const id = await insertAdminRow(tx, actor, { type: options.type, parent: chargeback, money, at, shares: closed.map((share) => ({ ...share, totalRemaining: 0 })), totalRemaining: 0 });
  let deltas = completionBookingDeltas({ type: options.type, shares: closed });
  if (options.type === 'chargeback-reversal') {
    await adjustShares(tx, parent.id, closed.map((share) => ({ bookingId: share.bookingId, delta: share.total })));
    await adjustRemaining(tx, parent.id, total, at);
    if (parent.status === 'locked' && (await disputesSettledInMerchantsFavour(tx, parent.id))) {
      await updateTransaction(tx, parent.id, { status: nextStatus(parent.status, 'chargeback_closed'), at });
      deltas = withLockChange(deltas, await bookingShares(tx, parent.id), -1);
    }
  }
  await applyBookingDeltas(tx, deltas, at);
  await requestMails(tx, id);
  return id;
}

/** An admin record's money: `paidTotal` as recorded, `channelTotal` what the ledger and bookings move. */
interface PartMoney {
  paidTotal: number;
  channelTotal: number;
  /** The whole's forex terms, carried to the new row (null without forex). */
  forex: ForexTerms | null;
}

/**
 * The channel amount of a part `paid` (paid currency) of `whole` (the charged-back transaction,
 * or the chargeback being closed), at the whole's original rate, cumulatively (forex-parts.ts).
 * Reads what earlier parts took from the whole's locked row and shares.
 */
async function partMoney(tx: Queryable, whole: TransactionRecord, shares: BookingShare[], paid: number): Promise<PartMoney> {
  const stored = await loadStoredForex(tx, whole.id);
  if (stored.forexRate === null) return { paidTotal: paid, channelTotal: paid, forex: null };
  const forexWhole = { paidCurrency: whole.currency, paidTotal: whole.total, channelCurrency: stored.channelCurrency!, channelTotal: stored.channelTotal!, rate: stored.forexRate };
  const consumed = { paid: whole.total - whole.totalRemaining, channel: shares.reduce((sum, share) => sum + share.total - share.totalRemaining, 0) };
  let channelTotal: number;
  try {
    channelTotal = channelPartOf(forexWhole, consumed, paid);
  } catch (error) {
    if (error instanceof ForexPartRefusal) throw invalidParam('total', error.message);
    throw error;
  }
  return {
    paidTotal: paid,
    channelTotal,
    forex: { quoteId: stored.forexQuoteId!, rate: stored.forexRate, channelCurrency: forexWhole.channelCurrency, channelTotal, paidCurrency: whole.currency, paidTotal: paid },
  };
}

async function latestOpenChargeback(tx: Queryable, parentId: number): Promise<number | undefined> {
  const row = await tx.maybeOne<{ id: number }>(
    `SELECT id FROM transactions WHERE linked_id = $1 AND type = 'chargeback' AND total_remaining > 0 ORDER BY id DESC LIMIT 1`,
    [parentId],
  );
  return row?.id;
}

/** No chargeback of the transaction is open, and none was closed by an override (a lost dispute). */
async function disputesSettledInMerchantsFavour(tx: Queryable, parentId: number): Promise<boolean> {
  const row = await tx.one<{ open: number; overridden: number }>(
    `SELECT count(*) FILTER (WHERE c.total_remaining > 0)::bigint AS open,
            (SELECT count(*) FROM transactions o WHERE o.type = 'chargeback-override' AND o.linked_id IN (SELECT id FROM transactions WHERE linked_id = $1 AND type = 'chargeback'))::bigint AS overridden
       FROM transactions c WHERE c.linked_id = $1 AND c.type = 'chargeback'`,
    [parentId],
  );
  return Number(row.open) === 0 && Number(row.overridden) === 0;
}

/** Takes `total` from the shares' remaining amounts in booking order. */
function fill(shares: BookingShare[], total: number): ShareAmount[] {
  const taken: ShareAmount[] = [];
  let left = total;
  for (const share of shares) {
    if (left === 0) break;
    const amount = Math.min(share.totalRemaining, left);
    if (amount > 0) taken.push({ bookingId: share.bookingId, total: amount });
    left -= amount;
  }
  if (left !== 0) throw new Error(`booking shares hold less than ${total}`);
  return taken;
}

/** Adds a change of the locked-transaction count to every booking of the locked transaction. */
function withLockChange(deltas: BookingDelta[], shares: BookingShare[], change: 1 | -1): BookingDelta[] {
  const byId = new Map(deltas.map((delta) => [delta.bookingId, { ...delta }]));
  for (const share of shares) {
    const delta = byId.get(share.bookingId) ?? { bookingId: share.bookingId, paid: 0, authorized: 0, lockedTransactions: 0 };
    delta.lockedTransactions += change;
    byId.set(share.bookingId, delta);
  }
  return [...byId.values()];
}

async function insertAdminRow(
  tx: Queryable,
  actor: Actor,
  options: { type: AdminTransactionType; parent: TransactionRecord; money: PartMoney; at: Date; shares: { bookingId: number; total: number; totalRemaining: number }[]; totalRemaining: number },
): Promise<number> {
  const { parent, at } = options;
  const channel = await loadChannel(tx, { siteId: parent.siteId, id: parent.channelId });
  const record = await insertTransaction(tx, {
    siteId: actor.siteId,
    channelId: parent.channelId,
    authorId: actor.userId,
    source: actor.source,
    type: options.type,
    status: 'complete',
    total: options.money.paidTotal,
    currency: parent.currency,
    totalRemaining: options.totalRemaining,
    reservedTotal: 0,
    linkedId: parent.id,
    cardId: parent.cardId,
    token: parent.token,
    content: options.type === 'chargeback' ? 'Chargeback recorded' : options.type === 'chargeback-reversal' ? 'Chargeback reversed' : 'Chargeback final (override)',
    psp: null,
    paymentMethod: null,
    payeeName: null,
    payeeSurname: null,
    payeeEmail: null,
    country: null,
    ipAddress: null,
    language: parent.language,
    statementDate: statementDate(at, (channel?.statementPeriod ?? 'month') as StatementPeriod),
    cardBrand: null,
    binNumber: null,
    lastFour: null,
    issuerCountry: null,
    attempt3ds: false,
    redirectUrl: null,
    createdAt: at,
    shares: options.shares,
  });
  await tx.query('UPDATE transactions SET settled_at = $2 WHERE id = $1', [record.id, at]);
  const { money } = options;
  await recordForexTerms(tx, record.id, money.forex);
  // In the channel currency; a forex record's entries also keep the amount in the paid currency.
  const postings = completionPostings({ type: options.type, channelId: parent.channelId, currency: money.forex?.channelCurrency ?? parent.currency, total: money.channelTotal })
    .map((posting) => (money.forex ? { ...posting, paidCurrency: parent.currency, paidAmount: money.paidTotal } : posting));
  await appendEntries(tx, { siteId: actor.siteId, transactionId: record.id, at }, postings);
  return record.id;
}
