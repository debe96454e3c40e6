import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../../support/context.js';
import { addChannel, createBooking, createShop, paymentsContext, post, purchaseBody, type Shop } from '../../payments/support.js';

/**
 * A channel can hold money without having bookings: allocations from another channel credit its
 * funds. Such a channel must keep its currency (its ledger is in that currency) and must not be
 * deleted (the money would be stranded on a deleted channel), exactly like a channel with bookings.
 */
let t: TestContext;
let shop: Shop;
let receiving: number;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  receiving = await addChannel(t, shop);
  const booking = await createBooking(t, shop, { total: 10_000 });
  const paid = await post(t, shop, purchaseBody(shop, booking, 10_000, { allocations: [{ channels: receiving, total: 2_500 }] }));
  expect(paid.statusCode).toBe(201);
  expect(paid.json().status).toBe('complete');
  const entries = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM ledger_entries WHERE channel_id = $1', [receiving]);
  expect(entries.count).toBeGreaterThan(0);
});
afterAll(async () => t.close());

const channelUrl = (id: number) => `${shop.base}/channels/${id}`;

describe('a channel holding allocated money but no bookings', () => {
  it('keeps its currency', async () => {
    const reply = await t.app.inject({ method: 'PUT', url: channelUrl(receiving), headers: shop.site.headers, payload: { currencies: 'EUR' } });
    expect(reply.statusCode).toBe(400);
    expect(reply.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { currencies: expect.any(String) } } });
    const row = await t.db.one<{ currency: string }>('SELECT currency FROM channels WHERE id = $1', [receiving]);
    expect(row.currency.trim()).toBe('USD');
  });

  it('cannot be deleted', async () => {
    const reply = await t.app.inject({ method: 'DELETE', url: channelUrl(receiving), headers: shop.site.headers });
    expect(reply.statusCode).toBe(409);
    expect((await t.app.inject({ url: channelUrl(receiving), headers: shop.site.headers })).statusCode).toBe(200);
  });

  it('a channel without any money history still changes currency and is deleted (control)', async () => {
    const empty = await addChannel(t, shop);
    expect((await t.app.inject({ method: 'PUT', url: channelUrl(empty), headers: shop.site.headers, payload: { currencies: 'EUR' } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: channelUrl(empty), headers: shop.site.headers })).statusCode).toBe(200);
  });
});
