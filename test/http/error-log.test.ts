import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';

// A server error's log line is read on its own: at LOG_LEVEL=warn or error, as production runs
// to cut the noise, there is no "incoming request" line to find its request by reqId, and the
// line said only "request failed" and the error, not which request failed.
let t: TestContext;
let site: SiteFixture;
const lines: string[] = [];

beforeAll(async () => {
  t = await createTestContext({ env: { LOG_LEVEL: 'warn' }, logStream: { write: (line: string) => void lines.push(line) } });
  site = await createSite(t.db);
});
afterAll(async () => t.close());

describe('the log line of a server error', () => {
  it('names the request (method, URL with its secrets redacted) and the status answered', async () => {
    await t.db.query('ALTER TABLE bookings RENAME TO bookings_away');
    try {
      const answer = await t.app.inject({ url: `/${site.path}/site-json/vendor/v2/bookings/7?token=secret-value`, headers: site.headers });
      expect(answer.statusCode).toBe(500);
    } finally {
      await t.db.query('ALTER TABLE bookings_away RENAME TO bookings');
    }
    const failed = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request failed');
    expect(failed).toEqual([expect.objectContaining({
      req: expect.objectContaining({ method: 'GET', url: `/${site.path}/site-json/vendor/v2/bookings/7?token=[redacted]` }),
      res: { statusCode: 500 },
      err: expect.objectContaining({ message: expect.stringContaining('bookings') }),
    })]);
  });
});
