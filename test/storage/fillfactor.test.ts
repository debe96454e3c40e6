import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, insertBooking, insertChannel } from '../emails/support/fixtures.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t?.close());

// Migration 020: pages keep room for the next versions of their rows (docs/performance.md,
// session 15). pg_stat_xact_user_tables counts this database transaction's own updates at once.
async function updatesOf(tx: { query: TestContext['db']['query'] }, table: string): Promise<{ updated: number; hot: number }> {
  const [row] = await tx.query<{ updated: number; hot: number }>(
    'SELECT n_tup_upd::int AS updated, n_tup_hot_upd::int AS hot FROM pg_stat_xact_user_tables WHERE relname = $1', [table]);
  return row ?? { updated: 0, hot: 0 };
}

describe('room on the page for a payment\'s updates', () => {
  it('a booking whose page inserts filled is still updated in place (HOT): no new entry in any of its indexes', async () => {
    const site = await createSite(t.db);
    const channelId = await insertChannel(t.db, site);
    await t.db.transaction(async (tx) => {
      // Enough bookings after the first to fill its page as far as inserts may.
      const ids: number[] = [];
      for (let index = 0; index < 60; index++) ids.push(await insertBooking(tx, site, { channelId, reference: `FILL-${index}` }));
      // What a payment's attempt and settlement change; none of these columns is indexed.
      await tx.query(
        `UPDATE bookings SET transaction_ids = array_append(transaction_ids, 1), status = 'paid', total_paid = total, modified_at = now() WHERE id = $1`,
        [ids[0]],
      );
      expect(await updatesOf(tx, 'bookings')).toEqual({ updated: 1, hot: 1 });
    });
  });
});
