import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransaction, type Actor, type TransactionInput, type TransactionJson } from '../../../src/domain/transactions/index.js';
import { verifyLedger } from '../../../src/domain/ledger/verify.js';
import { ApiError } from '../../../src/http/errors.js';
import type { TestContext } from '../../support/context.js';
import { createBooking, createShop, paymentsContext, type Shop } from '../../payments/support.js';

/**
 * Random sequences of purchase / authorize / capture / void / refund / chargeback / reversal
 * against the real database, through the domain service. After every sequence: the ledger
 * verifies (balanced per transaction, channel and currency; bookings match the ledger), no
 * remaining amount is negative, each booking's total_paid equals the money of its transaction
 * shares, and every accepted follow-up fitted what the model said was still available.
 */

let t: TestContext;
let shop: Shop;
let actor: Actor;
let operator: Actor;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  actor = { siteId: shop.site.siteId, userId: shop.site.userId, source: 'api', isPlatformAdmin: false };
  operator = { siteId: shop.site.siteId, userId: null, source: 'cli', isPlatformAdmin: true };
});
afterAll(async () => t.close());

type Op =
  | { kind: 'purchase' | 'authorize'; booking: number; amount: number }
  | { kind: 'capture' | 'refund' | 'chargeback' | 'reversal'; target: number; amount: number }
  | { kind: 'void'; target: number };

const amount = fc.integer({ min: 1, max: 20_000 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constantFrom('purchase' as const, 'authorize' as const), booking: fc.nat(1), amount }),
  fc.record({ kind: fc.constantFrom('capture' as const, 'refund' as const, 'chargeback' as const, 'reversal' as const), target: fc.nat(20), amount }),
  fc.record({ kind: fc.constant('void' as const), target: fc.nat(20) }),
);

async function attempt(who: Actor, input: TransactionInput): Promise<TransactionJson | ApiError> {
  try {
    return await createTransaction(t.context, who, input);
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) return error;
    throw error;
  }
}

async function runSequence(ops: Op[]): Promise<void> {
  const bookings = [await createBooking(t, shop, { total: 30_000 }), await createBooking(t, shop, { total: 30_000 })];
  const authorizations: TransactionJson[] = [];
  const payments: TransactionJson[] = [];
  const chargebacks: TransactionJson[] = [];
  const pick = <T>(items: T[], index: number) => (items.length === 0 ? undefined : items[index % items.length]);
  const money = { channels: shop.channelId, currencies: 'USD' };
  for (const op of ops) {
    if (op.kind === 'purchase' || op.kind === 'authorize') {
      const booking = bookings[op.booking]!;
      const result = await attempt(actor, { type: op.kind, ...{ channelId: shop.channelId, currency: 'USD' }, total: op.amount, token: 'tok_visa', bookings: [{ id: booking, currency: 'USD', total: op.amount }] });
      if (!(result instanceof ApiError) && result.status === 'complete') (op.kind === 'purchase' ? payments : authorizations).push(result);
      continue;
    }
    const items = op.kind === 'capture' || op.kind === 'void' ? authorizations : op.kind === 'reversal' ? chargebacks : payments;
    const target = pick(items, (op as Extract<Op, { target: number }>).target);
    if (!target) continue;
    const fresh = (await t.db.one<{ total_remaining: number; status: string }>('SELECT total_remaining, status FROM transactions WHERE id = $1', [target.id]));
    const bookingId = target.bookings[0]?.id ?? bookings[0]!;
    // 1 .. remaining + 1: mostly amounts that fit, sometimes one cent too many.
    const total = op.kind === 'void' ? fresh.total_remaining : 1 + ((op as Extract<Op, { amount: number }>).amount % (fresh.total_remaining + 1));
    const input: TransactionInput = op.kind === 'chargeback' || op.kind === 'reversal'
      ? { type: op.kind === 'reversal' ? 'chargeback-reversal' : 'chargeback', linkedId: target.id, total }
      : { type: op.kind, channelId: money.channels, currency: money.currencies, total, linkedId: target.id, bookings: [{ id: bookingId, currency: 'USD', total }] };
    const result = await attempt(op.kind === 'chargeback' || op.kind === 'reversal' ? operator : actor, input);
    if (result instanceof ApiError) continue;
    // Accepted: the model must have had room for it.
    expect(total, `${op.kind} of ${total} accepted with ${fresh.total_remaining} remaining`).toBeLessThanOrEqual(fresh.total_remaining);
    if (op.kind === 'capture' && result.status === 'complete') payments.push(result);
    if (op.kind === 'chargeback') chargebacks.push(result);
  }
  await assertInvariants();
}

async function assertInvariants(): Promise<void> {
  const report = await verifyLedger(t.db, { siteId: shop.site.siteId });
  expect(report.problems).toEqual([]);
  const negative = await t.db.query(`SELECT id FROM transactions WHERE total_remaining < 0 UNION ALL SELECT transaction_id FROM transaction_bookings WHERE total_remaining < 0`);
  expect(negative).toEqual([]);
  // Each booking's paid total is the money of its shares: in by purchases, captures and
  // reversals, out by refunds and chargebacks (complete transactions, or locked ones).
  const mismatched = await t.db.query(
    `SELECT b.id, b.total_paid, coalesce(sum(CASE WHEN t.type IN ('purchase', 'retained_purchase', 'capture', 'chargeback-reversal') THEN tb.total
                                                   WHEN t.type IN ('refund', 'chargeback') THEN -tb.total ELSE 0 END), 0) AS money
       FROM bookings b LEFT JOIN transaction_bookings tb ON tb.booking_id = b.id
       LEFT JOIN transactions t ON t.id = tb.transaction_id AND t.status IN ('complete', 'locked')
      WHERE b.site_id = $1 GROUP BY b.id HAVING b.total_paid <> coalesce(sum(CASE WHEN t.type IN ('purchase', 'retained_purchase', 'capture', 'chargeback-reversal') THEN tb.total
                                                   WHEN t.type IN ('refund', 'chargeback') THEN -tb.total ELSE 0 END), 0)`,
    [shop.site.siteId],
  );
  expect(mismatched).toEqual([]);
  const negativeBooking = await t.db.query('SELECT id FROM bookings WHERE site_id = $1 AND (total_paid < 0 OR total_authorized < 0)', [shop.site.siteId]);
  expect(negativeBooking).toEqual([]);
  // A booking reads `locked` exactly while one of its payments is locked (counted once however
  // many disputes it has). A payment is locked only by a dispute open or lost (decisions.md:
  // locked -> complete by a reversal alone).
  const wronglyLocked = await t.db.query<{ id: number; status: string; locked_transactions: number; locked: number }>(
    `SELECT b.id, b.status, b.locked_transactions, (SELECT count(*) FROM transaction_bookings tb JOIN transactions t ON t.id = tb.transaction_id
                                                     WHERE tb.booking_id = b.id AND t.status = 'locked')::int AS locked
       FROM bookings b WHERE b.site_id = $1`,
    [shop.site.siteId],
  );
  expect(wronglyLocked.filter((row) => row.locked_transactions !== row.locked || (row.status === 'locked') !== (row.locked > 0))).toEqual([]);
  const lockedWithoutDispute = await t.db.query(
    `SELECT t.id FROM transactions t WHERE t.site_id = $1 AND t.status = 'locked'
        AND NOT EXISTS (SELECT 1 FROM transactions c WHERE c.linked_id = t.id AND c.type = 'chargeback'
                           AND (c.total_remaining > 0 OR EXISTS (SELECT 1 FROM transactions o WHERE o.linked_id = c.id AND o.type = 'chargeback-override')))`,
    [shop.site.siteId],
  );
  expect(lockedWithoutDispute).toEqual([]);
  // Both sides of a transaction close together (docs/forex.md "Parts"): nothing left in the paid
  // currency (total_remaining) exactly when nothing is left of its booking shares (channel currency).
  const halfOpen = await t.db.query(
    `SELECT t.id, t.type, t.total_remaining, sum(tb.total_remaining)::bigint AS channel_left FROM transactions t JOIN transaction_bookings tb ON tb.transaction_id = t.id
      WHERE t.site_id = $1 AND t.status IN ('complete', 'locked') AND t.type IN ('purchase', 'capture', 'authorize', 'chargeback')
      GROUP BY t.id HAVING (t.total_remaining = 0) <> (sum(tb.total_remaining) = 0)`,
    [shop.site.siteId],
  );
  expect(halfOpen).toEqual([]);
}

/**
 * The same model with the cardholder paying in another currency than the USD bookings (forex
 * parts, docs/forex.md), each payment split over two bookings, and chargebacks closed by
 * reversals or overrides. A follow-up names its bookings' USD amounts; its paid total is the one
 * the refusal names (a client sends it again), so parts are taken in any order and size.
 */
type ForexOp =
  | { kind: 'purchase' | 'authorize'; amount: number; split: number }
  | { kind: 'capture' | 'refund' | 'chargeback' | 'reversal' | 'override'; target: number; amount: number; whole: boolean; first: boolean }
  | { kind: 'void'; target: number };

const forexOpArb: fc.Arbitrary<ForexOp> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('purchase' as const, 'authorize' as const), amount, split: fc.integer({ min: 1, max: 100 }) }) },
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constantFrom('capture' as const, 'refund' as const, 'chargeback' as const, 'reversal' as const, 'override' as const), target: fc.nat(20), amount, whole: fc.boolean(), first: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('void' as const), target: fc.nat(20) }) },
);

/** `attempt`, sending again with the paid total a refusal names (`The total must be N ...`). */
async function attemptAtNamedTotal(who: Actor, input: TransactionInput): Promise<TransactionJson | ApiError> {
  const result = await attempt(who, input);
  const named = result instanceof ApiError ? /The total must be (\d+)/.exec(String((result.data.params as Record<string, string> | undefined)?.total ?? '')) : null;
  return named ? attempt(who, { ...input, total: Number(named[1]) }) : result;
}

async function runForexSequence(paidCurrency: string, ops: ForexOp[]): Promise<void> {
  const found = { payments: [] as TransactionJson[], authorizations: [] as TransactionJson[], chargebacks: [] as TransactionJson[] };
  const usd = (id: number, total: number) => ({ id, currency: 'USD', total });
  for (const step of ops) {
    if (step.kind === 'purchase' || step.kind === 'authorize') {
      const op = step;
      const first = Math.max(1, Math.floor((op.amount * op.split) / 100));
      const shares = [usd(await createBooking(t, shop, { total: 30_000 }), first)];
      if (op.amount > first) shares.push(usd(await createBooking(t, shop, { total: 30_000 }), op.amount - first));
      const result = await attemptAtNamedTotal(actor, { type: op.kind, channelId: shop.channelId, currency: paidCurrency, total: 1, token: 'tok_visa', bookings: shares });
      if (!(result instanceof ApiError) && result.status === 'complete') (op.kind === 'purchase' ? found.payments : found.authorizations).push(result);
      continue;
    }
    const op = step as Exclude<ForexOp, { kind: 'purchase' | 'authorize' }>;
    const items = op.kind === 'capture' || op.kind === 'void' ? found.authorizations : op.kind === 'reversal' || op.kind === 'override' ? found.chargebacks : found.payments;
    const target = items.length === 0 ? undefined : items[op.target % items.length];
    if (!target) continue;
    const fresh = await t.db.one<{ total_remaining: number }>('SELECT total_remaining FROM transactions WHERE id = $1', [target.id]);
    const shares = await t.db.query<{ booking_id: number; total: number; total_remaining: number }>(
      'SELECT booking_id, total, total_remaining FROM transaction_bookings WHERE transaction_id = $1 ORDER BY position', [target.id],
    );
    const money = { channelId: shop.channelId, currency: paidCurrency, linkedId: target.id };
    let input: TransactionInput;
    if (op.kind === 'void') {
      input = { type: 'void', ...money, total: fresh.total_remaining, bookings: shares.map((share) => usd(share.booking_id, share.total)) };
    } else if (op.kind === 'capture' || op.kind === 'refund') {
      const part = op;
      const left = (share: (typeof shares)[number]) => (part.kind === 'capture' ? share.total : share.total_remaining);
      const named = shares.filter((share) => left(share) > 0).map((share) => usd(share.booking_id, part.whole ? left(share) : 1 + (part.amount % left(share))));
      if (named.length === 0) continue;
      input = { type: part.kind === 'capture' ? 'capture' : 'refund', ...money, total: 1, bookings: part.first ? named.slice(0, 1) : named };
    } else {
      const type = op.kind === 'chargeback' ? 'chargeback' : op.kind === 'reversal' ? 'chargeback-reversal' : 'chargeback-override';
      input = { type, linkedId: target.id, total: op.whole ? fresh.total_remaining : 1 + (op.amount % Math.max(1, fresh.total_remaining)) };
    }
    const byOperator = op.kind === 'chargeback' || op.kind === 'reversal' || op.kind === 'override';
    const result = await attemptAtNamedTotal(byOperator ? operator : actor, input);
    if (result instanceof ApiError) continue;
    if (op.kind === 'capture' && result.status === 'complete') found.payments.push(result);
    if (op.kind === 'chargeback') found.chargebacks.push(result);
  }
  await assertInvariants();
}

describe('payments model', () => {
  it('holds the ledger invariants over random operation sequences', async () => {
    // One fixed sequence reaches every follow-up path whatever the random runs draw (amounts
    // that fit the bookings, which refuse more money than their total).
    const everyKind: Op[] = [
      { kind: 'purchase', booking: 0, amount: 5000 }, { kind: 'authorize', booking: 1, amount: 4000 }, { kind: 'authorize', booking: 1, amount: 3000 },
      { kind: 'capture', target: 0, amount: 2500 }, { kind: 'void', target: 1 }, { kind: 'refund', target: 0, amount: 700 },
      { kind: 'chargeback', target: 1, amount: 900 }, { kind: 'reversal', target: 0, amount: 400 },
    ];
    await fc.assert(fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 14 }), runSequence), { numRuns: 25, examples: [[everyKind]] });
    // The sequences really reached the follow-up paths (a model run that only purchases proves little).
    // Settled with money moved: `complete`, or `locked` by a later chargeback (the fixed sequence
    // charges its capture back, and random runs may leave no other capture complete).
    const kinds = await t.db.query<{ type: string }>(`SELECT DISTINCT type FROM transactions WHERE site_id = $1 AND status IN ('complete', 'locked')`, [shop.site.siteId]);
    expect(kinds.map((row) => row.type).sort()).toEqual(expect.arrayContaining(['authorize', 'capture', 'chargeback', 'purchase', 'refund', 'void']));
  }, 120_000);

  it('holds them with forex parts (EUR, and JPY without minor units), two bookings per payment and chargebacks closed in parts', async () => {
    const sequences = fc.array(forexOpArb, { minLength: 12, maxLength: 24, size: 'max' });
    // One fixed sequence per currency reaches every part whatever the random runs draw, so the
    // coverage check below holds by construction and the random runs can draw anything (a seed
    // fixed to make them reach an override explored the same twelve sequences on every run):
    // a capture charged back and the dispute lost (override), a purchase charged back and won.
    const everyPart: ForexOp[] = [
      { kind: 'purchase', amount: 5000, split: 50 }, { kind: 'authorize', amount: 4000, split: 50 }, { kind: 'authorize', amount: 2000, split: 100 },
      { kind: 'capture', target: 0, amount: 0, whole: true, first: false }, { kind: 'void', target: 1 },
      { kind: 'refund', target: 0, amount: 700, whole: false, first: true },
      { kind: 'chargeback', target: 1, amount: 900, whole: false, first: false }, { kind: 'chargeback', target: 0, amount: 500, whole: false, first: false },
      { kind: 'override', target: 0, amount: 0, whole: true, first: false }, { kind: 'reversal', target: 1, amount: 0, whole: true, first: false },
    ];
    await fc.assert(fc.asyncProperty(fc.constantFrom('EUR', 'JPY'), sequences, runForexSequence), { numRuns: 12, examples: [['EUR', everyPart], ['JPY', everyPart]] });
    // The runs reached the forex parts: refunds and both ways of closing a chargeback. Settled
    // with money moved, as in the test above: the fixed sequence charges its capture back and loses
    // the dispute, so its capture ends `locked`, and random runs may complete no other capture
    // (session 34's full run: 'capture' missing from the complete ones).
    const after = await t.db.query<{ type: string }>(`SELECT DISTINCT type FROM transactions WHERE site_id = $1 AND channel_total IS NOT NULL AND status IN ('complete', 'locked')`, [shop.site.siteId]);
    expect(after.map((row) => row.type)).toEqual(expect.arrayContaining(['capture', 'refund', 'chargeback-reversal', 'chargeback-override', 'void']));
  }, 180_000);
});
