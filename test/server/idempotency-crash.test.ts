import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase } from '../support/context.js';
import { killServers, siteApi, startReadyServer } from '../support/server-process.js';
import { createSite } from '../support/fixtures.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import type { Db } from '../../src/storage/db.js';

// A server process (dist/server.js) killed while a purchase and a refund, each sent with an
// Idempotency-Key, wait for the bank: both transactions are recorded `incomplete` and their keys
// are left in flight. A retry with the key used to be told 409 "still being processed" for the
// key's 48 hours, even once reconciliation had settled the transaction; it is answered as the
// first answer would have been, with the transaction as it reads now, and never pays again
// (docs/payments.md "Idempotency").
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-idempotency-crash-'));

afterAll(() => {
  killServers();
  rmSync(dataDir, { recursive: true, force: true });
});

const startServer = (env: Record<string, string>) => startReadyServer({ DATA_DIR: dataDir, ...env });

/** Runs the reconciliation as soon as the job can: the rows are made older than its wait. */
async function reconciled(db: Db, siteId: number): Promise<void> {
  await vi.waitFor(async () => {
    await db.query(`UPDATE transactions SET created_at = now() - interval '10 minutes' WHERE site_id = $1 AND status = 'incomplete'`, [siteId]);
    expect(await db.query(`SELECT id FROM transactions WHERE site_id = $1 AND status = 'incomplete'`, [siteId])).toEqual([]);
  }, { timeout: 60_000, interval: 500 });
}

describe('an Idempotency-Key left in flight by a server process killed mid-payment', () => {
  it('a retry gets 201 with the transaction as it reads now (incomplete, then settled), and the bank is called once', async () => {
    const { db, url } = await createTestDatabase(2);
    try {
      const shop = await createSite(db, { role: 'member_admin' });
      const bookingBody = { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 1_000, currencies: 'USD', countries: 'GB' };
      const first = await startServer({ DATABASE_URL: url });
      let api = siteApi(first.baseUrl, shop);
      const channel = (await api('POST', 'channels', { name: 'Tours', currencies: 'USD' })).json;
      const vault = (await api('POST', 'transactions', { transaction_types: 'vault', channels: channel.id, currencies: 'USD', total: 0, token: 'tok_visa' })).json;
      const paid = (await api('POST', 'bookings', { ...bookingBody, channels: channel.id })).json;
      const unpaid = (await api('POST', 'bookings', { ...bookingBody, channels: channel.id })).json;
      const sale = (await api('POST', 'transactions', {
        transaction_types: 'retained_purchase', channels: channel.id, currencies: 'USD', total: 1_000, linked_id: vault.id, bookings: [{ id: paid.id, currencies: 'USD', total: 1_000 }],
      })).json;
      expect(sale.status).toBe('complete');
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);

      const purchase = {
        transaction_types: 'retained_purchase', channels: channel.id, currencies: 'USD', total: 1_000, linked_id: vault.id, bookings: [{ id: unpaid.id, currencies: 'USD', total: 1_000 }],
      };
      const refund = { transaction_types: 'refund', channels: channel.id, currencies: 'USD', total: 400, linked_id: sale.id, bookings: [{ id: paid.id, currencies: 'USD', total: 400 }] };
      const sent = [{ body: purchase, key: 'crash-purchase', type: 'retained_purchase' }, { body: refund, key: 'crash-refund', type: 'refund' }];

      // The bank records each call, then keeps its answer far longer than the test waits.
      const dying = await startServer({ DATABASE_URL: url, SANDBOX_LATENCY_MS: '100000', PROCESSOR_TIMEOUT_MS: '110000' });
      api = siteApi(dying.baseUrl, shop);
      const lost = sent.map(({ body, key }) => api('POST', 'transactions', body, { 'idempotency-key': key }).catch(() => undefined));
      await vi.waitFor(async () => {
        const atBank = await db.query(`SELECT kind FROM sandbox_operations WHERE kind IN ('authorise', 'refund') AND amount IN (1000, 400) ORDER BY kind`);
        expect(atBank.length).toBeGreaterThanOrEqual(3); // the sale's authorisation, then the two calls held
      }, { timeout: 30_000, interval: 100 });
      dying.child.kill('SIGKILL');
      expect(await Promise.all(lost)).toEqual([undefined, undefined]);

      const recorded = await db.query<{ id: number; type: string; status: string }>(
        `SELECT id, type, status FROM transactions WHERE site_id = $1 AND id > $2 ORDER BY id`, [shop.siteId, sale.id]);
      expect(recorded.map((row) => [row.type, row.status]).sort()).toEqual([['refund', 'incomplete'], ['retained_purchase', 'incomplete']]);
      expect(await db.query(`SELECT key, status FROM idempotency_keys WHERE key LIKE 'crash-%' ORDER BY key`)).toEqual([
        { key: 'crash-purchase', status: 'in_flight' }, { key: 'crash-refund', status: 'in_flight' },
      ]);
      const idOf = (type: string) => recorded.find((row) => row.type === type)!.id;

      // A new process; the retries come long after the killed requests (their keys are an hour old).
      const next = await startServer({ DATABASE_URL: url });
      api = siteApi(next.baseUrl, shop);
      await db.query(`UPDATE idempotency_keys SET created_at = created_at - interval '1 hour' WHERE key LIKE 'crash-%'`);
      const retry = ({ body, key }: (typeof sent)[number]) => api('POST', 'transactions', body, { 'idempotency-key': key });
      for (const item of sent) {
        const answer = await retry(item);
        expect([answer.status, answer.json.code], JSON.stringify(answer.json)).toEqual([201, undefined]);
        expect(answer.headers['idempotent-replayed']).toBe('true');
        expect(answer.headers.location).toMatch(new RegExp(`/transactions/${idOf(item.type)}$`));
        expect(answer.json).toMatchObject({ id: idOf(item.type), transaction_types: item.type, status: 'incomplete' });
      }

      await reconciled(db, shop.siteId);
      for (const item of sent) {
        const answer = await retry(item);
        expect([answer.status, answer.headers['idempotent-replayed']]).toEqual([201, 'true']);
        expect(answer.json).toMatchObject({ id: idOf(item.type), transaction_types: item.type, status: 'complete' });
      }
      // Paid and refunded once: no second transaction, no second call at the bank.
      expect(await db.query(`SELECT count(*)::int AS count FROM transactions WHERE site_id = $1`, [shop.siteId])).toEqual([{ count: 4 }]);
      expect(await db.query(`SELECT kind, count(*)::int AS count FROM sandbox_operations WHERE kind IN ('authorise', 'refund') AND amount IN (1000, 400) GROUP BY kind ORDER BY kind`)).toEqual([
        { kind: 'authorise', count: 2 }, { kind: 'refund', count: 1 },
      ]);
      expect(await db.query(`SELECT id, total_paid FROM bookings WHERE id IN ($1, $2) ORDER BY id`, [paid.id, unpaid.id])).toEqual([
        { id: paid.id, total_paid: 600 }, { id: unpaid.id, total_paid: 1_000 },
      ]);
      expect(await verifyLedger(db, { siteId: shop.siteId })).toMatchObject({ ok: true, problems: [] });
      next.child.kill('SIGTERM');
      expect(await next.exited).toBe(0);
    } finally {
      await db.close();
    }
  }, 180_000);
});
