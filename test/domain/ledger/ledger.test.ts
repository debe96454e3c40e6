import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBalanced, transfer, UnbalancedPostingsError } from '../../../src/domain/ledger/postings.js';
import { problemsReportedMax, verifyLedger } from '../../../src/domain/ledger/verify.js';
import { runCli } from '../../../src/cli/main.js';
import type { TestContext } from '../../support/context.js';
import { testEnv } from '../../support/context.js';
import { addChannel, createBooking, createShop, paymentsContext, post, purchaseBody, type Shop } from '../../payments/support.js';

let t: TestContext;
let shop: Shop;
let purchaseId: number;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  const booking = await createBooking(t, shop, { total: 5000 });
  purchaseId = (await post(t, shop, purchaseBody(shop, booking, 5000))).json().id;
  await post(t, shop, { transaction_types: 'refund', channels: shop.channelId, currencies: 'USD', total: 1500, linked_id: purchaseId, bookings: [{ id: booking, currencies: 'USD', total: 1500 }] });
});
afterAll(async () => t.close());

/** Runs `trustfare <args>` against the test database; returns the exit code and printed output. */
async function cli(args: string[]): Promise<{ code: number; output: string }> {
  const saved = { ...process.env };
  Object.assign(process.env, testEnv, { DATABASE_URL: t.config.databaseUrl });
  const printed: string[] = [];
  const log = console.log;
  const error = console.error;
  console.log = (...items: unknown[]) => printed.push(items.join(' '));
  console.error = (...items: unknown[]) => printed.push(items.join(' '));
  try {
    return { code: await runCli(args), output: printed.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
    process.env = saved;
  }
}

describe('postings', () => {
  it('refuses unbalanced or non-positive postings before anything is written', () => {
    expect(() => assertBalanced(transfer({ channelId: 1, currency: 'USD', debit: 'a', credit: 'b', amount: 10 }))).not.toThrow();
    expect(() => assertBalanced([{ channelId: 1, currency: 'USD', account: 'a', direction: 'debit', amount: 10 }])).toThrow(UnbalancedPostingsError);
    expect(() => assertBalanced([
      { channelId: 1, currency: 'USD', account: 'a', direction: 'debit', amount: 10 },
      { channelId: 2, currency: 'USD', account: 'b', direction: 'credit', amount: 10 },
    ])).toThrow(/do not balance/);
    expect(() => assertBalanced([{ channelId: 1, currency: 'USD', account: 'a', direction: 'debit', amount: 0.5 }])).toThrow(UnbalancedPostingsError);
  });
});

describe('the ledger table', () => {
  it('is append-only: UPDATE, DELETE and TRUNCATE are refused', async () => {
    await expect(t.db.query('UPDATE ledger_entries SET amount = amount + 1')).rejects.toThrow(/append-only/);
    await expect(t.db.query('DELETE FROM ledger_entries')).rejects.toThrow(/append-only/);
    await expect(t.db.query('TRUNCATE ledger_entries CASCADE')).rejects.toThrow(/append-only/);
  });

  it("checks a transaction's balance at commit from its own entries, however long its channel's ledger", async () => {
    // Before the table's first ANALYZE (a new installation) the check read every entry of the
    // channel for each entry inserted (migration 022). A shop of its own: its history is not a
    // real one, and the ledger checks below read the other shop's books.
    const long = await createShop(t);
    const history = 2000;
    await t.db.query(
      `WITH made AS (INSERT INTO transactions (site_id, channel_id, type, status, total, currency, content)
                     SELECT $1, $2, 'purchase', 'complete', 1000, 'USD', 'ledger history' FROM generate_series(1, $3) RETURNING id, site_id, channel_id, currency)
       INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount)
       SELECT site_id, id, channel_id, currency, e.account, e.direction, 1000 FROM made CROSS JOIN (VALUES ('processor_clearing', 'debit'), ('channel_funds', 'credit')) e (account, direction)`,
      [long.site.siteId, long.channelId, history],
    );
    const read = await t.db.transaction(async (tx) => {
      const { id } = await tx.one<{ id: number }>(
        `INSERT INTO transactions (site_id, channel_id, type, status, total, currency) VALUES ($1, $2, 'purchase', 'complete', 700, 'USD') RETURNING id`, [long.site.siteId, long.channelId]);
      await tx.query(
        `INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount)
         VALUES ($1, $2, $3, 'USD', 'processor_clearing', 'debit', 700), ($1, $2, $3, 'USD', 'channel_funds', 'credit', 700)`, [long.site.siteId, id, long.channelId]);
      // The deferred check runs now instead of at COMMIT, so this transaction's statistics show it.
      const before = await tx.one<{ fetched: number }>(`SELECT coalesce(idx_tup_fetch, 0)::int AS fetched FROM pg_stat_xact_user_tables WHERE relname = 'ledger_entries'`);
      await tx.query('SET CONSTRAINTS ALL IMMEDIATE');
      const after = await tx.one<{ fetched: number }>(`SELECT coalesce(idx_tup_fetch, 0)::int AS fetched FROM pg_stat_xact_user_tables WHERE relname = 'ledger_entries'`);
      return after.fetched - before.fetched;
    });
    // Two checks (one per entry), each reading the transaction's two entries.
    expect(read).toBe(4);
  });

  it('refuses at commit a transaction whose entries do not balance', async () => {
    await expect(t.db.query(
      `INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount) VALUES ($1, $2, $3, 'USD', 'channel_funds', 'credit', 1)`,
      [shop.site.siteId, purchaseId, shop.channelId],
    )).rejects.toThrow(/do not balance/);
  });
});

describe('trustfare ledger verify', () => {
  it('proves a healthy ledger and exits 0', async () => {
    const report = await verifyLedger(t.db, { siteId: shop.site.siteId });
    expect(report).toMatchObject({ ok: true, problems: [], entries: 4, transactions: 2 });
    const run = await cli(['ledger', 'verify', '--site', shop.site.path]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.output)).toMatchObject({ ok: true });
  });

  it('records chargebacks through the operator CLI, keeping the books balanced', async () => {
    const charged = await cli(['chargeback', '--site', shop.site.path, '--transaction', String(purchaseId), '--total', '1000']);
    expect(charged.code).toBe(0);
    const chargeback = JSON.parse(charged.output);
    expect(chargeback).toMatchObject({ transaction_types: 'chargeback', status: 'complete', total: 1000, linked_id: purchaseId });
    expect((await t.db.one<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [purchaseId])).status).toBe('locked');
    const tooMuch = await cli(['chargeback', '--site', shop.site.path, '--transaction', String(chargeback.id), '--total', '5000', '--type', 'chargeback-reversal']);
    expect(tooMuch.code).not.toBe(0);
    const reversed = await cli(['chargeback', '--site', shop.site.path, '--transaction', String(purchaseId), '--total', '1000', '--type', 'chargeback-reversal']);
    expect(reversed.code).toBe(0);
    expect((await t.db.one<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [purchaseId])).status).toBe('complete');
    expect((await cli(['chargeback', '--site', shop.site.path, '--transaction', String(purchaseId), '--total', '1', '--type', 'nonsense'])).code).not.toBe(0);
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });

  it('finds an entry slipped in with the triggers disabled and exits non-zero', async () => {
    await t.db.transaction(async (tx) => {
      await tx.query('ALTER TABLE ledger_entries DISABLE TRIGGER USER');
      await tx.query(
        `INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount) VALUES ($1, $2, $3, 'USD', 'channel_funds', 'credit', 999)`,
        [shop.site.siteId, purchaseId, shop.channelId],
      );
      await tx.query('ALTER TABLE ledger_entries ENABLE TRIGGER USER');
    });
    const report = await verifyLedger(t.db);
    expect(report.ok).toBe(false);
    expect(report.problems.map((problem) => problem.check)).toEqual(expect.arrayContaining(['transaction_balanced', 'channel_currency_balanced', 'entries_match_total', 'bookings_match_ledger']));
    const run = await cli(['ledger', 'verify']);
    expect(run.code).not.toBe(0);
    expect(run.output).toContain('transaction_balanced');
  });

  it("finds entries in a currency that is not their channel's (the channel's statements would never show them)", async () => {
    const euroChannel = await addChannel(t, shop, { currency: 'EUR' });
    await t.db.transaction(async (tx) => {
      await tx.query('ALTER TABLE ledger_entries DISABLE TRIGGER USER');
      for (const [account, direction] of [['channel_funds', 'credit'], ['processor_clearing', 'debit']]) {
        await tx.query(
          `INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount) VALUES ($1, $2, $3, 'USD', $4, $5, 700)`,
          [shop.site.siteId, purchaseId, euroChannel, account, direction],
        );
      }
      await tx.query('ALTER TABLE ledger_entries ENABLE TRIGGER USER');
    });
    const report = await verifyLedger(t.db, { siteId: shop.site.siteId });
    expect(report.problems).toContainEqual({ check: 'entries_in_channel_currency', detail: `channel ${euroChannel} is EUR but holds 2 entries in USD` });
  });
});

describe('ledger verify on a ledger with more problems than it lists', () => {
  it('lists the first problemsReportedMax and says more were left out', async () => {
    // Every check finds 150 rows (a stand-in database): far past the cap.
    const rows = Array.from({ length: 150 }, (_, index) => ({ transaction_id: index, channel_id: 1, currency: 'USD', difference: 1, id: index, status: 'failed', type: 'purchase' }));
    const db = { query: async () => rows, one: async () => ({ entries: 0, transactions: 0 }) } as unknown as Parameters<typeof verifyLedger>[0];
    const report = await verifyLedger(db);
    expect(report).toMatchObject({ ok: false, more_problems: true });
    expect(report.problems).toHaveLength(problemsReportedMax);
  });
});
