import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { addChannel, bookingRow, createBooking, post, purchaseBody, shopContext, type Body, type Shop } from './support.js';

// A closed channel takes no new money, but what it already took can still go back: refunds and
// voids of its transactions work, in the processor mode the original was made in (docs/payments.md
// "Closed channels"). They were refused with "The channel is closed and takes no payments.", and a
// merchant could neither refund a customer nor release an amount held on a card.
let t: TestContext;
let shop: Shop;
beforeAll(async () => ({ t, shop } = await shopContext()));
afterAll(async () => t.close());

const onChannel = (channelId: number, fields: Body): Body => ({ channels: channelId, currencies: 'USD', ...fields });
const share = (bookingId: number, total: number) => ({ bookings: [{ id: bookingId, currencies: 'USD', total }] });
const close = (channelId: number) => t.db.query(`UPDATE channels SET account_mode = 'closed' WHERE id = $1`, [channelId]);

/** The mode the sandbox received a transaction's call in. */
async function sandboxModeOf(transactionId: number): Promise<string> {
  const row = await t.db.one<{ mode: string }>('SELECT o.mode FROM sandbox_operations o JOIN transactions t ON t.uuid::text = o.reference WHERE t.id = $1', [transactionId]);
  return row.mode;
}

describe('a closed channel', () => {
  it('refunds a purchase it took, in the test mode the purchase was made in', async () => {
    const channel = await addChannel(t, shop);
    const booking = await createBooking(t, shop, { channelId: channel, total: 3000 });
    const purchase = (await post(t, shop, onChannel(channel, purchaseBody(shop, booking, 3000, { channels: channel })))).json();
    expect(purchase.status).toBe('complete');
    await close(channel);
    const refund = await post(t, shop, onChannel(channel, { transaction_types: 'refund', total: 1000, linked_id: purchase.id, ...share(booking, 1000) }));
    expect(refund.statusCode).toBe(201);
    expect(refund.json()).toMatchObject({ status: 'complete', linked_id: purchase.id });
    expect(await sandboxModeOf(refund.json().id)).toBe('test');
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'partial-payment', total_paid: 2000 });
  });

  it('voids an authorisation, releasing the held amount, and refuses its capture', async () => {
    const channel = await addChannel(t, shop);
    const booking = await createBooking(t, shop, { channelId: channel, total: 4000 });
    const authorization = (await post(t, shop, onChannel(channel, { transaction_types: 'authorize', total: 4000, token: 'tok_mastercard', ...share(booking, 4000) }))).json();
    expect(authorization.status).toBe('complete');
    await close(channel);
    const capture = await post(t, shop, onChannel(channel, { transaction_types: 'capture', total: 4000, linked_id: authorization.id, ...share(booking, 4000) }));
    expect(capture.statusCode).toBe(400);
    expect(capture.json().data.params.channels).toMatch(/closed.*void the authorisation/);
    const voided = await post(t, shop, onChannel(channel, { transaction_types: 'void', total: 4000, linked_id: authorization.id, ...share(booking, 4000) }));
    expect(voided.statusCode).toBe(201);
    expect(voided.json()).toMatchObject({ status: 'complete', linked_id: authorization.id });
    expect(await sandboxModeOf(voided.json().id)).toBe('test');
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_authorized: 0 });
  });

  it('still takes no new money: purchases, authorisations, vaulting and retained charges are refused', async () => {
    const channel = await addChannel(t, shop);
    const vault = (await post(t, shop, onChannel(channel, { transaction_types: 'vault', total: 0, token: 'tok_visa' }))).json();
    await close(channel);
    const booking = await createBooking(t, shop, { channelId: channel, total: 2000 });
    const requests: [string, Body][] = [
      ['purchase', { transaction_types: 'purchase', total: 2000, token: 'tok_visa', ...share(booking, 2000) }],
      ['authorize', { transaction_types: 'authorize', total: 2000, token: 'tok_visa', ...share(booking, 2000) }],
      ['vault', { transaction_types: 'vault', total: 0, token: 'tok_visa' }],
      ['retained_purchase', { transaction_types: 'retained_purchase', total: 2000, linked_id: vault.id, ...share(booking, 2000) }],
      ['retained_authorize', { transaction_types: 'retained_authorize', total: 2000, linked_id: vault.id, ...share(booking, 2000) }],
    ];
    for (const [type, body] of requests) {
      const response = await post(t, shop, onChannel(channel, body));
      expect(response.statusCode, type).toBe(400);
      expect(response.json().data.params.channels, type).toBe('The channel is closed and takes no payments.');
    }
    expect((await bookingRow(t, booking)).total_paid).toBe(0);
  });

  it('refunds in the mode of the original, not the mode the channel has now', async () => {
    // A test channel the operator moved to live: its sandbox payments are refunded in test mode.
    const channel = await addChannel(t, shop);
    const booking = await createBooking(t, shop, { channelId: channel, total: 1500 });
    const purchase = (await post(t, shop, onChannel(channel, purchaseBody(shop, booking, 1500, { channels: channel })))).json();
    await t.db.query(`UPDATE channels SET account_mode = 'live' WHERE id = $1`, [channel]);
    const refund = await post(t, shop, onChannel(channel, { transaction_types: 'refund', total: 1500, linked_id: purchase.id, ...share(booking, 1500) }));
    expect(refund.json()).toMatchObject({ status: 'complete' });
    expect(await sandboxModeOf(refund.json().id)).toBe('test');
  });
});

describe('a channel the operator set to channel_status closed or locked', () => {
  it('takes no new money, and still refunds what it took', async () => {
    for (const status of ['closed', 'locked']) {
      const channel = await addChannel(t, shop);
      const booking = await createBooking(t, shop, { channelId: channel, total: 3000 });
      const purchase = (await post(t, shop, onChannel(channel, purchaseBody(shop, booking, 2000, { channels: channel })))).json();
      expect(purchase.status).toBe('complete');
      await t.db.query(`UPDATE channels SET channel_status = $2 WHERE id = $1`, [channel, status]);

      const more = await post(t, shop, onChannel(channel, { transaction_types: 'purchase', total: 1000, token: 'tok_visa', ...share(booking, 1000) }));
      expect(more.statusCode, status).toBe(400);
      expect(more.json().data.params.channels, status).toBe(`The channel is ${status} and takes no payments.`);
      const refund = await post(t, shop, onChannel(channel, { transaction_types: 'refund', total: 2000, linked_id: purchase.id, ...share(booking, 2000) }));
      expect(refund.statusCode, status).toBe(201);
      expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0 });
    }
  });
});
