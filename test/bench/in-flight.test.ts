import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForInFlight } from '../../bench/in-flight.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite } from '../support/fixtures.js';

// The bench counts its retained purchases only once the requests autocannon abandoned have
// finished: an Idempotency-Key of the run still in flight keeps it waiting, bounded.
let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

const claim = (siteId: number, key: string) =>
  t.db.query(`INSERT INTO idempotency_keys (site_id, key, request_hash, status, created_at) VALUES ($1, $2, 'h', 'in_flight', now())`, [siteId, key]);
const finish = (siteId: number, key: string) => t.db.query(`UPDATE idempotency_keys SET status = 'done', response_status = 201 WHERE site_id = $1 AND key = $2`, [siteId, key]);

describe('bench: waiting for in-flight requests', () => {
  it('returns only after the last request of the run has answered', async () => {
    const site = await createSite(t.db);
    await claim(site.siteId, 'bench-run1-7');
    await claim(site.siteId, 'other-key'); // another run's or a client's key does not count
    let finished = false;
    const done = new Promise<void>((resolve) => {
      setTimeout(() => void finish(site.siteId, 'bench-run1-7').then(() => { finished = true; resolve(); }), 300);
    });
    const quiet = await waitForInFlight(t.db, { siteId: site.siteId, keyPrefix: 'bench-run1-', transactionType: 'retained_purchase', timeoutMs: 10_000, pollMs: 20 });
    expect(quiet).toBe(true);
    expect(finished).toBe(true);
    await done;
  });

  it('gives up after its bound when a request never finishes', async () => {
    const site = await createSite(t.db);
    await claim(site.siteId, 'bench-run2-1');
    expect(await waitForInFlight(t.db, { siteId: site.siteId, keyPrefix: 'bench-run2-', transactionType: 'retained_purchase', timeoutMs: 200, pollMs: 20 })).toBe(false);
  });
});
