import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { addUser } from '../support/fixtures.js';
import { bookingRow, createBooking, createShop, get, paymentsContext, post, type Body, type Shop } from './support.js';

/**
 * The bounds of what a transaction moves: of a payment, booking by booking (no share of 0, none
 * above what the payment paid it), what a declined refund gives back, and what a chargeback may
 * take and gives back when reversed. Each test here kills a mutation of prepare.ts, attempt.ts,
 * settle.ts or chargebacks.ts that every other test let pass.
 */

let t: TestContext;
let shop: Shop;
let operator: Shop;
let vaultId: number;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  operator = { ...shop, site: { ...shop.site, headers: (await addUser(t.db, shop.site.siteId, { role: 'member_admin', platformAdmin: true })).headers } };
  vaultId = (await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: shop.currency, total: 0, token: 'tok_visa' })).json().id;
});
afterAll(async () => t.close());

const body = (fields: Body): Body => ({ channels: shop.channelId, currencies: shop.currency, ...fields });
const shares = (...items: [number, number][]) => items.map(([id, total]) => ({ id, currencies: shop.currency, total }));

/** A retained purchase paying each booking its share, complete. */
async function paid(...items: [number, number][]) {
  const total = items.reduce((sum, [, amount]) => sum + amount, 0);
  const response = await post(t, shop, body({ transaction_types: 'retained_purchase', total, linked_id: vaultId, bookings: shares(...items) }));
  expect(response.json()).toMatchObject({ status: 'complete', total_remaining: total });
  return response.json();
}

describe('refund bounds per booking', () => {
  it('refuses a refund of one booking above what the payment paid it, though the payment has more left, and changes nothing', async () => {
    const [a, b] = [await createBooking(t, shop, { total: 1000 }), await createBooking(t, shop, { total: 2000 })];
    const payment = await paid([a, 1000], [b, 2000]);
    const over = await post(t, shop, body({ transaction_types: 'refund', total: 1001, linked_id: payment.id, bookings: shares([a, 1001]) }));
    expect(over.statusCode).toBe(400);
    expect(over.json().data.params).toEqual({ bookings: `Booking ${a}: at most 1000 of the linked transaction is available for it.` });
    expect((await get(t, shop, `/transactions/${payment.id}`)).json().total_remaining).toBe(3000);
    expect(await bookingRow(t, a)).toMatchObject({ status: 'paid', total_paid: 1000 });
    // Exactly its share goes through, and then nothing more of it.
    const exact = await post(t, shop, body({ transaction_types: 'refund', total: 1000, linked_id: payment.id, bookings: shares([a, 1000]) }));
    expect(exact.json()).toMatchObject({ status: 'complete', total: 1000 });
    const again = await post(t, shop, body({ transaction_types: 'refund', total: 1, linked_id: payment.id, bookings: shares([a, 1]) }));
    expect(again.json().data.params).toEqual({ bookings: `Booking ${a}: at most 0 of the linked transaction is available for it.` });
    expect(await bookingRow(t, a)).toMatchObject({ status: 'unpaid', total_paid: 0 });
    expect(await bookingRow(t, b)).toMatchObject({ status: 'paid', total_paid: 2000 });
  });
});

describe('a booking named with nothing of the money', () => {
  it('is refused on bookings, in a payment and in a refund: a booking the transaction moves nothing of is left out', async () => {
    const [a, b] = [await createBooking(t, shop, { total: 1000 }), await createBooking(t, shop, { total: 2000 })];
    const zero = (id: number) => `Booking ${id}: its total must be a positive amount in cents; leave out a booking this transaction moves nothing of.`;
    const payment = await post(t, shop, body({ transaction_types: 'retained_purchase', total: 1000, linked_id: vaultId, bookings: shares([a, 1000], [b, 0]) }));
    expect(payment.statusCode).toBe(400);
    expect(payment.json().data.params).toEqual({ bookings: zero(b) });
    expect(await bookingRow(t, b)).toMatchObject({ status: 'unpaid', transaction_ids: [] });
    const both = await paid([a, 1000], [b, 2000]);
    const refund = await post(t, shop, body({ transaction_types: 'refund', total: 500, linked_id: both.id, bookings: shares([a, 500], [b, 0]) }));
    expect(refund.json().data.params).toEqual({ bookings: zero(b) });
    expect(await bookingRow(t, b)).toMatchObject({ status: 'paid', transaction_ids: [both.id] });
  });
});

describe('a declined refund', () => {
  it('gives its amount back: the payment and the booking stay refundable in full', async () => {
    const booking = await createBooking(t, shop, { total: 3000 });
    const payment = await paid([booking, 3000]);
    // A total ending in 51 is declined by the sandbox on a test channel (800.100.151).
    const declined = await post(t, shop, body({ transaction_types: 'refund', total: 1051, linked_id: payment.id, bookings: shares([booking, 1051]) }));
    expect(declined.json()).toMatchObject({ status: 'failed', total: 1051 });
    expect(declined.json().content).toContain('800.100.151');
    expect((await get(t, shop, `/transactions/${payment.id}`)).json().total_remaining).toBe(3000);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 3000 });
    const whole = await post(t, shop, body({ transaction_types: 'refund', total: 3000, linked_id: payment.id, bookings: shares([booking, 3000]) }));
    expect(whole.json()).toMatchObject({ status: 'complete', total: 3000 });
    expect((await get(t, shop, `/transactions/${payment.id}`)).json().total_remaining).toBe(0);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0 });
  });
});

describe('a declined capture', () => {
  it('gives the whole authorisation back, in both currencies of a forex one: it is then captured in full', async () => {
    // 3500 USD paid in EUR at the sandbox's 0.92: 3220 EUR authorised.
    const booking = await createBooking(t, shop, { total: 3500 });
    const usd = (total: number) => [{ id: booking, currencies: 'USD', total }];
    const authorisation = (await post(t, shop, { transaction_types: 'retained_authorize', channels: shop.channelId, currencies: 'EUR', total: 3220, linked_id: vaultId, bookings: usd(3500) })).json();
    expect(authorisation).toMatchObject({ status: 'complete', total_remaining: 3220, forex_rate: '0.92' });
    // 1251 USD is 1150.92 → 1151 EUR, which the sandbox declines (800.100.151).
    const declined = (await post(t, shop, { transaction_types: 'capture', channels: shop.channelId, currencies: 'EUR', total: 1151, linked_id: authorisation.id, bookings: usd(1251) })).json();
    expect(declined).toMatchObject({ status: 'failed', total: 1151 });
    expect((await get(t, shop, `/transactions/${authorisation.id}`)).json().total_remaining).toBe(3220);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'authorized', total_authorized: 3500 });
    const whole = await post(t, shop, { transaction_types: 'capture', channels: shop.channelId, currencies: 'EUR', total: 3220, linked_id: authorisation.id, bookings: usd(3500) });
    expect(whole.json()).toMatchObject({ status: 'complete', total: 3220 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 3500, total_authorized: 0 });
  });
});

describe('a payment under a chargeback', () => {
  it('takes no refund, saying why, and keeps what it had left', async () => {
    const booking = await createBooking(t, shop, { total: 2000 });
    const payment = await paid([booking, 2000]);
    const chargeback = await post(t, operator, { transaction_types: 'chargeback', linked_id: payment.id, total: 500 });
    expect(chargeback.json()).toMatchObject({ status: 'complete', total: 500 });
    expect((await get(t, shop, `/transactions/${payment.id}`)).json()).toMatchObject({ status: 'locked', total_remaining: 1500 });
    const refund = await post(t, shop, body({ transaction_types: 'refund', total: 100, linked_id: payment.id, bookings: shares([booking, 100]) }));
    expect(refund.statusCode).toBe(400);
    expect(refund.json().data.params).toEqual({ linked_id: 'The linked transaction is locked by a chargeback.' });
    expect((await get(t, shop, `/transactions/${payment.id}`)).json()).toMatchObject({ status: 'locked', total_remaining: 1500 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'locked', total_paid: 1500 });
  });

  it('takes a further chargeback of at most what is left, one unit more is refused on total', async () => {
    const booking = await createBooking(t, shop, { total: 2000 });
    const payment = await paid([booking, 2000]);
    expect((await post(t, operator, { transaction_types: 'chargeback', linked_id: payment.id, total: 500 })).statusCode).toBe(201);
    const over = await post(t, operator, { transaction_types: 'chargeback', linked_id: payment.id, total: 1501 });
    expect(over.statusCode).toBe(400);
    expect(over.json().data.params).toEqual({ total: 'The chargeback exceeds the amount not yet refunded or charged back, 1500.' });
    expect((await get(t, shop, `/transactions/${payment.id}`)).json()).toMatchObject({ status: 'locked', total_remaining: 1500 });
    const rest = await post(t, operator, { transaction_types: 'chargeback', linked_id: payment.id, total: 1500 });
    expect(rest.json()).toMatchObject({ status: 'complete', total: 1500 });
    expect((await get(t, shop, `/transactions/${payment.id}`)).json()).toMatchObject({ status: 'locked', total_remaining: 0 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'locked', total_paid: 0, locked_transactions: 1 });
  });

  it('two chargebacks of one payment lock its booking once: reversing both (each at most what it took) unlocks it, paid again in full', async () => {
    const booking = await createBooking(t, shop, { total: 2000 });
    const payment = await paid([booking, 2000]);
    const first = (await post(t, operator, { transaction_types: 'chargeback', linked_id: payment.id, total: 500 })).json();
    const second = (await post(t, operator, { transaction_types: 'chargeback', linked_id: payment.id, total: 700 })).json();
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'locked', total_paid: 800 });
    const over = await post(t, operator, { transaction_types: 'chargeback-reversal', linked_id: first.id, total: 501 });
    expect(over.statusCode).toBe(400);
    expect(over.json().data.params).toEqual({ total: 'At most 500 of the chargeback is still open.' });
    for (const chargeback of [first, second]) {
      const reversal = await post(t, operator, { transaction_types: 'chargeback-reversal', linked_id: chargeback.id, total: chargeback.total });
      expect(reversal.json()).toMatchObject({ status: 'complete', total: chargeback.total });
    }
    expect((await get(t, shop, `/transactions/${payment.id}`)).json()).toMatchObject({ status: 'complete', total_remaining: 2000 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 2000, locked_transactions: 0 });
  });
});
