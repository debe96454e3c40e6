import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCeiling, type Ceiling, type Workspace } from '../../bench/stack.js';
import { createChannel } from '../../src/domain/channels.js';
import type { Db } from '../../src/storage/db.js';
import { createTestDatabase } from '../support/context.js';
import { createSite } from '../support/fixtures.js';
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

  it('bare batched purchase: concurrent requests go in batches; each settles a transaction of its own with balanced entries, pays its booking, requests a set-aside mail and stores its answer for its key', async () => {
    const site = await createSite(db);
    const channel = await createChannel(db, { siteId: site.siteId, name: 'Batched', currency: 'USD' });
    const vault = await db.one<{ id: number }>(
      `INSERT INTO transactions (site_id, channel_id, author_id, type, status, total, currency, token, last_four) VALUES ($1, $2, $3, 'vault', 'complete', 0, 'USD', 'tok-1', '1111') RETURNING id`,
      [site.siteId, channel.id, site.userId],
    );
    const bookings = await db.query<{ id: number }>(
      `INSERT INTO bookings (site_id, channel_id, author_id, firstname, surname, email, date_end, total, currency, country)
       SELECT $1, $2, $3, 'Ada', 'Lovelace', 'ada@example.com', '2030-01-01', 1000 * n, 'USD', 'GB' FROM generate_series(1, 20) AS n RETURNING id`,
      [site.siteId, channel.id, site.userId],
    );
    await fetch(`${ceiling.baseUrl}/batched-purchase/batches`);
    const put = await fetch(`${ceiling.baseUrl}/batched-purchase/bookings`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ids: bookings.map((row) => row.id) }) });
    expect(put.status).toBe(200);
    const answers = await Promise.all(bookings.map(() => fetch(`${ceiling.baseUrl}/batched-purchase`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...site.headers }, body: JSON.stringify({ linked_id: vault.id }),
    })));
    for (const response of answers) {
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual(answer);
    }
    // Twenty requests at once: the first three start a batch each (three slots), and the rest,
    // arriving while those are written, wait and go together, so fewer batches than requests.
    const batches = await (await fetch(`${ceiling.baseUrl}/batched-purchase/batches`)).json() as { batches: number; purchases: number };
    expect(batches.purchases).toBe(20);
    expect(batches.batches).toBeGreaterThanOrEqual(1);
    expect(batches.batches).toBeLessThan(20);
    const rows = await db.query<{ booking_id: number; status: string; total: number; linked_id: number; debits: number; credits: number; mails: number; set_aside: boolean; key_status: string; body: string; processor: number; paid: number; booking_status: string }>(`
      SELECT tb.booking_id, t.status, t.total, t.linked_id,
        (SELECT sum(amount) FROM ledger_entries e WHERE e.transaction_id = t.id AND e.direction = 'debit')::bigint AS debits,
        (SELECT sum(amount) FROM ledger_entries e WHERE e.transaction_id = t.id AND e.direction = 'credit')::bigint AS credits,
        (SELECT count(*) FROM mail_requests m WHERE m.transaction_id = t.id)::int AS mails,
        (SELECT bool_and(m.last_error IS NOT NULL) FROM mail_requests m WHERE m.transaction_id = t.id) AS set_aside,
        k.status AS key_status, k.response_body AS body,
        (SELECT count(*) FROM sandbox_operations o WHERE o.reference = t.uuid::text)::int AS processor,
        b.total_paid AS paid, b.status AS booking_status
      FROM transactions t JOIN transaction_bookings tb ON tb.transaction_id = t.id JOIN bookings b ON b.id = tb.booking_id
      JOIN idempotency_keys k ON k.transaction_id = t.id
      WHERE t.site_id = $1 AND t.type = 'retained_purchase' ORDER BY tb.booking_id`, [site.siteId]);
    expect(rows.map((row) => [row.booking_id, row.status, row.total, row.linked_id, row.debits, row.credits, row.mails, row.set_aside, row.key_status, JSON.parse(row.body), row.processor, row.paid, row.booking_status])).toEqual(
      bookings.map((booking, index) => [booking.id, 'complete', 1000 * (index + 1), vault.id, 1000 * (index + 1), 1000 * (index + 1), 1, true, 'done', answer, 1, 1000 * (index + 1), 'paid']),
    );
  });
});

