import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { createBooking, createShop, paymentsContext, post, purchaseBody, type Shop } from '../payments/support.js';

/**
 * Ids beyond the integer range (JSON numbers such as 1e20 are integers to the validator) must be
 * refused at the edge with 400, never reach PostgreSQL as out-of-range bigints (a 500).
 */
let t: TestContext;
let shop: Shop;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
});
afterAll(async () => t.close());

describe('integer ids out of range', () => {
  it('an allocation to channel 1e20 is a 400 on allocations, and nothing is recorded', async () => {
    const booking = await createBooking(t, shop, { total: 5000 });
    const count = async () => (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM transactions')).count;
    const before = await count();
    for (const channels of [1e20, 2 ** 53]) {
      const reply = await post(t, shop, purchaseBody(shop, booking, 5000, { allocations: [{ channels, total: 100 }] }));
      expect(reply.statusCode).toBe(400);
      expect(reply.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400 } });
      expect(Object.keys(reply.json().data.params).join()).toMatch(/allocations/);
    }
    expect(await count()).toBe(before);
  });
});
