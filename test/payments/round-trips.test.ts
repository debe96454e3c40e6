import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { createBooking, createShop, paymentsContext, post, type Shop } from './support.js';

/**
 * The round trips to PostgreSQL of one POST retained_purchase with an Idempotency-Key (issue 7,
 * docs/performance.md): every statement sent by any pool of the process (API and sandbox),
 * counted on the pg client. A regression here is a regression of the payments path's throughput.
 */

let t: TestContext;
let shop: Shop;
let vaultId: number;
const statements: string[] = [];
const originalQuery = pg.Client.prototype.query;

beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  const vault = await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: shop.currency, total: 0, token: 'tok_visa' });
  vaultId = vault.json().id;
  (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text: string; name?: string };
    statements.push(typeof first === 'string' ? first : `${first.name ? `[${first.name}] ` : ''}${first.text}`);
    return (originalQuery as (...rest: unknown[]) => unknown).apply(this, args);
  } as never;
});

afterAll(async () => {
  (pg.Client.prototype as { query: unknown }).query = originalQuery;
  await t?.close();
});

describe('POST retained_purchase round trips', () => {
  it('pays a fresh booking within the statement budget', async () => {
    const bookingId = await createBooking(t, shop, { total: 5_000 });
    statements.length = 0;
    const response = await post(
      t,
      shop,
      { transaction_types: 'retained_purchase', channels: shop.channelId, currencies: shop.currency, total: 5_000, linked_id: vaultId, bookings: [{ id: bookingId, currencies: shop.currency, total: 5_000 }] },
      { 'idempotency-key': 'round-trips-1' },
    );
    expect(response.statusCode).toBe(201);
    expect(response.json().status).toBe('complete');
    if (process.env.ROUND_TRIPS_LOG) console.log(statements.map((text, index) => `${index + 1}. ${text.replace(/\s+/g, ' ').slice(0, 160)}`).join('\n'));
    expect(statements.length).toBeLessThanOrEqual(13);
  });
});
