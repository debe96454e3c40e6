import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDirForTest } from '../support/temp-dir.js';
import type { TestContext } from '../support/context.js';
import { addChannel, bookingRow, createBooking, createShop, get, paymentsContext, post, type Body, type Shop } from '../payments/support.js';
import { grantAllocation } from '../../src/domain/allocations/index.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { buildStatement } from '../../src/domain/statements/index.js';
import { commands as rateCommands } from '../../src/cli/commands/rates.js';

let t: TestContext;
let shop: Shop;
let second: number;
let clock = new Date('2026-11-21T10:00:00Z');

beforeAll(async () => {
  t = await paymentsContext({ now: () => clock });
  shop = await createShop(t);
  second = await addChannel(t, shop);
});
afterAll(async () => t.close());

async function vault(target: Shop = shop): Promise<number> {
  const response = await post(t, target, { transaction_types: 'vault', channels: target.channelId, currencies: target.currency, total: 0, token: 'tok_visa' });
  expect(response.statusCode).toBe(201);
  return response.json().id;
}

async function funds(channelId: number): Promise<number> {
  const row = await t.db.one<{ balance: number }>(
    `SELECT coalesce(sum(CASE WHEN direction = 'credit' THEN amount ELSE -amount END), 0)::bigint AS balance FROM ledger_entries WHERE channel_id = $1 AND account = 'channel_funds'`,
    [channelId],
  );
  return Number(row.balance);
}

async function loadRates(text: string): Promise<void> {
  const dir = tempDirForTest('fx');
  const file = path.join(dir, 'rates.csv');
  writeFileSync(file, text);
  await rateCommands.find((command) => command.name === 'rates set')!.run(t.context, {}, [file]);
}

describe('forex retained purchase with allocations, partial and full refund', () => {
  let purchase: Record<string, unknown> & { id: number; allocations: Record<string, unknown>[] };
  let booking: number;

  it('pays a USD booking in EUR at the sandbox rate and moves the allocations to the second channel', async () => {
    const card = await vault();
    booking = await createBooking(t, shop, { total: 10_000 });
    const body: Body = {
      transaction_types: 'retained_purchase', channels: shop.channelId, currencies: 'EUR', total: 9200, linked_id: card,
      bookings: [{ id: booking, currencies: 'USD', total: 10_000 }],
      allocations: [
        { channels: second, total: 1840, operator: 'flat', title: 'Agent commission' },
        { channels: second, total: 1000, operator: 'percent' },
      ],
    };
    const wrong = await post(t, shop, { ...body, total: 9300 });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { total: expect.stringContaining('The total must be 9200 EUR') } } });
    const response = await post(t, shop, body);
    expect(response.statusCode).toBe(201);
    purchase = response.json();
    const quoteId = purchase.forex_id as number;
    expect(purchase).toMatchObject({
      status: 'complete', currencies: 'EUR', total: 9200, total_remaining: 9200, forex_rate: '0.92', forex_id: expect.any(Number),
      forex: [{ currencies: 'USD', total: 10_000, rate: 0.92, quote_id: quoteId }],
      bookings: [{ id: booking, total: 10_000, currencies: 'USD' }],
    });
    expect(purchase.allocations).toEqual([
      { id: expect.any(Number), value: 1840, total: 1840, channels: second, currencies: 'EUR', operator: 'flat', reversed: false, debit: { currencies: 'USD', total: 2000 }, credit: { currencies: 'USD', total: 2000 } },
      { id: expect.any(Number), value: 1000, total: 920, channels: second, currencies: 'EUR', operator: 'percent', reversed: false, debit: { currencies: 'USD', total: 1000 }, credit: { currencies: 'USD', total: 1000 } },
    ]);
    // The quote is the one the channel's forex_feed shows.
    const channel = (await get(t, shop, `/channels/${shop.channelId}`)).json();
    expect(channel.forex_feed.rates.EUR).toMatchObject({ quote_id: quoteId, rate: 0.92, provider: 'sandbox' });
    expect(await funds(shop.channelId)).toBe(7000);
    expect(await funds(second)).toBe(3000);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 10_000 });
    // Ledger entries keep the paid amount next to the channel amount.
    const own = await t.db.query<{ amount: number; paid_currency: string; paid_amount: number }>(
      `SELECT amount, paid_currency, paid_amount FROM ledger_entries WHERE transaction_id = $1 AND account = 'processor_clearing'`, [purchase.id]);
    expect(own).toEqual([{ amount: 10_000, paid_currency: 'EUR', paid_amount: 9200 }]);
  });

  it('refunds part at the original rate after the rate changed, reversing allocations pro rata', async () => {
    clock = new Date('2026-11-21T11:00:00Z');
    await loadRates('USD,EUR,0.95\n');
    const refund = { transaction_types: 'refund', channels: shop.channelId, currencies: 'EUR', linked_id: purchase.id, bookings: [{ id: booking, currencies: 'USD', total: 2500 }] };
    const atNewRate = await post(t, shop, { ...refund, total: 2375 });
    expect(atNewRate.statusCode).toBe(400);
    expect(atNewRate.json().data.params.total).toContain('2300 EUR');
    const response = await post(t, shop, { ...refund, total: 2300 });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body).toMatchObject({ status: 'complete', total: 2300, forex_rate: '0.92', forex_id: purchase.forex_id, forex: [{ currencies: 'USD', total: 2500, rate: 0.92 }] });
    expect(body.allocations).toEqual([
      { id: expect.any(Number), value: 1840, total: 460, channels: second, currencies: 'EUR', operator: 'flat', reversed: true, debit: { currencies: 'USD', total: 500 }, credit: { currencies: 'USD', total: 500 } },
      { id: expect.any(Number), value: 1000, total: 230, channels: second, currencies: 'EUR', operator: 'percent', reversed: true, debit: { currencies: 'USD', total: 250 }, credit: { currencies: 'USD', total: 250 } },
    ]);
    expect(await funds(shop.channelId)).toBe(7000 - 2500 + 750);
    expect(await funds(second)).toBe(2250);
    const again = (await get(t, shop, `/transactions/${purchase.id}`)).json();
    expect(again.total_remaining).toBe(6900);
    expect(again.allocations.map((a: { reversed: boolean }) => a.reversed)).toEqual([false, false]);
    // A new payment now uses the operator's rate.
    const feed = (await get(t, shop, `/channels/${shop.channelId}`)).json().forex_feed;
    expect(feed.rates.EUR).toMatchObject({ rate: 0.95, provider: 'file' });
  });

  it('refunds the rest: every allocation is reversed in full and the books close exactly', async () => {
    const response = await post(t, shop, {
      transaction_types: 'refund', channels: shop.channelId, currencies: 'EUR', total: 6900, linked_id: purchase.id,
      bookings: [{ id: booking, currencies: 'USD', total: 7500 }],
    });
    expect(response.statusCode).toBe(201);
    const after = (await get(t, shop, `/transactions/${purchase.id}`)).json();
    expect(after.total_remaining).toBe(0);
    expect(after.allocations.map((a: { reversed: boolean }) => a.reversed)).toEqual([true, true]);
    expect(await funds(shop.channelId)).toBe(0);
    expect(await funds(second)).toBe(0);
    expect(await bookingRow(t, booking)).toMatchObject({ total_paid: 0 });
    const report = await verifyLedger(t.db, { siteId: shop.site.siteId });
    expect(report.problems).toEqual([]);
  });

  it('gives statements whose balances reconcile with the ledger', async () => {
    for (const channelId of [shop.channelId, second]) {
      const statement = await buildStatement(t.db, { siteId: shop.site.siteId, channelId, from: '2026-11-21', to: '2026-11-21' });
      const sum = statement.entries.filter((e) => e.account === 'channel_funds').reduce((total, e) => total + (e.direction === 'credit' ? e.amount : -e.amount), 0);
      expect(statement.opening_balance).toBe(0);
      expect(statement.closing_balance).toBe(sum);
      expect(statement.closing_balance).toBe(await funds(channelId));
      for (const account of statement.accounts) expect(account.closing).toBe(account.opening + account.credits - account.debits);
    }
    const paying = await buildStatement(t.db, { siteId: shop.site.siteId, channelId: shop.channelId, from: '2026-11-21', to: '2026-11-21' });
    expect(paying.entries.some((e) => e.paid_currencies === 'EUR' && e.transaction_types === 'retained_purchase')).toBe(true);
    expect(paying.entries[0]!.statement_date).toBe('2026-12-01');
    const later = await buildStatement(t.db, { siteId: shop.site.siteId, channelId: second, from: '2026-11-22', to: '2026-11-30' });
    expect(later.entries).toEqual([]);
    expect(later.opening_balance).toBe(0);
  });
});

describe('forex validation', () => {
  it('refuses unoffered currencies and expired quotes, naming the currency', async () => {
    const booking = await createBooking(t, shop, { total: 1000 });
    const kwd = await post(t, shop, { transaction_types: 'purchase', channels: shop.channelId, currencies: 'KWD', total: 307, token: 'tok_visa', bookings: [{ id: booking, currencies: 'USD', total: 1000 }] });
    expect(kwd.statusCode).toBe(400);
    expect(kwd.json().data.params.currencies).toMatch(/KWD is not offered/);
    clock = new Date('2026-11-22T12:00:00Z');
    const expired = await post(t, shop, { transaction_types: 'purchase', channels: shop.channelId, currencies: 'EUR', total: 950, token: 'tok_visa', bookings: [{ id: booking, currencies: 'USD', total: 1000 }] });
    expect(expired.statusCode).toBe(400);
    expect(expired.json().data.params.currencies).toMatch(/USD to EUR .*expired/);
    clock = new Date('2026-11-21T12:00:00Z');
  });

  it('converts into 0-decimal JPY and from a 3-decimal KWD channel', async () => {
    const booking = await createBooking(t, shop, { total: 1234 });
    const jpy = await post(t, shop, { transaction_types: 'purchase', channels: shop.channelId, currencies: 'JPY', total: 1851, token: 'tok_visa', bookings: [{ id: booking, currencies: 'USD', total: 1234 }] });
    expect(jpy.statusCode).toBe(201);
    expect(jpy.json()).toMatchObject({ total: 1851, currencies: 'JPY', forex_rate: '150' });
    const kwdShop = await createShop(t, { currency: 'KWD' });
    const card = await vault(kwdShop);
    const kwdBooking = await createBooking(t, kwdShop, { total: 10_000 });
    // 10.000 KWD at 3.257328990228 USD = 32.57 USD.
    const response = await post(t, kwdShop, { transaction_types: 'retained_purchase', channels: kwdShop.channelId, currencies: 'USD', total: 3257, linked_id: card, bookings: [{ id: kwdBooking, currencies: 'KWD', total: 10_000 }] });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ forex_rate: '3.257328990228', forex: [{ currencies: 'KWD', total: 10_000 }] });
  });
});

describe('allocation rules through the API', () => {
  it('refuses the paying channel, over-allocation and other sites without a grant; accepts with a grant', async () => {
    const booking = await createBooking(t, shop, { total: 5000 });
    const base = { transaction_types: 'purchase', channels: shop.channelId, currencies: 'USD', total: 5000, token: 'tok_visa', bookings: [{ id: booking, currencies: 'USD', total: 5000 }] };
    const self = await post(t, shop, { ...base, allocations: [{ channels: shop.channelId, total: 100 }] });
    expect(self.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { allocations: expect.stringContaining('paying channel') } } });
    const over = await post(t, shop, { ...base, allocations: [{ channels: second, total: 3000 }, { channels: second, total: 2001 }] });
    expect(over.json().data.params.allocations).toMatch(/add up to 5001 USD/);
    const malformed = await post(t, shop, { ...base, allocations: [{ channels: second, total: 100, operator: 'share' }] });
    expect(malformed.statusCode).toBe(400);
    const other = await createShop(t);
    const foreign = await post(t, shop, { ...base, allocations: [{ channels: other.channelId, total: 1000 }] });
    expect(foreign.json().data.params.allocations).toMatch(/does not exist or may not receive allocations/);
    expect(await funds(other.channelId)).toBe(0);
    await grantAllocation(t.db, { fromSiteId: shop.site.siteId, toSiteId: other.site.siteId });
    const granted = await post(t, shop, { ...base, allocations: [{ channels: other.channelId, total: 1000 }] });
    expect(granted.statusCode).toBe(201);
    expect(granted.json().allocations[0]).toMatchObject({ channels: other.channelId, total: 1000, reversed: false });
    expect(await funds(other.channelId)).toBe(1000);
    // The other site does not get to allocate back without its own grant.
    const otherBooking = await createBooking(t, other, { total: 100 });
    const back = await post(t, other, { transaction_types: 'purchase', channels: other.channelId, currencies: 'USD', total: 100, token: 'tok_visa', bookings: [{ id: otherBooking, currencies: 'USD', total: 100 }], allocations: [{ channels: shop.channelId, total: 10 }] });
    expect(back.statusCode).toBe(400);
  });

  it('applies an authorisation\'s allocations pro rata when it is captured, and a void leaves them reversed', async () => {
    const card = await vault();
    const booking = await createBooking(t, shop, { total: 8000 });
    const authorize = (await post(t, shop, {
      transaction_types: 'retained_authorize', channels: shop.channelId, currencies: 'USD', total: 8000, linked_id: card,
      bookings: [{ id: booking, currencies: 'USD', total: 8000 }], allocations: [{ channels: second, total: 2000 }],
    })).json();
    expect(authorize.allocations[0]).toMatchObject({ total: 2000, reversed: false });
    const before = await funds(second);
    const capture = await post(t, shop, { transaction_types: 'capture', channels: shop.channelId, currencies: 'USD', total: 6000, linked_id: authorize.id, bookings: [{ id: booking, currencies: 'USD', total: 6000 }] });
    expect(capture.statusCode).toBe(201);
    expect(capture.json().allocations).toEqual([expect.objectContaining({ channels: second, value: 2000, total: 1500, debit: { currencies: 'USD', total: 1500 }, reversed: false })]);
    expect(await funds(second)).toBe(before + 1500);

    const other = (await post(t, shop, {
      transaction_types: 'retained_authorize', channels: shop.channelId, currencies: 'USD', total: 1000, linked_id: card,
      bookings: [{ id: await createBooking(t, shop, { total: 1000 }), currencies: 'USD', total: 1000 }], allocations: [{ channels: second, total: 300 }],
    })).json();
    const voided = await post(t, shop, { transaction_types: 'void', channels: shop.channelId, currencies: 'USD', total: 1000, linked_id: other.id, bookings: other.bookings.map((b: { id: number }) => ({ id: b.id, currencies: 'USD', total: 1000 })) });
    expect(voided.statusCode).toBe(201);
    expect(voided.json()).toMatchObject({ total_remaining: 0, allocations: [] });
    expect((await get(t, shop, `/transactions/${other.id}`)).json().allocations[0]).toMatchObject({ reversed: true });
    expect(await funds(second)).toBe(before + 1500);
    const refundOfAllocationRequest = await post(t, shop, { transaction_types: 'refund', channels: shop.channelId, currencies: 'USD', total: 100, linked_id: capture.json().id, bookings: [{ id: booking, currencies: 'USD', total: 100 }], allocations: [{ channels: second, total: 1 }] });
    expect(refundOfAllocationRequest.json().data.params.allocations).toMatch(/reverse the linked transaction's allocations/);
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });
});

describe('statement command and statement_date filters', () => {
  it('prints a CSV statement whose opening and closing lines reconcile, and filters transactions by statement_date', async () => {
    const { commands } = await import('../../src/cli/commands/statement.js');
    const run = commands[0]!.run;
    const options = { site: shop.site.path, channel: String(second), from: '2026-11-01', to: '2026-11-30', format: 'csv' };
    const result = (await run(t.context, options, [])) as Record<symbol, string>;
    const csv = result[Symbol.for('trustfare.cli.rawOutput')]!;
    const lines = csv.trim().split('\n');
    expect(lines[0]).toBe('id,created,transaction_id,transaction_types,statement_date,account,currencies,direction,amount,balance,paid_currencies,paid_amount');
    const closing = lines.find((line) => line.includes(',closing,') && line.includes(',channel_funds,'))!;
    expect(Number(closing.split(',')[8])).toBe(await funds(second));
    const json = (await run(t.context, { ...options, format: 'json' }, [])) as { entries: unknown[]; closing_balance: number };
    expect(lines.length).toBe(1 + json.entries.length + 2 * 2); // header, entries, opening and closing of two accounts
    await expect(run(t.context, { ...options, to: '2026-10-01' }, [])).rejects.toThrow(/--to must not be before --from/);
    await expect(run(t.context, { ...options, channel: String(shop.channelId + 100000) }, [])).rejects.toThrow(/not a channel of this site/);

    const after = await get(t, shop, '/transactions?statement_date_after=2026-12-01&statement_date_before=2026-12-01&per_page=100');
    expect(after.statusCode).toBe(200);
    expect(after.json().length).toBeGreaterThan(0);
    for (const item of after.json()) expect(item.statement_date).toBe('2026-12-01');
    const none = await get(t, shop, '/transactions?statement_date_after=2027-01-01');
    expect(none.json()).toEqual([]);
  });
});
