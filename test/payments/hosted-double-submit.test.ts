import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { signAuthString } from '../../src/domain/hosted/auth-string.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { bookingRow, createBooking, paymentsContext, type Shop, createShop } from './support.js';

// One hosted page session pays its amount once. A second submit of the same page (a second tab,
// a double click that got through) used to pass the session's checks while the first was still
// at the bank, and the cardholder paid a deposit twice; the booking's over-funding check only
// stops this when the amount is all that is left to pay.
let t: TestContext;
let shop: Shop;
beforeAll(async () => {
  t = await paymentsContext({ poolSize: 12, env: { PROCESSOR_TIMEOUT_MS: '20000' } });
  shop = await createShop(t);
});
afterAll(async () => t.close());

async function modalSession(booking: number, total: number): Promise<string> {
  const channel = await t.db.one<{ channel_secret: string }>('SELECT channel_secret FROM channels WHERE id = $1', [shop.channelId]);
  const auth = signAuthString({ channels: shop.channelId, currencies: 'USD', total, booking_id: booking }, channel.channel_secret, new Date());
  const opened = await t.app.inject({
    method: 'POST', url: '/hosted/modal/sessions',
    payload: { path: shop.site.path, channels: shop.channelId, currencies: 'USD', total, auth, verify: ['booking_id'], booking: { booking_id: booking }, origin: 'https://shop.example' },
  });
  expect(opened.statusCode).toBe(201);
  return opened.json().session;
}

describe('a hosted page submitted several times at once', () => {
  it('charges the deposit once; the other submits are told a payment is in progress', async () => {
    const booking = await createBooking(t, shop, { total: 100_000 });
    const session = await modalSession(booking, 12_500);
    const pay = () => t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: 'tok_visa' } });
    const answers = await Promise.all([pay(), pay(), pay()]);
    const paid = answers.filter((answer) => answer.statusCode === 201);
    expect(paid).toHaveLength(1);
    expect(paid[0]!.json()).toMatchObject({ outcome: 'complete', transaction: { total: 12_500 } });
    for (const refused of answers.filter((answer) => answer.statusCode !== 201)) {
      expect(refused.json()).toMatchObject({ code: 'rest_payment_in_progress', data: { status: 409 } });
    }
    expect(await bookingRow(t, booking)).toMatchObject({ total_paid: 12_500, status: 'partial-payment', transaction_ids: [paid[0]!.json().transaction.id] });
    // Once it is paid, the page says so rather than charging again.
    expect((await pay()).json()).toMatchObject({ code: 'rest_session_completed', data: { status: 409 } });
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });

  it('lets the page try another card once the first attempt was declined', async () => {
    const booking = await createBooking(t, shop, { total: 100_000 });
    const session = await modalSession(booking, 12_500);
    const pay = (card: string) => t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: card } });
    expect((await pay('tok_visa_declined')).json()).toMatchObject({ outcome: 'failed', attempts_left: 2 });
    expect((await pay('tok_visa')).json()).toMatchObject({ outcome: 'complete' });
    expect((await bookingRow(t, booking)).total_paid).toBe(12_500);
  });
});
