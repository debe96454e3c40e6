import type { Queryable } from '../../storage/db.js';
import type { Posting } from '../ledger/postings.js';
import { grantedSiteIds } from './grants.js';
import type { AllocationPlan, AllocationRequest, AllocationTarget } from './plan.js';
import { planReversal, scaleToCapture, type AllocationBalance } from './reverse.js';
import { allocationJson, type AllocationJson } from './shape.js';

/**
 * Storage and ledger side of allocations (docs/allocations.md), always inside the caller's
 * database transaction. Each applied allocation is one balanced pair of entries on each channel:
 * the paying channel moves the amount from `channel_funds` to `allocation_clearing`, the target
 * moves it from `allocation_clearing` to its `channel_funds`. Across all channels the clearing
 * account therefore sums to zero: nothing is created or lost.
 */

export const allocationClearingAccount = 'allocation_clearing';
const fundsAccount = 'channel_funds';

/**
 * The channels named by `requests` (any site, not deleted) and the sites granted to the payer.
 * `lock` key-share-locks the channels found, in id order, until the caller's transaction ends:
 * deleting a channel, closing it or changing its currency locks its row for update first
 * (updateChannel, deleteChannel), so it waits for the allocations written under this lock and
 * then sees them (isInUse), or, done first, is seen here.
 */
export async function loadAllocationFacts(db: Queryable, options: { siteId: number; requests: readonly AllocationRequest[]; lock?: boolean }): Promise<{ targets: Map<number, AllocationTarget>; grantedSiteIds: Set<number> }> {
  const ids = [...new Set(options.requests.map((request) => request.channelId).filter((id) => Number.isSafeInteger(id)))].sort((a, b) => a - b);
  const rows = ids.length === 0 ? [] : await db.query<{ id: number; site_id: number; currency: string; account_mode: string }>(
    `SELECT id, site_id, currency, account_mode FROM channels WHERE id = ANY($1::bigint[]) AND deleted_at IS NULL AND account_mode <> 'closed'
      ${options.lock ? 'ORDER BY id FOR KEY SHARE' : ''}`,
    [ids],
  );
  const targets = new Map(rows.map((row) => [row.id, { id: row.id, siteId: row.site_id, currency: row.currency.trim(), accountMode: row.account_mode }]));
  return { targets, grantedSiteIds: ids.length === 0 ? new Set() : await grantedSiteIds(db, options.siteId) };
}

/**
 * The allocations `transactionId` (an authorisation) still plans, as the requests that planned
 * them, so its capture can re-check their targets (assertPlannedTargetsReceive).
 */
export async function loadPlannedRequests(db: Queryable, transactionId: number): Promise<AllocationRequest[]> {
  const rows = await db.query<{ to_channel_id: number; operator: AllocationRequest['operator']; value: number; currency: string; statement_date: string | null }>(
    `SELECT to_channel_id, operator, value, currency, statement_date::text AS statement_date FROM allocations
      WHERE transaction_id = $1 AND NOT applied AND reverses_id IS NULL AND NOT reversed ORDER BY id`,
    [transactionId],
  );
  return rows.map((row) => ({
    channelId: row.to_channel_id, operator: row.operator, value: row.value, currency: row.currency.trim(), ...(row.statement_date ? { statementDate: row.statement_date } : {}),
  }));
}

interface AllocationRow {
  [column: string]: unknown;
  id: number;
  transaction_id: number;
  from_channel_id: number;
  to_channel_id: number;
  reverses_id: number | null;
  applied: boolean;
  operator: 'flat' | 'percent';
  value: number;
  currency: string;
  total: number;
  paid_currency: string;
  paid_total: number;
  channel_currency: string;
  channel_total: number;
  channel_reversed: number;
  total_reversed: number;
  reversed: boolean;
  title: string;
  reference: string;
  description: string;
  statement_date: string | null;
}

interface NewAllocationRow {
  siteId: number;
  transactionId: number;
  fromChannelId: number;
  toChannelId: number;
  reversesId: number | null;
  applied: boolean;
  operator: string;
  value: number;
  currency: string;
  total: number;
  paidCurrency: string;
  paidTotal: number;
  channelCurrency: string;
  channelTotal: number;
  reversed: boolean;
  title: string;
  reference: string;
  description: string;
  statementDate: string | null;
}

async function insertRows(tx: Queryable, rows: readonly NewAllocationRow[]): Promise<void> {
  if (rows.length === 0) return;
  const column = <K extends keyof NewAllocationRow>(key: K) => rows.map((row) => row[key]);
  await tx.query(
    `INSERT INTO allocations (site_id, transaction_id, from_channel_id, to_channel_id, reverses_id, applied, operator, value, currency, total,
                              paid_currency, paid_total, channel_currency, channel_total, reversed, title, reference, description, statement_date)
     SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::boolean[], $7::text[], $8::bigint[], $9::text[],
                          $10::bigint[], $11::text[], $12::bigint[], $13::text[], $14::bigint[], $15::boolean[], $16::text[], $17::text[], $18::text[], $19::date[])`,
    [
      column('siteId'), column('transactionId'), column('fromChannelId'), column('toChannelId'), column('reversesId'), column('applied'), column('operator'),
      column('value'), column('currency'), column('total'), column('paidCurrency'), column('paidTotal'), column('channelCurrency'), column('channelTotal'),
      column('reversed'), column('title'), column('reference'), column('description'), column('statementDate'),
    ],
  );
}

/** Records the requested allocations of a new transaction; they move money once it completes. */
export async function insertPlannedAllocations(
  tx: Queryable,
  options: { siteId: number; transactionId: number; fromChannelId: number; paidCurrency: string; channelCurrency: string; plans: readonly AllocationPlan[] },
): Promise<void> {
  await insertRows(tx, options.plans.map((plan) => ({
    siteId: options.siteId,
    transactionId: options.transactionId,
    fromChannelId: options.fromChannelId,
    toChannelId: plan.channelId,
    reversesId: null,
    applied: false,
    operator: plan.operator,
    value: plan.value,
    currency: plan.currency,
    total: plan.total,
    paidCurrency: options.paidCurrency,
    paidTotal: plan.paidTotal,
    channelCurrency: options.channelCurrency,
    channelTotal: plan.channelTotal,
    reversed: false,
    title: plan.title,
    reference: plan.reference,
    description: plan.description,
    statementDate: plan.statementDate,
  })));
}

async function rowsOf(tx: Queryable, transactionId: number, where: string): Promise<AllocationRow[]> {
  return tx.query<AllocationRow>(
    `SELECT id, transaction_id, from_channel_id, to_channel_id, reverses_id, applied, operator, value, currency, total, paid_currency, paid_total,
            channel_currency, channel_total, channel_reversed, total_reversed, reversed, title, reference, description, statement_date::text AS statement_date
       FROM allocations WHERE transaction_id = $1 AND ${where} ORDER BY id FOR UPDATE`,
    [transactionId],
  );
}

/** One allocation's movement: paying channel → target, or back when `back`. */
function movementPostings(row: Pick<AllocationRow, 'from_channel_id' | 'to_channel_id' | 'channel_currency'>, amount: number, paid: { currency: string; amount: number } | null, back: boolean): Posting[] {
  if (amount === 0) return [];
  const currency = row.channel_currency.trim();
  const paidFields = paid ? { paidCurrency: paid.currency, paidAmount: paid.amount } : {};
  const [giver, receiver] = back ? [row.to_channel_id, row.from_channel_id] : [row.from_channel_id, row.to_channel_id];
  return [
    { channelId: giver, currency, account: fundsAccount, direction: 'debit', amount, ...paidFields },
    { channelId: giver, currency, account: allocationClearingAccount, direction: 'credit', amount, ...paidFields },
    { channelId: receiver, currency, account: allocationClearingAccount, direction: 'debit', amount, ...paidFields },
    { channelId: receiver, currency, account: fundsAccount, direction: 'credit', amount, ...paidFields },
  ];
}

const paidOf = (row: AllocationRow, amount: number) => (row.paid_currency.trim() === row.channel_currency.trim() ? null : { currency: row.paid_currency.trim(), amount });

/** The transaction whose money moves, as the completion hook sees it. */
export interface CompletedMoney {
  id: number;
  siteId: number;
  type: string;
  channelId: number;
  linkedId: number | null;
  /** The channel-currency amount of this transaction (its total without forex). */
  channelTotal: number;
  /** Its amount in the paid currency (the transaction `total`). */
  paidTotal: number;
}

/**
 * What completing a transaction does to allocations, returning the ledger postings to append
 * with the transaction's own: a purchase or capture applies its allocations (a capture without
 * its own applies its authorisation's, scaled to the amount captured; one with its own marks the
 * authorisation's reversed); a refund reverses its parent's pro rata; a void marks its
 * authorisation's planned allocations reversed (no money had moved). Authorisations keep theirs
 * planned.
 */
export async function allocationPostingsOnCompletion(tx: Queryable, money: CompletedMoney): Promise<Posting[]> {
  switch (money.type) {
    case 'purchase':
    case 'retained_purchase':
      return applyPlanned(tx, await rowsOf(tx, money.id, 'NOT applied AND reverses_id IS NULL'));
    case 'capture': {
      const own = await rowsOf(tx, money.id, 'NOT applied AND reverses_id IS NULL');
      if (own.length === 0) return applyFromAuthorization(tx, money);
      // The capture's own allocations replace the authorisation's: those will never move, so
      // they show reversed, as after a void (they stayed `reversed: false` until session 32,
      // and the authorisation and its capture both seemed to allocate the money).
      await dropPlanned(tx, money.linkedId);
      return applyPlanned(tx, own);
    }
    case 'refund':
      return reverseForRefund(tx, money);
    case 'void':
      await dropPlanned(tx, money.linkedId);
      return [];
    default:
      return [];
  }
}

/** Marks an authorisation's planned allocations reversed: voided, or replaced by its capture's own. No money had moved. */
async function dropPlanned(tx: Queryable, authorizationId: number | null): Promise<void> {
  if (authorizationId === null) return;
  await tx.query('UPDATE allocations SET reversed = true WHERE transaction_id = $1 AND NOT applied AND reverses_id IS NULL', [authorizationId]);
}

async function applyPlanned(tx: Queryable, rows: AllocationRow[]): Promise<Posting[]> {
  if (rows.length === 0) return [];
  await tx.query('UPDATE allocations SET applied = true WHERE id = ANY($1::bigint[])', [rows.map((row) => row.id)]);
  return rows.flatMap((row) => movementPostings(row, row.channel_total, paidOf(row, row.paid_total), false));
}

/** Which of its two amounts an allocation's own `total` is (plan.ts amountsOf): the paid one or the channel one. */
const totalIn = (row: Pick<AllocationRow, 'currency' | 'paid_currency'>): 'paid' | 'channel' => (row.currency.trim() === row.paid_currency.trim() ? 'paid' : 'channel');
const isForex = (row: Pick<AllocationRow, 'paid_currency' | 'channel_currency'>) => row.paid_currency.trim() !== row.channel_currency.trim();

async function applyFromAuthorization(tx: Queryable, money: CompletedMoney): Promise<Posting[]> {
  if (money.linkedId === null) return [];
  const planned = await rowsOf(tx, money.linkedId, 'NOT applied AND reverses_id IS NULL AND NOT reversed');
  if (planned.length === 0) return [];
  const authorization = await tx.one<{ channel_total: number | null; total: number }>('SELECT channel_total, total FROM transactions WHERE id = $1', [money.linkedId]);
  // Largest remainder in both currencies: rounding each allocation's paid amount on its own made
  // two 50 % allocations of a 765 JPY capture 383 + 383 JPY, more than the capture.
  const scaled = scaleToCapture({
    planned: planned.map((row) => ({ channelTotal: row.channel_total, paidTotal: row.paid_total })),
    authorized: { channelTotal: authorization.channel_total ?? authorization.total, paidTotal: authorization.total },
    captured: { channelTotal: money.channelTotal, paidTotal: money.paidTotal },
    forex: isForex(planned[0]!),
  });
  await insertRows(tx, planned.map((row, index) => ({
    siteId: money.siteId,
    transactionId: money.id,
    fromChannelId: row.from_channel_id,
    toChannelId: row.to_channel_id,
    reversesId: null,
    applied: false,
    operator: row.operator,
    value: row.value,
    currency: row.currency.trim(),
    total: totalIn(row) === 'paid' ? scaled[index]!.paidTotal : scaled[index]!.channelTotal,
    paidCurrency: row.paid_currency.trim(),
    paidTotal: scaled[index]!.paidTotal,
    channelCurrency: row.channel_currency.trim(),
    channelTotal: scaled[index]!.channelTotal,
    reversed: false,
    title: row.title,
    reference: row.reference,
    description: row.description,
    statementDate: row.statement_date,
  })));
  // An authorisation is captured at most once (and then cannot be voided): no second application.
  return applyPlanned(tx, await rowsOf(tx, money.id, 'NOT applied AND reverses_id IS NULL'));
}

/** The paid-currency amount already moved back from each allocation (the sum of its reversals). */
async function paidReversedOf(tx: Queryable, allocationIds: readonly number[]): Promise<Map<number, number>> {
  const rows = await tx.query<{ reverses_id: number; paid_reversed: number }>(
    'SELECT reverses_id, sum(paid_total)::bigint AS paid_reversed FROM allocations WHERE reverses_id = ANY($1::bigint[]) GROUP BY reverses_id',
    [allocationIds],
  );
  return new Map(rows.map((row) => [row.reverses_id, Number(row.paid_reversed)]));
}

async function reverseForRefund(tx: Queryable, money: CompletedMoney): Promise<Posting[]> {
  if (money.linkedId === null) return [];
  const applied = await rowsOf(tx, money.linkedId, 'applied AND reverses_id IS NULL');
  if (applied.length === 0) return [];
  const parent = await tx.one<{ channel_total: number | null; total: number }>('SELECT channel_total, total FROM transactions WHERE id = $1', [money.linkedId]);
  const before = await tx.one<{ refunded: number; refunded_paid: number }>(
    `SELECT coalesce(sum(coalesce(channel_total, total)), 0)::bigint AS refunded, coalesce(sum(total), 0)::bigint AS refunded_paid FROM transactions
      WHERE linked_id = $1 AND type = 'refund' AND status IN ('complete', 'locked') AND id <> $2`,
    [money.linkedId, money.id],
  );
  const paidReversed = await paidReversedOf(tx, applied.map((row) => row.id));
  const balances: AllocationBalance[] = applied.map((row) => ({
    id: row.id, channelTotal: row.channel_total, channelReversed: row.channel_reversed, paidTotal: row.paid_total, paidReversed: paidReversed.get(row.id) ?? 0, totalIn: totalIn(row),
  }));
  const parts = planReversal({
    allocations: balances,
    sourceChannelTotal: parent.channel_total ?? parent.total,
    refundedBefore: Number(before.refunded),
    refundChannelAmount: money.channelTotal,
    paid: isForex(applied[0]!) ? { sourceTotal: parent.total, refundedBefore: Number(before.refunded_paid), refundAmount: money.paidTotal } : null,
  });
  const byId = new Map(applied.map((row) => [row.id, row]));
  const reversals: NewAllocationRow[] = [];
  const postings: Posting[] = [];
  for (const part of parts) {
    const row = byId.get(part.allocationId)!;
    await tx.query('UPDATE allocations SET channel_reversed = channel_reversed + $2, total_reversed = total_reversed + $3, reversed = $4 WHERE id = $1', [
      row.id, part.channelAmount, part.total, part.fullyReversed,
    ]);
    reversals.push({
      siteId: money.siteId, transactionId: money.id, fromChannelId: row.from_channel_id, toChannelId: row.to_channel_id, reversesId: row.id, applied: true,
      operator: row.operator, value: row.value, currency: row.currency.trim(), total: part.total, paidCurrency: row.paid_currency.trim(), paidTotal: part.paidAmount,
      channelCurrency: row.channel_currency.trim(), channelTotal: part.channelAmount, reversed: true, title: row.title, reference: row.reference,
      description: row.description, statementDate: row.statement_date,
    });
    postings.push(...movementPostings(row, part.channelAmount, paidOf(row, part.paidAmount), true));
  }
  await insertRows(tx, reversals);
  // The refund that closes its parent leaves no allocation of it open, also none that moved
  // nothing (a planned allocation a partial capture scaled to 0), which no part touches: until
  // session 32 such an item stayed `reversed: false` on a payment refunded in full.
  if (money.channelTotal >= (parent.channel_total ?? parent.total) - Number(before.refunded)) {
    await tx.query('UPDATE allocations SET reversed = true WHERE transaction_id = $1 AND applied AND reverses_id IS NULL AND NOT reversed AND channel_reversed = channel_total', [money.linkedId]);
  }
  return postings;
}

/** `allocations` of each transaction as the API returns them (spec "Allocation as returned"). */
export async function loadAllocationJson(db: Queryable, transactionIds: readonly number[]): Promise<Map<number, AllocationJson[]>> {
  const result = new Map<number, AllocationJson[]>();
  if (transactionIds.length === 0) return result;
  const rows = await db.query<AllocationRow>(
    `SELECT id, transaction_id, to_channel_id, operator, value, currency, total, channel_currency, channel_total, reversed
       FROM allocations WHERE transaction_id = ANY($1::bigint[]) ORDER BY transaction_id, id`,
    [transactionIds],
  );
  for (const row of rows) {
    const list = result.get(row.transaction_id) ?? [];
    list.push(allocationJson({
      id: row.id, toChannelId: row.to_channel_id, operator: row.operator, value: row.value, currency: row.currency.trim(), total: row.total,
      channelCurrency: row.channel_currency.trim(), channelTotal: row.channel_total, reversed: row.reversed,
    }));
    result.set(row.transaction_id, list);
  }
  return result;
}
