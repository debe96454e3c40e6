import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { paymentCurrencyOptions } from '../../src/domain/hosted/currencies.js';
import { limits } from '../../src/limits.js';
import { addChannel, bookingRow, createBooking, createShop, get, paymentsContext, post, type Body, type Shop } from './support.js';

// Every movement of money takes at least one minor unit on both sides (docs/forex.md "Parts of a
// forex transaction", docs/allocations.md "Rules"). A part that moved 0 USD while the processor
// moved euros wrote no ledger entry and left the booking untouched; an allocation of 0 USD was
// shown as 1 KRW moved. Each is refused before anything is written or the processor is called.
let t: TestContext;
let shop: Shop;
let second: number;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  second = await addChannel(t, shop);
});
afterAll(async () => t.close());

const processorCalls = async () => (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM sandbox_operations')).count;
const transactionCount = async () => (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM transactions')).count;

/** A 400 naming `param`, and nothing written: no transaction row, no processor call. */
async function expectRefusedUntouched(body: Body, param: string, message: RegExp): Promise<void> {
  const [callsBefore, rowsBefore] = [await processorCalls(), await transactionCount()];
  const response = await post(t, shop, body);
  expect(response.statusCode).toBe(400);
  expect(response.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { [param]: expect.stringMatching(message) } } });
  expect(await processorCalls()).toBe(callsBefore);
  expect(await transactionCount()).toBe(rowsBefore);
}

/** A 1000 USD booking paid (or authorised) in EUR: 920 EUR at the sandbox rate 0.92. */
async function eurPayment(type: 'purchase' | 'authorize'): Promise<{ id: number; booking: number }> {
  const booking = await createBooking(t, shop, { total: 1000 });
  const response = await post(t, shop, {
    transaction_types: type, channels: shop.channelId, currencies: 'EUR', total: 920, token: 'tok_visa', bookings: [{ id: booking, currencies: 'USD', total: 1000 }],
  });
  expect(response.json()).toMatchObject({ status: 'complete', total: 920, forex: [{ currencies: 'USD', total: 1000 }] });
  return { id: response.json().id, booking };
}

const followUp = (type: string, linkedId: number, booking: number, total: number, channelTotal: number): Body => ({
  transaction_types: type, channels: shop.channelId, currencies: 'EUR', total, linked_id: linkedId, bookings: [{ id: booking, currencies: 'USD', total: channelTotal }],
});

describe('a forex part that moves nothing in the channel currency', () => {
  it('refuses a 1 EUR refund with a 0 USD share: no euro leaves, and later refunds keep the original rate', async () => {
    const purchase = await eurPayment('purchase');
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await expectRefusedUntouched(followUp('refund', purchase.id, purchase.booking, 1, 0), 'bookings', /positive amount/);
    }
    expect((await get(t, shop, `/transactions/${purchase.id}`)).json()).toMatchObject({ total_remaining: 920, adjustments: [] });
    expect(await bookingRow(t, purchase.booking)).toMatchObject({ status: 'paid', total_paid: 1000 });
    // 250 USD is still 230 EUR: nothing was taken from the paid side without the channel side.
    const refund = await post(t, shop, followUp('refund', purchase.id, purchase.booking, 230, 250));
    expect(refund.json()).toMatchObject({ status: 'complete', total: 230, forex: [{ total: 250 }] });
    expect(refund.json().payment_ids).not.toEqual([]);
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });

  it('refuses a 1 EUR capture with a 0 USD share: the hold stays, and the authorisation can still be captured', async () => {
    const authorization = await eurPayment('authorize');
    await expectRefusedUntouched(followUp('capture', authorization.id, authorization.booking, 1, 0), 'bookings', /positive amount/);
    expect((await get(t, shop, `/transactions/${authorization.id}`)).json()).toMatchObject({ total_remaining: 920, adjustments: [] });
    expect(await bookingRow(t, authorization.booking)).toMatchObject({ status: 'authorized', total_authorized: 1000, total_paid: 0 });
    const capture = await post(t, shop, followUp('capture', authorization.id, authorization.booking, 920, 1000));
    expect(capture.json()).toMatchObject({ status: 'complete', total: 920 });
    expect(await bookingRow(t, authorization.booking)).toMatchObject({ status: 'paid', total_paid: 1000 });
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });
});

describe('an allocation that moves nothing on one side', () => {
  it('refuses 1 KRW on a USD channel (0 USD at 1350 KRW per USD) and accepts 7 KRW (1 USD cent)', async () => {
    const booking = await createBooking(t, shop, { total: 100 });
    const purchase = (allocationTotal: number): Body => ({
      transaction_types: 'purchase', channels: shop.channelId, currencies: 'KRW', total: 1350, token: 'tok_visa',
      bookings: [{ id: booking, currencies: 'USD', total: 100 }], allocations: [{ channels: second, total: allocationTotal }],
    });
    await expectRefusedUntouched(purchase(1), 'allocations', /Allocation 0: .*0 USD/);
    const accepted = await post(t, shop, purchase(7));
    expect(accepted.json().allocations).toEqual([expect.objectContaining({ total: 7, currencies: 'KRW', debit: { currencies: 'USD', total: 1 }, credit: { currencies: 'USD', total: 1 } })]);
  });

  it('refuses 1 basis point of 100 USD cents (0 cents) and accepts 50 (half a cent, rounded up to 1)', async () => {
    const booking = await createBooking(t, shop, { total: 100 });
    const purchase = (basisPoints: number): Body => ({
      transaction_types: 'purchase', channels: shop.channelId, currencies: 'USD', total: 100, token: 'tok_visa',
      bookings: [{ id: booking, currencies: 'USD', total: 100 }], allocations: [{ channels: second, total: basisPoints, operator: 'percent' }],
    });
    await expectRefusedUntouched(purchase(1), 'allocations', /Allocation 0: .*0 USD/);
    const accepted = await post(t, shop, purchase(50));
    expect(accepted.json().allocations).toEqual([expect.objectContaining({ total: 1, operator: 'percent', debit: { currencies: 'USD', total: 1 } })]);
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });
});

// The other end: a payment in another currency whose converted total is above the largest amount
// any total may be (limits.amountCentsMax) can never be sent, and beyond exact integers it made
// the conversion throw, a 500.
describe('a forex payment above the largest total', () => {
  it('refuses bookings whose converted total no payment can carry with a 400 naming the limit, in the pay page currencies too', async () => {
    const max = limits.amountCentsMax;
    const bookings = [await createBooking(t, shop, { total: max }), await createBooking(t, shop, { total: max }), await createBooking(t, shop, { total: max })];
    const body = (count: number): Body => ({
      transaction_types: 'purchase', channels: shop.channelId, currencies: 'COP', total: max, token: 'tok_visa',
      bookings: bookings.slice(0, count).map((id) => ({ id, currencies: 'USD', total: max })),
    });
    // 3 × 10^12 USD cents at 4000 COP per USD are 1.2 × 10^16 COP cents: beyond exact integers.
    await expectRefusedUntouched(body(3), 'total', /more than the largest total one payment takes, 1000000000000 COP/);
    // 4 × 10^15 COP cents: an integer, but no total above 10^12 is accepted.
    await expectRefusedUntouched(body(1), 'total', /more than the largest total one payment takes/);
    const options = await paymentCurrencyOptions(t.context, { channel: { currency: 'USD', accountMode: 'test' }, amount: max, locale: 'en-GB' });
    expect(options.map((option) => option.currency)).not.toContain('COP');
    expect(options.every((option) => option.amount <= max)).toBe(true);
    expect(options.map((option) => option.currency)).toContain('EUR');
  });
});
