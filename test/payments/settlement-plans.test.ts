import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { wholeTableReadsDuring } from '../support/scans.js';
import { createBooking, post, vaultedShopContext, type Shop } from './support.js';

// A batch of settlements writes its rows in one statement, and its answers for the
// Idempotency-Keys in another (create.ts). Both join the batch's rows to tables that grow with
// every payment. What a merchant would notice if they read those tables whole: every payment
// slower as the history grows (session 17 measured 5 of the write's 8 ms on 12,000 rows).
let t: TestContext;
let shop: Shop;
let vaultId: number;
beforeAll(async () => void ({ t, shop, vaultId } = await vaultedShopContext()));
afterAll(async () => t.close());

/** Payments of the past, written directly: `count` transactions with one share each and their keys. */
async function history(count: number): Promise<void> {
  const booking = await createBooking(t, shop, { total: 1000 });
  await t.db.query(
    `WITH made AS (
       INSERT INTO transactions (site_id, channel_id, author_id, type, status, total, currency, linked_id, card_id, content)
       SELECT v.site_id, v.channel_id, v.author_id, 'retained_purchase', 'complete', 1000, v.currency, v.id, v.card_id, 'history'
         FROM transactions v, generate_series(1, $2) WHERE v.id = $1
       RETURNING id, site_id)
     , shares AS (INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position) SELECT id, $3, 1000, 1000, 1 FROM made)
     INSERT INTO idempotency_keys (site_id, key, request_hash, status, created_at, transaction_id)
     SELECT site_id, 'history-' || id, 'hash', 'done', now(), id FROM made`,
    [vaultId, count, booking],
  );
  await t.db.query('ANALYZE transactions, transaction_bookings, idempotency_keys');
}

describe('a batch of settlements on a long history', () => {
  it('finds its transactions, their shares and its Idempotency-Keys by key, never reading those tables whole', async () => {
    await history(6000);
    const bookings = await Promise.all(Array.from({ length: 8 }, () => createBooking(t, shop, { total: 2500 })));
    const pay = () => Promise.all(bookings.map((booking, index) => post(t, shop, {
      transaction_types: 'retained_purchase', channels: shop.channelId, currencies: 'USD', total: 2500, linked_id: vaultId,
      bookings: [{ id: booking, currencies: 'USD', total: 2500 }],
    }, { 'idempotency-key': `long-history-${index}` })));
    const { result: responses, reads } = await wholeTableReadsDuring(['transactions_settle_views', 'idempotency_store'], pay);
    expect(responses.map((response) => [response.statusCode, response.json().status])).toEqual(bookings.map(() => [201, 'complete']));
    const grown = ['transactions', 'transaction_bookings', 'idempotency_keys'];
    for (const [statement, runs] of reads) {
      expect(runs.length, statement).toBeGreaterThan(0);
      for (const tables of runs) expect(tables.filter((table) => grown.includes(table)), statement).toEqual([]);
    }
  });
});
