import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { raceOnRow } from '../support/lock-race.js';
import { addChannel, bookingRow, createBooking, post, purchaseBody, shopContext, type Shop } from './support.js';

// A payment checks its bookings when it is prepared, without locks, then locks them to record
// the attempt. A DELETE, or a PUT moving the booking to another channel, that commits in between
// saw no transaction on the booking and went through: the payment was then recorded on a deleted
// booking, or on one now on another channel and currency, and charged. The race is made certain
// here by holding the booking's row lock while the payment waits for it, and changing the booking
// as the DELETE or PUT would before letting it go.
let t: TestContext;
let shop: Shop;
beforeAll(async () => {
  ({ t, shop } = await shopContext());
});
afterAll(async () => t.close());

/** Runs `change` on the booking while a purchase of it waits for the booking's lock; the purchase's answer. */
function purchaseRacing(booking: number, total: number, change: string, values: unknown[]) {
  // The purchase passes its checks, then waits for the booking's lock while the change is made.
  return raceOnRow(t.db, { table: 'bookings', id: booking, request: () => post(t, shop, purchaseBody(shop, booking, total)), change: { sql: change, values: [booking, ...values] } });
}

const charges = async (booking: number) =>
  (await t.db.query('SELECT t.id FROM transactions t JOIN transaction_bookings tb ON tb.transaction_id = t.id WHERE tb.booking_id = $1', [booking])).length;

describe('a booking changed while a payment of it was being prepared', () => {
  it('deleted: the payment is refused and nothing is charged or written', async () => {
    const booking = await createBooking(t, shop, { total: 2500 });
    const response = await purchaseRacing(booking, 2500, 'UPDATE bookings SET deleted_at = now() WHERE id = $1', []);
    expect(response.json()).toEqual({ code: 'rest_invalid_param', message: expect.any(String), data: { status: 400, params: { bookings: `Unknown booking ${booking}.` } } });
    expect(await charges(booking)).toBe(0);
    expect(await bookingRow(t, booking)).toMatchObject({ total_paid: 0, transaction_ids: [] });
  });

  it('moved to another channel: the payment on the old channel is refused and nothing is charged', async () => {
    const euros = await addChannel(t, shop, { currency: 'EUR' });
    const booking = await createBooking(t, shop, { total: 2600 });
    const response = await purchaseRacing(booking, 2600, `UPDATE bookings SET channel_id = $2, currency = 'EUR' WHERE id = $1`, [euros]);
    expect(response.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { bookings: expect.stringContaining('was moved to another channel') } } });
    expect(await charges(booking)).toBe(0);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0 });
  });

  it('unchanged: the payment waits for the lock and goes through', async () => {
    const booking = await createBooking(t, shop, { total: 2700 });
    const response = await purchaseRacing(booking, 2700, 'UPDATE bookings SET modified_at = now() WHERE id = $1', []);
    expect(response.json()).toMatchObject({ status: 'complete' });
    expect((await bookingRow(t, booking)).total_paid).toBe(2700);
  });
});
