import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransaction, type Actor, type TransactionInput, type TransactionJson } from '../../src/domain/transactions/index.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { limits } from '../../src/limits.js';
import type { TestContext } from '../support/context.js';
import { statementsDuring } from '../support/statements.js';
import { bookingRow, createBooking, entriesOf, get, post, vaultedShopContext, type Shop } from './support.js';

// Settlements of concurrent payments are written in batches (create.ts, src/batcher.ts): one
// database transaction for many outcomes. What a payer or a merchant would notice if that went
// wrong: a payment left unrecorded, a booking paid twice or not at all, books that do not balance,
// or one request's failure undoing another's payment.
let t: TestContext;
let shop: Shop;
let vaultId: number;
beforeAll(async () => void ({ t, shop, vaultId } = await vaultedShopContext()));
afterAll(async () => t.close());

const retained = (booking: number, total: number) => ({
  transaction_types: 'retained_purchase', channels: shop.channelId, currencies: 'USD', total, linked_id: vaultId, bookings: [{ id: booking, currencies: 'USD', total }],
});

describe('settlements in batches', () => {
  it('records every one of 40 concurrent payments, each booking paid once, in fewer settlement transactions than payments', async () => {
    const bookings = await Promise.all(Array.from({ length: 40 }, (_, index) => createBooking(t, shop, { total: 1000 + index })));
    const { result: responses, statements } = await statementsDuring(() => Promise.all(bookings.map((booking, index) => post(t, shop, retained(booking, 1000 + index), { 'idempotency-key': `batch-${index}` }))));
    expect(responses.map((response) => [response.statusCode, response.json().status, response.json().total])).toEqual(bookings.map((_, index) => [201, 'complete', 1000 + index]));
    for (const [index, booking] of bookings.entries()) {
      expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 1000 + index });
      const entries = await entriesOf(t, responses[index]!.json().id);
      expect(entries).toHaveLength(2);
      // The answer is the transaction as stored: its ledger entries and bookings included (the
      // batch reads the views in its write statement, whose snapshot predates the entries).
      const answered = responses[index]!.json();
      expect(answered.payment_ids).toEqual(entries.map((entry) => entry.id));
      expect((await get(t, shop, `/transactions/${answered.id}`)).json()).toEqual(answered);
    }
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
    // Each answer was stored for its key: a retry replays it.
    const replay = await post(t, shop, retained(bookings[7]!, 1007), { 'idempotency-key': 'batch-7' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(responses[7]!.json());
    const settlementLocks = statements.filter((statement) => statement.startsWith('[transaction_lock_for_settlement]')).length;
    expect(settlementLocks).toBeGreaterThan(0);
    expect(settlementLocks).toBeLessThan(40);
    // Each batch writes its rows' changes (reading back their views for the answers in the same
    // statement), and stores its answers, in one statement.
    for (const name of ['transactions_settle_views', 'idempotency_store']) expect(statements.filter((statement) => statement.startsWith(`[${name}]`))).toHaveLength(settlementLocks);
    expect(statements.filter((statement) => statement.startsWith('[transaction_views]'))).toEqual([]);
  });

  it("fails only the settlement that fails: its batch-mates' payments are recorded, each once", async () => {
    const slots = await holdEverySlot('fail');
    // These queue, and go together in one batch once a slot is free, the failing one last (it
    // arrives last), so its batch-mates' answers are stored before it fails.
    const queued = [pay('mate-1'), pay('mate-2'), pay('mate-3')];
    await slots.queuedBehind(3);
    queued.splice(1, 0, pay('failing', { fail: true }));
    await slots.queuedBehind(4);
    slots.release();
    const outcomes = await Promise.allSettled([...slots.holders, ...queued].map((payment) => payment.result));
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.status : (outcome.reason as Error).message))).toEqual([
      ...slots.holders.map(() => 'complete'), 'complete', 'storing the answer for failing failed', 'complete', 'complete',
    ]);
    // The three were in the failing one's batch (their answers were stored twice: in the batch
    // rolled back, then each on its own), and each was charged and recorded once.
    expect(['mate-1', 'mate-2', 'mate-3', 'failing'].map((key) => stored.get(key))).toEqual([2, 2, 2, 2]);
    for (const payment of [queued[0]!, queued[2]!, queued[3]!]) expect(await bookingRow(t, payment.booking)).toMatchObject({ status: 'paid', total_paid: 2500 });
    // The failing one's outcome was not recorded: its row stays incomplete for reconciliation, its booking unpaid.
    const failing = await t.db.one<{ status: string; entries: number }>(
      `SELECT t.status, (SELECT count(*)::int FROM ledger_entries e WHERE e.transaction_id = t.id) AS entries
         FROM transactions t JOIN transaction_bookings tb ON tb.transaction_id = t.id WHERE tb.booking_id = $1`, [queued[1]!.booking]);
    expect(failing).toEqual({ status: 'incomplete', entries: 0 });
    expect(await bookingRow(t, queued[1]!.booking)).toMatchObject({ status: 'unpaid', total_paid: 0 });
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });

  it('settles two payments of one booking that wait together one after the other: the booking gets both', async () => {
    const slots = await holdEverySlot('same');
    const booking = await createBooking(t, shop, { total: 5000 });
    const halves = [pay('half-1', { booking, total: 2500 }), pay('half-2', { booking, total: 2500 })];
    await slots.queuedBehind(2);
    slots.release();
    const outcomes = await Promise.all([...slots.holders, ...halves].map((payment) => payment.result));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(outcomes.map(() => 'complete'));
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 5000 });
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });
});

const actor: () => Omit<Actor, 'idempotency'> = () => ({ siteId: shop.site.siteId, userId: shop.site.userId, source: 'api', isPlatformAdmin: false });
/** How many times each key's answer was stored. */
const stored = new Map<string, number>();

/** A retained purchase through the domain service, whose answer's storing can wait for a gate or fail. */
interface Payment {
  /** Known once the booking is made (before the result settles). */
  booking: number;
  result: Promise<TransactionJson>;
}

function pay(key: string, options: { gate?: Promise<void>; onHeld?: () => void; fail?: boolean; booking?: number; total?: number } = {}): Payment {
  const total = options.total ?? 2500;
  const bookingReady = options.booking !== undefined ? Promise.resolve(options.booking) : createBooking(t, shop, { total });
  const payment: Payment = { booking: options.booking ?? 0, result: Promise.resolve(undefined as never) };
  payment.result = bookingReady.then((booking) => {
    payment.booking = booking;
    const input: TransactionInput = { type: 'retained_purchase', channelId: shop.channelId, currency: 'USD', total, linkedId: vaultId, bookings: [{ id: booking, currency: 'USD', total }] };
    return createTransaction(t.context, {
      ...actor(),
      idempotency: {
        key, requestHash: key, onClaimed: () => undefined,
        answer: async (transaction) => {
          stored.set(key, (stored.get(key) ?? 0) + 1);
          if (options.gate) {
            options.onHeld?.();
            await options.gate;
          }
          if (options.fail) throw new Error(`storing the answer for ${key} failed`);
          return { siteId: shop.site.siteId, key, status: 201, headers: {}, body: JSON.stringify(transaction) };
        },
      },
    }, input);
  });
  return payment;
}

/**
 * Fills every settlement slot of the process with a settlement that waits in its database
 * transaction until `release`; `queuedBehind(n)` waits until n more payments were answered by the
 * processor (and so wait for a slot).
 */
async function holdEverySlot(prefix: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  let held = 0;
  const holders = Array.from({ length: limits.settlementBatchesInFlightMax }, (_, index) => pay(`${prefix}-hold-${index}`, { gate, onHeld: () => { held += 1; } }));
  await waitFor(() => held === limits.settlementBatchesInFlightMax);
  const before = await processorCalls();
  return {
    holders,
    release,
    async queuedBehind(count: number) {
      await waitFor(async () => (await processorCalls()) === before + count);
      // From the processor's answer to the batcher: its reply on the socket, then a few
      // microtasks, no database; generous for a loaded CI machine.
      await new Promise((resolve) => setTimeout(resolve, 500));
    },
  };
}

async function processorCalls(): Promise<number> {
  return (await t.db.one<{ count: number }>(`SELECT count(*)::int AS count FROM sandbox_operations`)).count;
}

async function waitFor(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('timed out waiting');
}
