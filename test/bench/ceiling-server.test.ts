import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCeiling, type Ceiling, type Workspace } from '../../bench/stack.js';
import type { Db } from '../../src/storage/db.js';
import { createTestDatabase } from '../support/context.js';
import { tempDirForFile } from '../support/temp-dir.js';

// The bench reads the service's purchases against these routes, so they must do the work their
// names claim: a ratio against a route that skipped a write would flatter nothing but mislead.
let db: Db;
let ceiling: Ceiling;
const answer = { id: 41, status: 'complete', total: 125000 };
// Made here, not in beforeAll: its removal is an afterAll hook, which runs after the one below
// (hooks stack) that stops the server writing its log into it.
const dataDir = tempDirForFile('ceiling');

beforeAll(async () => {
  const database = await createTestDatabase(2);
  db = database.db;
  const workspace: Workspace = { dataDir, databaseUrl: database.url, embedded: null, stopEmbedded: async () => undefined, dispose: async () => undefined };
  ceiling = await startCeiling(workspace);
  await ceiling.setPayload('post-retained-purchase', 201, answer);
}, 60_000);
afterAll(async () => {
  await ceiling?.child.stop(5_000);
  await db?.close();
});

const post = (path: string) => fetch(`${ceiling.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

describe('bench ceiling server', () => {
  it('bare two-phase purchase: each request settles one transaction with balanced entries, pays its booking, queues a mail and stores its answer for its key', async () => {
    const answers = await Promise.all([1, 2, 3].map(() => post('/purchase')));
    for (const response of answers) {
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual(answer);
    }
    const transactions = await db.query<{ id: number; booking_id: number; status: string; entries: number; balance: number; mails: number; answer: string | null }>(`
      SELECT t.id, t.booking_id, t.status,
        (SELECT count(*) FROM bench_ceiling.purchase_ledger_entries e WHERE e.transaction_id = t.id) AS entries,
        (SELECT sum(e.amount)::bigint FROM bench_ceiling.purchase_ledger_entries e WHERE e.transaction_id = t.id) AS balance,
        (SELECT count(*) FROM bench_ceiling.purchase_outbox o WHERE o.transaction_id = t.id) AS mails,
        (SELECT k.answer FROM bench_ceiling.purchase_idempotency_keys k WHERE k.transaction_id = t.id) AS answer
      FROM bench_ceiling.purchase_transactions t ORDER BY t.booking_id`);
    expect(transactions.map((row) => [row.booking_id, row.status, row.entries, row.balance, row.mails, JSON.parse(row.answer ?? 'null')])).toEqual(
      [1, 2, 3].map((booking) => [booking, 'complete', 2, 0, 1, answer]),
    );
    const bookings = await db.query<{ id: number; paid: number; status: string }>('SELECT id, paid, status FROM bench_ceiling.purchase_bookings WHERE id <= 4 ORDER BY id');
    expect(bookings.map((row) => [row.id, row.paid, row.status])).toEqual([[1, 125000, 'paid'], [2, 125000, 'paid'], [3, 125000, 'paid'], [4, 0, 'unpaid']]);
  });

  it('bare 3-statement transaction: each request inserts one entry and moves its account', async () => {
    expect((await post('/tx')).status).toBe(201);
    const accounts = await db.query<{ balance: number; entries: number }>('SELECT a.balance, (SELECT count(*) FROM bench_ceiling.entries e WHERE e.account_id = a.id) AS entries FROM bench_ceiling.accounts a WHERE a.id = 1');
    expect(accounts).toEqual([{ balance: 125000, entries: 1 }]);
  });
});
