import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { raceOnRow } from '../support/lock-race.js';
import { addChannel, bookingRow, createBooking, post, purchaseBody, shopContext, type Shop } from '../payments/support.js';

// A payment plans its allocations without locks, then records them with the attempt. A target
// channel deleted, closed or switched to another currency in between (deleteChannel and
// updateChannel lock its row, find no money planned to it yet, and change it) would have received
// the allocation regardless: credited while deleted, or in a currency it no longer keeps. The race
// is made certain by holding the target's row lock while the payment waits for it, and changing
// the channel as the DELETE or PUT would before letting it go.
let t: TestContext;
let shop: Shop;
beforeAll(async () => {
  ({ t, shop } = await shopContext());
});
afterAll(async () => t.close());

/** A purchase of a new booking allocating 1,000 to `target`, answered after `change` was made to the target under its lock. */
async function purchaseRacing(target: number, change: string) {
  const booking = await createBooking(t, shop, { total: 5000 });
  const response = await raceOnRow(t.db, {
    table: 'channels',
    id: target,
    request: () => post(t, shop, purchaseBody(shop, booking, 5000, { allocations: [{ channels: target, total: 1000 }] })),
    change: { sql: change, values: [target] },
  });
  return { booking, response };
}

const moneyOf = async (channel: number) =>
  (await t.db.query('SELECT 1 FROM allocations WHERE to_channel_id = $1 UNION ALL SELECT 1 FROM ledger_entries WHERE channel_id = $1', [channel])).length;

describe('an allocation target changed while a payment to it was being prepared', () => {
  it.each([
    ['deleted', 'UPDATE channels SET deleted_at = now() WHERE id = $1', /does not exist or may not receive allocations/],
    ['closed', `UPDATE channels SET account_mode = 'closed' WHERE id = $1`, /does not exist or may not receive allocations/],
    ['switched to another currency', `UPDATE channels SET currency = 'EUR' WHERE id = $1`, /does not accept USD: its currency is EUR/],
  ])('%s: the payment is refused on allocations and nothing is charged or allocated', async (_change, sql, reason) => {
    const target = await addChannel(t, shop);
    const { booking, response } = await purchaseRacing(target, sql);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { allocations: expect.stringMatching(reason) } } });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0, transaction_ids: [] });
    expect(await moneyOf(target)).toBe(0);
  });

  it('unchanged: the payment waits for the target and allocates to it', async () => {
    const target = await addChannel(t, shop);
    const { booking, response } = await purchaseRacing(target, 'UPDATE channels SET modified_at = now() WHERE id = $1');
    expect(response.json()).toMatchObject({ status: 'complete', allocations: [expect.objectContaining({ channels: target, total: 1000 })] });
    expect((await bookingRow(t, booking)).total_paid).toBe(5000);
    expect(await moneyOf(target)).toBeGreaterThan(0);
  });
});
