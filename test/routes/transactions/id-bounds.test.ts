import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../../support/context.js';
import { createBooking, createShop, paymentsContext, post, purchaseBody, type Shop } from '../../payments/support.js';

/**
 * Integer ids beyond what the database (bigint) and JavaScript (safe integers) hold are bad
 * input: 400 with the spec's error shape, never a 500, and nothing is written.
 */
let t: TestContext;
let shop: Shop;
let booking: number;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  booking = await createBooking(t, shop, { total: 5000 });
});
afterAll(async () => t.close());

const huge = [Number.MAX_SAFE_INTEGER + 1, 2 ** 63, 9223372036854775807, 1e20, 1e300];

async function transactionCount(): Promise<number> {
  return (await t.db.one<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE site_id = $1', [shop.site.siteId])).n;
}

function expectBadParam(response: { statusCode: number; json: () => unknown }, param: string): void {
  expect(response.statusCode).toBe(400);
  const body = response.json() as { code: string; message: string; data: { status: number; params?: Record<string, string> } };
  expect(body.code).toBe('rest_invalid_param');
  expect(body.data.status).toBe(400);
  expect(Object.keys(body.data.params ?? {}).join(',')).toContain(param);
}

describe('integer ids out of range', () => {
  const bodies: Array<[string, (id: number) => Record<string, unknown>]> = [
    ['bookings', (id) => ({ ...purchaseBody(shop, booking, 1000), bookings: [{ id, currencies: shop.currency, total: 1000 }] })],
    ['channels', (id) => ({ ...purchaseBody(shop, booking, 1000), channels: id })],
    ['linked_id', (id) => ({ transaction_types: 'refund', channels: shop.channelId, currencies: shop.currency, total: 100, linked_id: id, bookings: [{ id: booking, currencies: shop.currency, total: 100 }] })],
    ['allocations', (id) => ({ ...purchaseBody(shop, booking, 1000), allocations: [{ channels: id, total: 100 }] })],
  ];

  for (const [param, body] of bodies) {
    it(`POST transactions: ${param} beyond the safe integer range is 400 and writes nothing`, async () => {
      const before = await transactionCount();
      for (const id of huge) {
        const response = await post(t, shop, body(id));
        expectBadParam(response, param);
        expect(Object.values(response.json().data.params)).toEqual([`must be <= ${Number.MAX_SAFE_INTEGER}`]);
      }
      expect(await transactionCount()).toBe(before);
    });
  }

  it('POST transactions: the largest safe id is in range (a 400 for an unknown id, not a 500)', async () => {
    for (const [param, body] of bodies) {
      const response = await post(t, shop, body(Number.MAX_SAFE_INTEGER));
      expect([400, 404], `${param}: ${response.body}`).toContain(response.statusCode);
    }
  });

  it('GET transactions: ids beyond the range in query filters are 400', async () => {
    for (const param of ['include', 'exclude', 'channels', 'channels_exclude']) {
      for (const id of ['9007199254740993', '9223372036854775808', '1' + '0'.repeat(20)]) {
        const response = await t.app.inject({ url: `${shop.base}/transactions?${param}=${id}`, headers: shop.site.headers });
        expectBadParam(response, param);
      }
    }
  });

  it('GET transactions/{id}: an id beyond the range is 404 rest_post_invalid_id', async () => {
    for (const id of ['9007199254740993', '9223372036854775808', '1' + '0'.repeat(30)]) {
      const response = await t.app.inject({ url: `${shop.base}/transactions/${id}`, headers: shop.site.headers });
      expect(response.statusCode).toBe(404);
      expect(response.json().code).toBe('rest_post_invalid_id');
    }
  });

  it('fuzz: any integer id in any id field is answered below 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...bodies), fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }).map(Math.trunc), fc.constantFrom(...huge)), async ([param, body], id) => {
        const response = await post(t, shop, body(id));
        expect(response.statusCode, `${param}=${id}: ${response.body}`).toBeLessThan(500);
        if (response.statusCode >= 400) expect(response.json().data.status).toBe(response.statusCode);
      }),
      { numRuns: 60 },
    );
  });
});
