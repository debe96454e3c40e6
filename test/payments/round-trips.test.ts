import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { statementsDuring } from '../support/statements.js';
import { createBooking, createShop, paymentsContext, post, type Shop } from './support.js';

/**
 * The round trips to PostgreSQL of one POST retained_purchase with an Idempotency-Key (issue 7,
 * docs/performance.md): every statement sent by any pool of the process (API and sandbox),
 * counted on the pg client, and the waits for their answers. A regression here is a regression of the payments path's throughput.
 */

let t: TestContext;
let shop: Shop;
let vaultId: number;

beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  const vault = await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: shop.currency, total: 0, token: 'tok_visa' });
  vaultId = vault.json().id;
});

afterAll(async () => {
  await t?.close();
});

describe('POST retained_purchase round trips', () => {
  it('pays a fresh booking within the statement budget', async () => {
    const bookingId = await createBooking(t, shop, { total: 5_000 });
    const { result: response, statements, roundTrips } = await statementsDuring(() =>
      post(
        t,
        shop,
        { transaction_types: 'retained_purchase', channels: shop.channelId, currencies: shop.currency, total: 5_000, linked_id: vaultId, bookings: [{ id: bookingId, currencies: shop.currency, total: 5_000 }] },
        { 'idempotency-key': 'round-trips-1' },
      ));
    expect(response.statusCode).toBe(201);
    expect(response.json().status).toBe('complete');
    if (process.env.ROUND_TRIPS_LOG) console.log(statements.map((text, index) => `${index + 1}. ${text.replace(/\s+/g, ' ').slice(0, 160)}`).join('\n'));
    // The count is of the purchase's own statements (a recorder that saw nothing would pass the budget).
    expect(statements.some((text) => text.startsWith('[transaction_insert] '))).toBe(true);
    expect(statements.length).toBeLessThanOrEqual(11);
    // The remembered principal is checked by the attempt's look-up (no epoch read of its own);
    // BEGIN travels with the first statement of the attempt and of the settlement, COMMIT with
    // the last of each (src/storage/db.ts): 11 statements, 7 waits.
    expect(roundTrips).toBeLessThanOrEqual(7);
  });
});
