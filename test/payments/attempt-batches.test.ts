import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransaction, type Actor, type TransactionInput, type TransactionJson } from '../../src/domain/transactions/index.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { limits } from '../../src/limits.js';
import type { TestContext } from '../support/context.js';
import { statementsDuring } from '../support/statements.js';
import type { ApiError } from '../../src/http/errors.js';
import { addChannel, bookingRow, createBooking, post, vaultedShopContext, type Shop } from './support.js';

// The attempts of concurrent payments (validation and the `incomplete` rows) are written in
// batches (attempts.ts, src/batcher.ts): one database transaction and one insert for many
// requests. What a payer or merchant would notice if that went wrong: a payment refused because a
// batch-mate was, a booking charged twice or not at all, a key that answers another request, or
// books that do not balance.
let t: TestContext;
let shop: Shop;
let vaultId: number;
beforeAll(async () => void ({ t, shop, vaultId } = await vaultedShopContext()));
afterAll(async () => t.close());

describe('attempts in batches', () => {
  it('writes the attempts of 40 concurrent payments in fewer inserts than payments, each booking charged once', async () => {
    const bookings = await Promise.all(Array.from({ length: 40 }, () => createBooking(t, shop, { total: 1200 })));
    const { result: responses, statements } = await statementsDuring(() => Promise.all(bookings.map((booking, index) => post(t, shop, retainedBody(booking, 1200), { 'idempotency-key': `attempt-${index}` }))));
    expect(responses.map((response) => [response.statusCode, response.json().status])).toEqual(bookings.map(() => [201, 'complete']));
    for (const booking of bookings) expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 1200, transaction_ids: [expect.any(Number)] });
    const inserts = statements.filter((statement) => statement.startsWith('[transaction_insert]')).length;
    expect(inserts).toBeGreaterThan(0);
    expect(inserts).toBeLessThan(40);
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });

  it("answers a member refused by its own checks, or whose key another request holds, alone: its batch-mates are charged", async () => {
    const held = await pay('held-elsewhere').result;
    const slots = await holdEverySlot();
    const mates = [pay('plain-1'), pay('unknown-booking', { booking: 2 ** 40 }), pay('plain-2'), pay('held-elsewhere', { requestHash: 'another request' }), pay('plain-3')];
    await slots.queued();
    const { result: outcomes, statements } = await statementsDuring(async () => {
      slots.release();
      return Promise.allSettled(mates.map((payment) => payment.result));
    });
    expect(outcomes.map(outcomeOf)).toEqual(['complete', 'rest_invalid_param', 'complete', 'the Idempotency-Key is held by another request', 'complete']);
    // The queued five went in one batch: one insert, and no attempt made again alone.
    expect(statements.filter((statement) => statement.startsWith('[transaction_insert]'))).toHaveLength(1);
    for (const payment of [mates[0]!, mates[2]!, mates[4]!]) expect(await bookingRow(t, payment.booking)).toMatchObject({ status: 'paid', total_paid: 2500 });
    // The refused key's request wrote nothing: its booking is untouched, the key still answers the first request.
    expect(await bookingRow(t, mates[3]!.booking)).toMatchObject({ status: 'unpaid', total_paid: 0, transaction_ids: [] });
    expect(await keyOwner('held-elsewhere')).toBe(held.id);
    await Promise.all(slots.holders.map((payment) => payment.result));
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });

  it('rolls back a batch with a member refused under locks (over-funding) and attempts each member again alone: each charged once', async () => {
    const full = await createBooking(t, shop, { total: 2500 });
    await pay('pays-in-full', { booking: full }).result;
    const slots = await holdEverySlot();
    const mates = [pay('over-1'), pay('overfunds', { booking: full }), pay('over-2')];
    await slots.queued();
    const { result: outcomes, statements } = await statementsDuring(async () => {
      slots.release();
      return Promise.allSettled(mates.map((payment) => payment.result));
    });
    expect(outcomes.map(outcomeOf)).toEqual(['complete', 'rest_invalid_param', 'complete']);
    expect(((outcomes[1] as PromiseRejectedResult).reason as Error).message).toContain('Invalid parameter');
    // The batch's insert, then one for each member alone.
    expect(statements.filter((statement) => statement.startsWith('[transaction_insert]'))).toHaveLength(4);
    for (const payment of [mates[0]!, mates[2]!]) expect(await bookingRow(t, payment.booking)).toMatchObject({ status: 'paid', total_paid: 2500, transaction_ids: [expect.any(Number)] });
    expect(await bookingRow(t, full)).toMatchObject({ status: 'paid', total_paid: 2500, transaction_ids: [expect.any(Number)] });
    const rows = await t.db.one<{ count: number }>(`SELECT count(*)::int AS count FROM transaction_bookings WHERE booking_id = ANY($1::bigint[])`, [[mates[0]!.booking, mates[2]!.booking, full]]);
    expect(rows.count).toBe(3);
    await Promise.all(slots.holders.map((payment) => payment.result));
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });

  // The operator's lock of a channel (`channel set --channel-status locked`) is refused as the read refuses it.
  it.each([
    ['switched to live', 'mode', `account_mode = 'draft'`, expect.stringContaining('account mode changed, or the channel was deleted, while this payment was being prepared')],
    ['locked', 'status', `channel_status = 'locked'`, 'The channel is locked and takes no payments.'],
  ])("refuses alone a member whose channel was %s under its attempt: its batch-mates are charged, nothing of it is written", async (_change, key, set, refusal) => {
    const raced = await addChannel(t, shop);
    const racedBooking = await createBooking(t, shop, { channelId: raced, total: 2500 });
    const slots = await holdEverySlot();
    const mates = [pay(`${key}-1`), pay(`${key}-raced`, { booking: racedBooking, channelId: raced }), pay(`${key}-2`)];
    await slots.queued();
    // The channel locked as a PUT locks it: the batch reads it unlocked, then waits for it to insert.
    const put: pg.PoolClient = await t.db.pool.connect();
    await put.query('BEGIN');
    await put.query('SELECT 1 FROM channels WHERE id = $1 FOR UPDATE', [raced]);
    const { result: outcomes, statements } = await statementsDuring(async () => {
      slots.release();
      await Promise.all(slots.holders.map((payment) => payment.result));
      await waitFor(async () => (await lockWaits()) === 1);
      await put.query(`UPDATE channels SET ${set} WHERE id = $1`, [raced]);
      await put.query('COMMIT');
      put.release();
      return Promise.allSettled(mates.map((payment) => payment.result));
    });
    expect(outcomes.map(outcomeOf)).toEqual(['complete', 'rest_invalid_param', 'complete']);
    expect(((outcomes[1] as PromiseRejectedResult).reason as ApiError).data).toEqual({ params: { channels: refusal } });
    // The queued three went in one batch: one insert, and no member attempted again alone.
    expect(statements.filter((statement) => statement.startsWith('[transaction_insert]'))).toHaveLength(1);
    for (const payment of [mates[0]!, mates[2]!]) expect(await bookingRow(t, payment.booking)).toMatchObject({ status: 'paid', total_paid: 2500 });
    expect(await bookingRow(t, racedBooking)).toMatchObject({ status: 'unpaid', total_paid: 0, transaction_ids: [] });
    expect((await t.db.query('SELECT 1 FROM transactions WHERE channel_id = $1', [raced])).length).toBe(0);
    // Its key was not claimed: sent again, the payment is checked against the channel as it is now.
    expect((await t.db.query('SELECT 1 FROM idempotency_keys WHERE site_id = $1 AND key = $2', [shop.site.siteId, `${key}-raced`])).length).toBe(0);
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });
});

const retainedBody = (booking: number, total: number) => ({
  transaction_types: 'retained_purchase', channels: shop.channelId, currencies: 'USD', total, linked_id: vaultId, bookings: [{ id: booking, currencies: 'USD', total }],
});

const actor: () => Omit<Actor, 'idempotency'> = () => ({ siteId: shop.site.siteId, userId: shop.site.userId, source: 'api', isPlatformAdmin: false });

interface Payment {
  /** Known once the booking is made (before the result settles). */
  booking: number;
  result: Promise<TransactionJson>;
}

/** A retained purchase of 2500 through the domain service, with an Idempotency-Key. */
function pay(key: string, options: { booking?: number; requestHash?: string; channelId?: number } = {}): Payment {
  const payment: Payment = { booking: options.booking ?? 0, result: Promise.resolve(undefined as never) };
  const bookingReady = options.booking !== undefined ? Promise.resolve(options.booking) : createBooking(t, shop, { total: 2500 });
  payment.result = bookingReady.then((booking) => {
    payment.booking = booking;
    const input: TransactionInput = { type: 'retained_purchase', channelId: options.channelId ?? shop.channelId, currency: 'USD', total: 2500, linkedId: vaultId, bookings: [{ id: booking, currency: 'USD', total: 2500 }] };
    return createTransaction(t.context, { ...actor(), idempotency: { key, requestHash: options.requestHash ?? key, onClaimed: () => undefined } }, input);
  });
  return payment;
}

function outcomeOf(outcome: PromiseSettledResult<TransactionJson>): string {
  if (outcome.status === 'fulfilled') return outcome.value.status;
  const reason = outcome.reason as Error & { code?: string };
  return reason.code ?? reason.message;
}

async function keyOwner(key: string): Promise<number> {
  return Number((await t.db.one<{ transaction_id: string }>('SELECT transaction_id FROM idempotency_keys WHERE site_id = $1 AND key = $2', [shop.site.siteId, key])).transaction_id);
}

/**
 * Fills every attempt slot of the process with a payment whose booking the test holds locked,
 * so each waits in its attempt's insert; the payments made next queue for the next batch.
 * `queued()` waits until those have reached the batcher (a domain call reaches it after making its
 * booking, with no database in between).
 */
async function holdEverySlot() {
  const bookings = await Promise.all(Array.from({ length: limits.attemptBatchesInFlightMax }, () => createBooking(t, shop, { total: 2500 })));
  const locker: pg.PoolClient = await t.db.pool.connect();
  await locker.query('BEGIN');
  await locker.query('SELECT id FROM bookings WHERE id = ANY($1::bigint[]) FOR UPDATE', [bookings]);
  const waitingBefore = await lockWaits();
  const holders = bookings.map((booking, index) => pay(`hold-${booking}-${index}`, { booking }));
  await waitFor(async () => (await lockWaits()) === waitingBefore + bookings.length);
  return {
    holders,
    async queued() {
      await new Promise((resolve) => setTimeout(resolve, 500));
    },
    release() {
      void locker.query('COMMIT').finally(() => locker.release());
    },
  };
}

/** Backends of this database waiting for a row lock. */
async function lockWaits(): Promise<number> {
  return (await t.db.one<{ count: number }>(`SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).count;
}

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('timed out waiting');
}
