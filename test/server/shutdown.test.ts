import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase } from '../support/context.js';
import { killServers, spawnServer } from '../support/server-process.js';
import { createSite } from '../support/fixtures.js';

// SIGTERM to a running server with requests in flight, one process (WORKERS=1) or a cluster
// (WORKERS=2): those requests are answered, new connections are refused, the jobs stop, exit 0.
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-shutdown-'));

afterAll(() => {
  killServers();
  rmSync(dataDir, { recursive: true, force: true });
});

describe.each([1, 2])('SIGTERM with WORKERS=%i', (workers) => {
  it('answers the payments in flight, refuses new connections, stops the jobs and exits 0', async () => {
    const { db, url } = await createTestDatabase(1);
    try {
      const shop = await createSite(db, { role: 'member_admin' });
      const { child, baseUrl, output: outputOf, exited } = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: url, WORKERS: String(workers), SANDBOX_LATENCY_MS: '1500' });
      const listening = () => (outputOf().match(/"msg":"Server listening at /g) ?? []).length;
      await vi.waitFor(() => expect(listening()).toBe(workers), { timeout: 30_000, interval: 50 });
      const api = async (method: string, rest: string, body?: unknown) => {
        const response = await fetch(`${baseUrl}/${shop.path}/site-json/vendor/v2/${rest}`, { method, headers: { ...shop.headers, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
        return { status: response.status, json: (await response.json()) as Record<string, any> };
      };
      const channel = (await api('POST', 'channels', { name: 'Tours', currencies: 'USD' })).json;
      const bookings = [];
      for (let index = 0; index < 4; index++) {
        bookings.push((await api('POST', 'bookings', { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 1_000, currencies: 'USD', countries: 'GB', channels: channel.id })).json);
      }
      // Four payments wait 1.5 s for the processor (on both workers, round robin) when the signal comes.
      const payments = bookings.map((booking) => api('POST', 'transactions', {
        transaction_types: 'purchase', channels: channel.id, currencies: 'USD', total: 1_000, token: 'tok_visa', bookings: [{ id: booking.id, currencies: 'USD', total: 1_000 }],
      }));
      await new Promise((resolve) => setTimeout(resolve, 500));
      child.kill('SIGTERM');
      await vi.waitFor(() => expect(outputOf()).toMatch(/shutting down/), { timeout: 5_000, interval: 20 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      // A new connection is not taken while the payments finish.
      const late = await fetch(`${baseUrl}/readyz`).then((response) => response.status, (error: Error) => String((error.cause as { code?: string })?.code ?? error));
      expect([503, 'ECONNREFUSED']).toContain(late);
      for (const payment of await Promise.all(payments)) expect(payment).toMatchObject({ status: 201, json: { status: 'complete' } });
      expect(await exited, outputOf()).toBe(0);
      const lines = outputOf().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);
      const rows = await db.query<{ status: string }>(`SELECT status FROM transactions WHERE site_id = $1`, [shop.siteId]);
      expect(rows.map((row) => row.status)).toEqual(['complete', 'complete', 'complete', 'complete']);
    } finally {
      await db.close();
    }
  }, 60_000);
});
