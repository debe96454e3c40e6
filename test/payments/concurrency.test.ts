import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { convert } from '../../src/domain/money.js';
import { bookingRow, createBooking, createShop, entriesOf, get, paymentsContext, post, purchaseBody, type Shop } from './support.js';

// Concurrent requests through app.inject share one process and a 20-connection pool, so they
// really interleave in PostgreSQL (row locks, SKIP LOCKED, the idempotency claim).
let t: TestContext;
let shop: Shop;
const logLines: string[] = [];
beforeAll(async () => {
  // No card here is meant to go unanswered: a generous processor timeout keeps a slow machine
  // (the embedded database, 20 queued refunds) from turning answers into `incomplete`.
  t = await paymentsContext({ poolSize: 20, env: { PROCESSOR_TIMEOUT_MS: '20000', LOG_LEVEL: 'warn' }, logStream: { write: (line: string) => void logLines.push(line) } });
  shop = await createShop(t);
});
afterAll(async () => t.close());

const bookingsOf = (bookingId: number, total: number) => [{ id: bookingId, currencies: shop.currency, total }];

describe('no double charge', () => {
  it('makes exactly one charge for 50 identical retained_purchase requests with one Idempotency-Key', async () => {
    const vault = (await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: 'USD', total: 0, token: 'tok_visa' })).json();
    // The booking could take more money: only idempotency stands between a retry and a second charge.
    const booking = await createBooking(t, shop, { total: 100_000 });
    const body = { transaction_types: 'retained_purchase', channels: shop.channelId, currencies: 'USD', total: 7700, linked_id: vault.id, bookings: bookingsOf(booking, 7700) };
    const responses = await Promise.all(Array.from({ length: 50 }, () => post(t, shop, body, { 'idempotency-key': 'order-7700' })));
    expect(responses.map((response) => response.statusCode)).toEqual(Array(50).fill(201));
    const ids = new Set(responses.map((response) => response.json().id));
    expect(ids.size).toBe(1);
    expect(responses.filter((response) => response.headers['idempotent-replayed'] === 'true')).toHaveLength(49);
    // A replay must not run the request again even after answering: let any stray work finish.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const charges = await t.db.query<{ id: number }>(`SELECT id FROM transactions WHERE type = 'retained_purchase' AND linked_id = $1`, [vault.id]);
    expect(charges).toHaveLength(1);
    expect(await entriesOf(t, charges[0]!.id)).toHaveLength(2);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'partial-payment', total_paid: 7700 });
    const processorCalls = await t.db.one<{ count: number }>(`SELECT count(*)::int AS count FROM sandbox_operations WHERE amount = 7700`);
    expect(processorCalls.count).toBe(1);
    // Losing the race for a key is a normal outcome, answered by the replay: nothing for an
    // operator's error alerts (a replay was once taken for a failure and logged as one).
    expect(logLines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.level >= 40)).toEqual([]);
  });

  it('never takes more than a booking total under 20 concurrent payments with different keys', async () => {
    const vault = (await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: 'USD', total: 0, token: 'tok_visa' })).json();
    // Room for three payments of 3,000: each attempt counts the ones still in flight (bookings.ts recordAttempt).
    const booking = await createBooking(t, shop, { total: 10_000 });
    const body = { transaction_types: 'retained_purchase', channels: shop.channelId, currencies: 'USD', total: 3000, linked_id: vault.id, bookings: bookingsOf(booking, 3000) };
    const responses = await Promise.all(Array.from({ length: 20 }, (_, index) => post(t, shop, body, { 'idempotency-key': `funding-${index}` })));
    const created = responses.filter((response) => response.statusCode === 201);
    expect(created).toHaveLength(3);
    expect(created.every((response) => response.json().status === 'complete')).toBe(true);
    expect(responses.filter((response) => response.statusCode === 400).every((response) => response.json().data.params.bookings)).toBe(true);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'partial-payment', total_paid: 9000 });
    const charges = await t.db.one<{ count: number }>(`SELECT count(*)::int AS count FROM transactions WHERE linked_id = $1 AND type = 'retained_purchase'`, [vault.id]);
    expect(charges.count).toBe(3);
  });

  it('never refunds more than was captured under 20 concurrent partial refunds', async () => {
    const booking = await createBooking(t, shop, { total: 15_000 });
    const purchase = (await post(t, shop, purchaseBody(shop, booking, 15_000))).json();
    const refund = { transaction_types: 'refund', channels: shop.channelId, currencies: 'USD', total: 1000, linked_id: purchase.id, bookings: bookingsOf(booking, 1000) };
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(t, shop, refund)));
    const created = responses.filter((response) => response.statusCode === 201);
    expect(created).toHaveLength(15);
    expect(created.every((response) => response.json().status === 'complete')).toBe(true);
    expect(responses.filter((response) => response.statusCode === 400).every((response) => response.json().data.params.total)).toBe(true);
    expect((await get(t, shop, `/transactions/${purchase.id}`)).json()).toMatchObject({ total_remaining: 0, status: 'complete' });
    const refunded = await t.db.one<{ sum: number }>(`SELECT coalesce(sum(total), 0)::bigint AS sum FROM transactions WHERE linked_id = $1 AND type = 'refund' AND status = 'complete'`, [purchase.id]);
    expect(Number(refunded.sum)).toBe(15_000);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0 });
  });

  it('resolves a capture racing a void on one authorisation exactly once', async () => {
    for (let round = 0; round < 5; round++) {
      const booking = await createBooking(t, shop, { total: 5000 });
      const authorization = (await post(t, shop, { transaction_types: 'authorize', channels: shop.channelId, currencies: 'USD', total: 5000, token: 'tok_visa', bookings: bookingsOf(booking, 5000) })).json();
      const follow = (type: string) => ({ transaction_types: type, channels: shop.channelId, currencies: 'USD', total: 5000, linked_id: authorization.id, bookings: bookingsOf(booking, 5000) });
      const [capture, voided] = await Promise.all([post(t, shop, follow('capture')), post(t, shop, follow('void'))]);
      const winners = [capture, voided].filter((response) => response.statusCode === 201);
      expect(winners).toHaveLength(1);
      expect(winners[0]!.json().status).toBe('complete');
      const row = await bookingRow(t, booking);
      expect(row.total_authorized).toBe(0);
      expect(row.total_paid).toBe(capture.statusCode === 201 ? 5000 : 0);
      expect((await get(t, shop, `/transactions/${authorization.id}`)).json().adjustments).toHaveLength(1);
    }
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });

  it('keeps the parts of a forex payment exact under 10 concurrent partial refunds that exhaust it', async () => {
    // 3333 USD paid as 3066 EUR (3066.36 at 0.92). Each refund names its USD part in `bookings`;
    // its EUR total is the cumulative conversion less what earlier refunds took, so it depends on
    // which refunds came first: that must be decided under the purchase's lock.
    const booking = await createBooking(t, shop, { total: 3333 });
    const purchase = (await post(t, shop, { transaction_types: 'purchase', channels: shop.channelId, currencies: 'EUR', total: 3066, token: 'tok_visa', bookings: bookingsOf(booking, 3333) })).json();
    expect(purchase).toMatchObject({ status: 'complete', forex_rate: '0.92' });
    const parts = [...Array(9).fill(333), 336] as number[];
    const eur = (usd: number) => convert({ amount: usd, from: 'USD', to: 'EUR', rate: '0.92' });
    // The EUR totals a client would send if the refunds were taken in the order fired.
    let before = 0;
    const bodies = parts.map((usd) => {
      const total = eur(before + usd) - eur(before);
      before += usd;
      return { transaction_types: 'refund', channels: shop.channelId, currencies: 'EUR', total, linked_id: purchase.id, bookings: bookingsOf(booking, usd) };
    });
    const responses = await Promise.all(bodies.map((refund) => post(t, shop, refund)));
    // A refund that lost the race is told the EUR total its part has now; the client sends that.
    for (const [index, first] of responses.entries()) {
      let response = first;
      for (let attempt = 0; response.statusCode === 400 && attempt < parts.length; attempt++) {
        const expected = /The total must be (\d+) EUR/.exec(response.json().data.params.total ?? '');
        expect(expected, JSON.stringify(response.json())).not.toBeNull();
        response = await post(t, shop, { ...bodies[index]!, total: Number(expected![1]) });
      }
      expect(response.statusCode).toBe(201);
      expect(response.json().status).toBe('complete');
    }
    const refunds = await t.db.query<{ total: number; channel_total: number }>(
      `SELECT total, channel_total FROM transactions WHERE linked_id = $1 AND type = 'refund' AND status = 'complete' ORDER BY id`, [purchase.id]);
    expect(refunds).toHaveLength(10);
    expect(refunds.reduce((sum, refund) => sum + refund.channel_total, 0)).toBe(3333);
    expect(refunds.reduce((sum, refund) => sum + refund.total, 0)).toBe(3066);
    // In the order they took the lock, each EUR part is the cumulative conversion's step.
    let usd = 0;
    let paid = 0;
    for (const refund of refunds) {
      usd += refund.channel_total;
      paid += refund.total;
      expect(paid).toBe(eur(usd));
    }
    expect((await get(t, shop, `/transactions/${purchase.id}`)).json()).toMatchObject({ total_remaining: 0 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0 });
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });
});
