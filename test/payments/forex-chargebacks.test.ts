import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { addUser } from '../support/fixtures.js';
import { commands as chargebackCommands } from '../../src/cli/commands/chargeback.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { bookingRow, createBooking, createShop, get, paymentsContext, post, type Body, type Shop } from './support.js';

// Chargebacks of a payment made in EUR for USD bookings (sandbox rate 0.92 EUR per USD). The
// chargeback's `total` is in EUR (the paid currency); the ledger and the bookings move USD,
// converted at the original rate cumulatively, so the parts add up to the payment exactly.
let t: TestContext;
let shop: Shop;
let admin: Shop;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  const operator = await addUser(t.db, shop.site.siteId, { role: 'member_admin', platformAdmin: true });
  admin = { ...shop, site: { ...shop.site, headers: operator.headers } };
});
afterAll(async () => t.close());

async function balance(account: string): Promise<number> {
  const row = await t.db.one<{ balance: number }>(
    `SELECT coalesce(sum(CASE WHEN direction = 'credit' THEN amount ELSE -amount END), 0)::bigint AS balance
       FROM ledger_entries WHERE channel_id = $1 AND currency = 'USD' AND account = $2`,
    [shop.channelId, account],
  );
  return Number(row.balance);
}

async function ledgerOf(id: number) {
  return t.db.query<{ account: string; direction: string; amount: number; currency: string; paid_currency: string | null; paid_amount: number | null }>(
    'SELECT account, direction, amount, currency, paid_currency, paid_amount FROM ledger_entries WHERE transaction_id = $1 ORDER BY id',
    [id],
  );
}

/** A EUR payment of two USD bookings (1111 + 2222 = 3333 USD → 3066 EUR, 3066.36 rounded). */
async function eurPayment(): Promise<{ id: number; bookings: [number, number] }> {
  const vault = (await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: 'USD', total: 0, token: 'tok_visa' })).json();
  const bookings: [number, number] = [await createBooking(t, shop, { total: 1111 }), await createBooking(t, shop, { total: 2222 })];
  const body: Body = {
    transaction_types: 'retained_purchase', channels: shop.channelId, currencies: 'EUR', total: 3066, linked_id: vault.id,
    bookings: [{ id: bookings[0], currencies: 'USD', total: 1111 }, { id: bookings[1], currencies: 'USD', total: 2222 }],
  };
  const response = await post(t, shop, body);
  expect(response.json()).toMatchObject({ status: 'complete', total: 3066, forex_rate: '0.92' });
  return { id: response.json().id, bookings };
}

const channelTotal = async (id: number) => (await get(t, shop, `/transactions/${id}`)).json().forex[0].total as number;

describe('chargebacks of forex transactions', () => {
  it('charges back part of a EUR payment at the original rate, reverses it in parts, then charges back all of it: the channel nets to zero', async () => {
    const payment = await eurPayment();
    const first = await post(t, admin, { transaction_types: 'chargeback', linked_id: payment.id, total: 1000 });
    expect(first.statusCode).toBe(201);
    // 1000 EUR / 0.92 = 1086.96 → 1087 USD, at the original rate.
    expect(first.json()).toMatchObject({ status: 'complete', currencies: 'EUR', total: 1000, total_remaining: 1000, forex_rate: '0.92', forex: [{ currencies: 'USD', total: 1087 }] });
    expect(await ledgerOf(first.json().id)).toEqual([
      { account: 'chargebacks_disputed', direction: 'debit', amount: 1087, currency: 'USD', paid_currency: 'EUR', paid_amount: 1000 },
      { account: 'processor_clearing', direction: 'credit', amount: 1087, currency: 'USD', paid_currency: 'EUR', paid_amount: 1000 },
      { account: 'channel_funds', direction: 'debit', amount: 1087, currency: 'USD', paid_currency: 'EUR', paid_amount: 1000 },
      { account: 'chargeback_reserve', direction: 'credit', amount: 1087, currency: 'USD', paid_currency: 'EUR', paid_amount: 1000 },
    ]);
    expect((await get(t, shop, `/transactions/${payment.id}`)).json()).toMatchObject({ status: 'locked', total_remaining: 2066 });
    expect(await bookingRow(t, payment.bookings[0])).toMatchObject({ status: 'locked', total_paid: 24 });
    expect(await balance('channel_funds')).toBe(3333 - 1087);

    // Reversed in two halves: 500 EUR → 543.48 → 543 USD, and the closing 500 EUR gives the rest, 544.
    const half = await post(t, admin, { transaction_types: 'chargeback-reversal', linked_id: first.json().id, total: 500 });
    expect(half.json()).toMatchObject({ total: 500, forex: [{ total: 543 }] });
    const closing = await post(t, admin, { transaction_types: 'chargeback-reversal', linked_id: first.json().id, total: 500 });
    expect(closing.json()).toMatchObject({ total: 500, forex: [{ total: 544 }] });
    expect((await get(t, shop, `/transactions/${payment.id}`)).json()).toMatchObject({ status: 'complete', total_remaining: 3066 });
    expect(await bookingRow(t, payment.bookings[0])).toMatchObject({ status: 'paid', total_paid: 1111, locked_transactions: 0 });
    expect(await balance('channel_funds')).toBe(3333);

    // A full chargeback (3066 EUR) takes exactly the 3333 USD the payment brought.
    const full = await post(t, admin, { transaction_types: 'chargeback', linked_id: payment.id, total: 3066 });
    expect(full.statusCode).toBe(201);
    expect(await channelTotal(full.json().id)).toBe(3333);
    expect(await balance('channel_funds')).toBe(0);
    expect(await balance('processor_clearing')).toBe(0);
    expect(await bookingRow(t, payment.bookings[0])).toMatchObject({ total_paid: 0 });
    expect(await bookingRow(t, payment.bookings[1])).toMatchObject({ total_paid: 0 });
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);

    // Lost dispute (CLI): the override closes the whole chargeback, 3333 USD, and the payment stays locked.
    const final = await cliChargeback(full.json().id, 3066, 'chargeback-override');
    expect(final).toMatchObject({ total: 3066, forex: [{ total: 3333 }] });
    expect((await ledgerOf(final.id)).map((entry) => [entry.account, entry.amount, entry.paid_amount])).toEqual([
      ['chargeback_reserve', 3333, 3066], ['chargebacks_disputed', 3333, 3066],
    ]);
    expect(await balance('chargeback_reserve')).toBe(0);
    expect((await get(t, shop, `/transactions/${payment.id}`)).json()).toMatchObject({ status: 'locked', total_remaining: 0 });
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });

  it('charges back the rest after a refund, and closes it in parts (CLI) that add up to its USD amount', async () => {
    const before = await balance('channel_funds');
    const payment = await eurPayment();
    const refund = await post(t, shop, {
      transaction_types: 'refund', channels: shop.channelId, currencies: 'EUR', total: 920, linked_id: payment.id, bookings: [{ id: payment.bookings[0], currencies: 'USD', total: 1000 }],
    });
    expect(refund.json()).toMatchObject({ status: 'complete', total: 920 });
    // The rest in EUR (2146) is the rest in USD (2333).
    const chargeback = await cliChargeback(payment.id, 2146, 'chargeback');
    expect(chargeback).toMatchObject({ total: 2146, forex: [{ total: 2333 }] });
    expect(await balance('channel_funds') - before).toBe(0);

    // 1000 EUR of it reversed: 1000 / 0.92 → 1087 USD; the override closes the other 1246.
    const reversal = await cliChargeback(chargeback.id, 1000, 'chargeback-reversal');
    expect(reversal.forex[0]!.total).toBe(1087);
    const override = await cliChargeback(chargeback.id, 1146, 'chargeback-override');
    expect(override.forex[0]!.total).toBe(2333 - 1087);
    expect(await balance('channel_funds') - before).toBe(1087);
    expect((await get(t, shop, `/transactions/${payment.id}`)).json()).toMatchObject({ status: 'locked', total_remaining: 1000 });
    const paid = (await bookingRow(t, payment.bookings[0])).total_paid + (await bookingRow(t, payment.bookings[1])).total_paid;
    expect(paid).toBe(1087);
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });
});

describe('a chargeback naming another currency or channel than its payment', () => {
  it('is refused, and nothing is booked: a USD total read as EUR would take another amount', async () => {
    const payment = await eurPayment();
    const usd = await post(t, admin, { transaction_types: 'chargeback', linked_id: payment.id, total: 1000, currencies: 'USD' });
    expect(usd.statusCode).toBe(400);
    expect(usd.json().data.params.currencies).toContain('EUR');
    const elsewhere = await post(t, admin, { transaction_types: 'chargeback', linked_id: payment.id, total: 100, channels: shop.channelId + 1000 });
    expect(elsewhere.json().data.params).toHaveProperty('channels');
    expect((await get(t, shop, `/transactions/${payment.id}`)).json()).toMatchObject({ status: 'complete', total_remaining: 3066, adjustments: [] });
    // Naming the payment's own currency and channel is fine.
    const named = await post(t, admin, { transaction_types: 'chargeback', linked_id: payment.id, total: 3066, currencies: 'EUR', channels: shop.channelId });
    expect(named.json()).toMatchObject({ status: 'complete', total: 3066, forex: [{ total: 3333 }] });
  });
});

describe('ledger verify on forex payments', () => {
  it('names a payment whose entries carry other paid amounts than the cardholder paid, or another paid currency', async () => {
    const payment = await eurPayment();
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
    // Entries are append-only: altered with the triggers off, as the ledger tests slip one in.
    const alter = (set: string) => t.db.transaction(async (tx) => {
      await tx.query('ALTER TABLE ledger_entries DISABLE TRIGGER USER');
      await tx.query(`UPDATE ledger_entries SET ${set} WHERE transaction_id = $1 AND account = 'channel_funds' AND direction = 'credit'`, [payment.id]);
      await tx.query('ALTER TABLE ledger_entries ENABLE TRIGGER USER');
    });
    await alter('paid_amount = paid_amount - 1');
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([
      { check: 'entries_match_paid_total', detail: `forex retained_purchase ${payment.id} of 3066 EUR paid credited 3065 to the channel` },
    ]);
    await alter(`paid_amount = paid_amount + 1, paid_currency = 'GBP'`);
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([
      { check: 'entries_match_paid_total', detail: `forex retained_purchase ${payment.id} of 3066 EUR paid credited 3066 to the channel, 1 entries in another paid currency` },
    ]);
  });
});

type ChargebackJson = { id: number; total: number; forex: { total: number }[] };

/** `trustfare chargeback` as the operator runs it. */
function cliChargeback(id: number, total: number, type: string): Promise<ChargebackJson> {
  const command = chargebackCommands.find((candidate) => candidate.name === 'chargeback')!;
  return command.run(t.context, { site: shop.site.path, transaction: String(id), total: String(total), type }, []) as Promise<ChargebackJson>;
}
