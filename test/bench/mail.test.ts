import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createShop, measureMailPipeline } from '../../bench/mail.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { tempDirForFile } from '../support/temp-dir.js';

// npm run bench:mail's figures come from this loop: it must have rendered and sent every receipt
// it requested, a batch per run, before it reports a rate.
const dataDir = tempDirForFile('bench-mail');
let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ env: { DATA_DIR: dataDir } });
});
afterAll(async () => t.close());

describe('bench: the mail pipeline', () => {
  it('renders and sends every requested receipt, one batch per run, and reports the rates', async () => {
    const shop = await createShop(t.db);
    const figures = await measureMailPipeline(t.context, shop, { count: 25, batchSize: 10 });
    expect(figures).toMatchObject({ batchSize: 10, sent: 25, runs: 3 });
    expect(figures.mailsPerSecondPaused).toBeLessThan(figures.mailsPerSecond);
    expect(figures.mailsPerSecondPaused).toBeGreaterThan(0);
    expect(readdirSync(path.join(dataDir, 'mail'))).toHaveLength(25);
    const outbox = await t.db.query<{ status: string; count: number }>(
      'SELECT o.status, count(*)::int AS count FROM email_outbox o WHERE o.site_id = $1 GROUP BY o.status',
      [shop.siteId],
    );
    expect(outbox).toEqual([{ status: 'sent', count: 25 }]);
  });
});
