import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForInFlight, waitForMailDrain } from '../../bench/in-flight.js';
import { deliverPendingMails } from '../../src/jobs/mail-delivery.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { insertChannel, paidWithMailsRequested } from '../emails/support/fixtures.js';

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

// Before the ceiling's next slice, the bench also waits for the delivery job to have rendered and
// sent the purchases' mails, so that work is not measured against the ceiling.
const paidWithMails = async (site: SiteFixture) => paidWithMailsRequested(t.db, site, { channelId: await insertChannel(t.db, site) });

describe('bench: waiting for the mails of a run', () => {
  it('returns once the delivery job has rendered and sent them', async () => {
    const site = await createSite(t.db);
    const transactionId = await paidWithMails(site);
    setTimeout(() => void deliverPendingMails(t.context), 300);
    const drain = await waitForMailDrain(t.db, { siteId: site.siteId, timeoutMs: 10_000, pollMs: 20 });
    expect(drain.drained).toBe(true);
    expect(drain.seconds).toBeGreaterThan(0.2);
    expect(await t.db.query(`SELECT status FROM email_outbox WHERE transaction_id = $1`, [transactionId])).toEqual([{ status: 'sent' }]);
  });

  it('gives up after its bound while a request waits', async () => {
    const site = await createSite(t.db);
    await paidWithMails(site);
    expect(await waitForMailDrain(t.db, { siteId: site.siteId, timeoutMs: 200, pollMs: 20 })).toMatchObject({ drained: false });
  });
});
