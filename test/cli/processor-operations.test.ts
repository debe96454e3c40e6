import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connector } from '../../src/processor/connector.js';
import { reconcileIncompleteTransactions } from '../../src/jobs/payments.js';
import { checkAgainstProcessor } from '../../src/domain/transactions/processor-check.js';
import { limits } from '../../src/limits.js';
import type { TestContext } from '../support/context.js';
import { bookingRow, createBooking, createShop, get, paymentsContext, post, purchaseBody, type Shop } from '../payments/support.js';
import { cli } from './helpers.js';

/**
 * The operator's tools for the processor's side of a payment: `transaction settle`, the way out for
 * a charge the processor never answered for (the reconcile job leaves it `incomplete` for good: it
 * may have been approved), and `processor check`, which compares the books with the processor's
 * records.
 */
let t: TestContext;
let url: string;
let shop: Shop;

beforeAll(async () => {
  t = await paymentsContext({ env: { PROCESSOR_TIMEOUT_MS: '300' } });
  url = t.config.databaseUrl!;
  shop = await createShop(t);
});
afterAll(async () => t.close());

/** A purchase the processor took but never answered for, and whose look-ups go unanswered. */
async function silentPurchase(total: number, site: Shop = shop): Promise<{ booking: number; id: number }> {
  const sandbox = t.context.connector;
  const booking = await createBooking(t, site, { total });
  t.context.connector = { ...sandbox, name: 'silent', authorise: async (request) => { await sandbox.authorise(request); return new Promise(() => undefined); }, lookup: () => new Promise(() => undefined) } satisfies Connector;
  try {
    const transaction = (await post(t, site, purchaseBody(site, booking, total))).json();
    expect(transaction.status).toBe('incomplete');
    return { booking, id: transaction.id };
  } finally {
    t.context.connector = sandbox;
  }
}

const ageBy = (id: number, minutes: number) => t.db.query(`UPDATE transactions SET created_at = created_at - make_interval(mins => $2) WHERE id = $1`, [id, minutes]);
const settle = (id: number, extra: string[], site: Shop = shop) => cli(url, ['transaction', 'settle', '--site', site.site.path, '--transaction', String(id), ...extra]);
const rowOf = (id: number) => t.db.one<{ status: string; content: string; processor_reference: string | null }>('SELECT status, content, processor_reference FROM transactions WHERE id = $1', [id]);

describe('transaction settle', () => {
  it('completes an approved charge with its ledger entries and booking money, once', async () => {
    const { booking, id } = await silentPurchase(4200);
    const approve = ['--outcome', 'approved', '--processor-reference', 'PSP-778812', '--auth-code', 'A1B2C3', '--reason', 'approved in the acquirer dashboard, ticket 5521'];
    // Too young: the service may still hear from the processor.
    const early = await settle(id, approve);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain(`wait until it is ${limits.operatorSettleAfterMinutes} minutes old`);
    expect((await rowOf(id)).status).toBe('incomplete');
    await ageBy(id, limits.operatorSettleAfterMinutes + 1);
    const settled = await settle(id, approve);
    expect(settled.code).toBe(0);
    expect(settled.json).toMatchObject({ id, status: 'complete', total: 4200, content: 'Settled by the operator: approved in the acquirer dashboard, ticket 5521', auth_code: 'A1B2C3' });
    expect(settled.json.payment_ids).toHaveLength(2);
    expect((await rowOf(id)).processor_reference).toBe('PSP-778812');
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 4200 });
    expect((await get(t, shop, `/transactions/${id}`)).json()).toMatchObject({ status: 'complete' });
    const ledger = await cli(url, ['ledger', 'verify', '--site', shop.site.path]);
    expect(ledger.code).toBe(0);
    // Settled rows are not settled again, whatever the operator says next.
    const again = await settle(id, ['--outcome', 'declined', '--reason', 'second thoughts']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`transaction ${id} is complete`);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 4200 });
    // Nor does the job touch it once the processor answers.
    expect((await reconcileIncompleteTransactions(t.context)).completed).toBe(0);
  });

  it('fails a declined charge and gives its amount back to the booking, which can then be paid', async () => {
    const { booking, id } = await silentPurchase(3100);
    expect((await post(t, shop, purchaseBody(shop, booking, 3100))).json()).toMatchObject({ code: 'rest_invalid_param' });
    await ageBy(id, limits.operatorSettleAfterMinutes + 1);
    const settled = await settle(id, ['--outcome', 'declined', '--decline-code', '800.100.151', '--reason', 'no such charge in the acquirer settlement file']);
    expect(settled.code).toBe(0);
    expect(settled.json).toMatchObject({ id, status: 'failed', payment_ids: [] });
    expect(settled.json.content).toBe('800.100.151 Settled by the operator: no such charge in the acquirer settlement file');
    expect((await bookingRow(t, booking)).status).toBe('unpaid');
    expect((await post(t, shop, purchaseBody(shop, booking, 3100))).json()).toMatchObject({ status: 'complete' });
    expect((await bookingRow(t, booking)).status).toBe('paid');
  });

  it('completes a 3-D Secure purchase left pending (the cardholder never came back from the challenge)', async () => {
    const booking = await createBooking(t, shop, { total: 2700 });
    const pending = (await post(t, shop, purchaseBody(shop, booking, 2700, { token: 'tok_visa_3ds_challenge', attempt_3ds: true }))).json();
    expect(pending.status).toBe('pending');
    await ageBy(pending.id, limits.operatorSettleAfterMinutes + 1);
    const settled = await settle(pending.id, ['--outcome', 'approved', '--processor-reference', 'PSP-3DS-1', '--reason', 'captured per the acquirer dashboard']);
    expect(settled.stderr).toBe('');
    expect(settled.code).toBe(0);
    expect(settled.json).toMatchObject({ id: pending.id, status: 'complete', total: 2700 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 2700 });
  });

  it('refuses what it cannot act on, changing nothing', async () => {
    const { id } = await silentPurchase(2300);
    await ageBy(id, limits.operatorSettleAfterMinutes + 1);
    const before = await rowOf(id);
    const other = await createShop(t);
    const cases: [string[], string][] = [
      [['--outcome', 'approved', '--reason', 'dashboard'], '--processor-reference is required with --outcome approved'],
      [['--outcome', 'refunded', '--reason', 'dashboard'], '--outcome must be approved or declined'],
      [['--outcome', 'declined', '--auth-code', 'X', '--reason', 'dashboard'], '--auth-code goes with --outcome approved'],
      [['--outcome', 'declined', '--reason', 'line one\nline two'], '--reason must be text on one line'],
      [['--outcome', 'declined', '--processor-reference', 'has space', '--reason', 'dashboard'], '--processor-reference must be at most'],
    ];
    for (const [extra, message] of cases) {
      const refused = await settle(id, extra);
      expect(refused.code, extra.join(' ')).toBe(1);
      expect(refused.stderr).toContain(message);
    }
    const elsewhere = await cli(url, ['transaction', 'settle', '--site', other.site.path, '--transaction', String(id), '--outcome', 'declined', '--reason', 'dashboard']);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain(`transaction ${id} does not exist in this site`);
    expect(await rowOf(id)).toEqual({ ...before, status: 'incomplete' });
  });
});

describe('processor check', () => {
  const check = (site: Shop, extra: string[] = []) => cli(url, ['processor', 'check', '--site', site.site.path, ...extra]);

  it('finds nothing to report where the books and the processor agree, declines included', async () => {
    const clean = await createShop(t);
    for (const [total, token] of [[1100, 'tok_visa'], [1200, 'tok_visa_declined'], [1300, 'tok_mastercard']] as const) {
      const booking = await createBooking(t, clean, { total });
      await post(t, clean, purchaseBody(clean, booking, total, { token }));
    }
    const report = await check(clean);
    expect(report.code).toBe(0);
    expect(report.json).toEqual({ ok: true, checked: 3, unanswered: [], problems: [], more: false, next_since: null });
    // The window and the bound: nothing before --since; --limit says when it left rows out, and
    // where to go on from, within the same day (--since takes the instant it gives).
    expect((await check(clean, ['--since', '2999-01-01', '--until', '2999-01-02'])).json).toMatchObject({ ok: true, checked: 0 });
    const first = (await check(clean, ['--limit', '2'])).json;
    expect(first).toMatchObject({ ok: true, checked: 2, more: true, next_since: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    const rest = (await check(clean, ['--limit', '2', '--since', first.next_since])).json;
    // The rest: the third row, and the second again if it was created in the same millisecond.
    expect(rest).toMatchObject({ ok: true, more: false, next_since: null });
    expect(rest.checked).toBeGreaterThanOrEqual(1);
  });

  it('names a charge the processor approved that the books show failed, and money booked that the processor never approved', async () => {
    const audited = await createShop(t);
    // The operator settles a silent charge as declined, but the processor had approved it.
    const { id: approvedId } = await silentPurchase(5100, audited);
    await ageBy(approvedId, limits.operatorSettleAfterMinutes + 1);
    expect((await settle(approvedId, ['--outcome', 'declined', '--reason', 'misread the dashboard'], audited)).code).toBe(0);
    // A completed charge whose processor record is gone: the books hold money that never moved.
    const booking = await createBooking(t, audited, { total: 5200 });
    const paid = (await post(t, audited, purchaseBody(audited, booking, 5200))).json();
    expect(paid.status).toBe('complete');
    await t.db.query('DELETE FROM sandbox_operations WHERE reference = $1', [paid.uuid]);
    const report = await check(audited);
    expect(report.code).toBe(1);
    expect(report.stderr).toContain('the processor disagrees on 2 transaction(s)');
    const problems = JSON.parse(report.stderr.slice(report.stderr.indexOf('{'))).problems;
    expect(problems).toEqual([
      expect.objectContaining({ problem: 'approved_not_booked', status: 'failed', total: 5100, currencies: 'USD', processor: 'approved', transaction_types: 'purchase' }),
      expect.objectContaining({ problem: 'booked_without_approval', status: 'complete', total: 5200, processor: 'no record' }),
    ]);
    // A processor that does not answer its look-ups decides nothing: the rows are listed to check again.
    const sandbox = t.context.connector;
    t.context.connector = { ...sandbox, name: 'silent', lookup: () => new Promise(() => undefined) };
    try {
      const silent = await checkAgainstProcessor({ ...t.context, config: { ...t.context.config, processorTimeoutMs: 200 } }, { siteId: audited.site.siteId, since: new Date(0), until: new Date(Date.now() + 60_000), limit: 10 });
      expect(silent).toMatchObject({ ok: false, checked: 2, problems: [] });
      expect(silent.unanswered).toHaveLength(2);
    } finally {
      t.context.connector = sandbox;
    }
  });

  it('refuses bad options', async () => {
    for (const [extra, message] of [
      [['--since', '2026-02-30'], '--since must be a date as YYYY-MM-DD or an ISO 8601 date-time'],
      [['--since', 'yesterday'], '--since must be a date as YYYY-MM-DD or an ISO 8601 date-time'],
      [['--since', '2026-02-02', '--until', '2026-02-01'], '--since must be before --until'],
      [['--limit', '0'], '--limit must be a positive integer'],
      [['--limit', '10001'], '--limit must be at most 10000'],
    ] as const) {
      const refused = await check(shop, [...extra]);
      expect(refused.code, extra.join(' ')).toBe(1);
      expect(refused.stderr).toContain(message);
    }
  });
});
