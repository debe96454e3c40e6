import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestContext } from '../support/context.js';
import { signAuthString } from '../../src/domain/hosted/auth-string.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { bankHolds, bookingRow, createBooking, createShop, paymentsContext, type Shop } from './support.js';

// One hosted page session pays its amount once. A second submit of the same page (a second tab,
// a double click that got through) used to pass the session's checks while the first was still
// at the bank, and the cardholder paid a deposit twice; the booking's over-funding check only
// stops this when the amount is all that is left to pay.
let t: TestContext;
let shop: Shop;
let holdAtTheBank: ReturnType<typeof bankHolds>;
beforeAll(async () => {
  t = await paymentsContext({ poolSize: 12, env: { PROCESSOR_TIMEOUT_MS: '20000' } });
  shop = await createShop(t);
  holdAtTheBank = bankHolds(t, 'authorise');
});
afterAll(async () => t.close());

async function authFor(booking: number, total: number): Promise<string> {
  const channel = await t.db.one<{ channel_secret: string }>('SELECT channel_secret FROM channels WHERE id = $1', [shop.channelId]);
  return signAuthString({ channels: shop.channelId, currencies: 'USD', total, booking_id: booking }, channel.channel_secret, new Date());
}

async function modalSession(booking: number, total: number, options: { auth?: string; frame?: Record<string, unknown> } = {}): Promise<string> {
  const auth = options.auth ?? (await authFor(booking, total));
  const opened = await t.app.inject({
    method: 'POST', url: '/hosted/modal/sessions',
    payload: { path: shop.site.path, channels: shop.channelId, currencies: 'USD', total, auth, verify: ['booking_id'], booking: { booking_id: booking }, origin: 'https://shop.example', ...options.frame },
  });
  expect(opened.statusCode).toBe(201);
  return opened.json().session;
}

const payWith = (session: string, card = 'tok_visa') => t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: card } });

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

  it('charges the deposit once when the modal frame is reloaded while its payment is at the bank', async () => {
    const booking = await createBooking(t, shop, { total: 100_000 });
    const auth = await authFor(booking, 12_500);
    // The random name payment-modal.js gives the modal, which its reloaded frame sends again.
    const opener = 'modal-0pener-0f-the-host-page';
    const first = await modalSession(booking, 12_500, { auth, frame: { opener } });
    const atTheBank = holdAtTheBank();
    const paying = payWith(first);
    await vi.waitFor(() => expect(atTheBank.reached).toBe(true), { timeout: 10_000 });
    // The payer reloads the frame: a new session of the same modal, for the same deposit.
    const reloaded = await modalSession(booking, 12_500, { auth, frame: { opener, reloaded: true, resume_booking_id: booking } });
    expect((await payWith(reloaded)).json()).toMatchObject({ code: 'rest_payment_in_progress', data: { status: 409 } });
    atTheBank.release();
    expect((await paying).json()).toMatchObject({ outcome: 'complete' });
    expect((await payWith(reloaded)).json()).toMatchObject({ code: 'rest_session_completed', data: { status: 409 } });
    expect(await bookingRow(t, booking)).toMatchObject({ total_paid: 12_500, transaction_ids: [expect.any(Number)] });
  });

  it('gives a frame reloaded during a 3DS challenge that challenge back, and no second payment beside it', async () => {
    // The reload resumes the pending challenge (docs/modal.md "A reloaded frame"): a new card
    // beside it could be charged as well as the challenge the payer may still complete.
    const booking = await createBooking(t, shop, { total: 100_000 });
    const auth = await authFor(booking, 12_500);
    const opener = 'modal-0pener-0f-another-page';
    const first = await modalSession(booking, 12_500, { auth, frame: { opener } });
    expect((await payWith(first, 'tok_visa_3ds_challenge')).json()).toMatchObject({ outcome: 'challenge' });
    const reopened = await t.app.inject({
      method: 'POST', url: '/hosted/modal/sessions',
      payload: { path: shop.site.path, channels: shop.channelId, currencies: 'USD', total: 12_500, auth, verify: ['booking_id'], booking: { booking_id: booking }, origin: 'https://shop.example', opener, reloaded: true, resume_booking_id: booking },
    });
    expect(reopened.statusCode).toBe(201);
    expect(reopened.json()).toMatchObject({ payment_pending: true });
    expect((await payWith(reopened.json().session)).json()).toMatchObject({ code: 'rest_payment_in_progress', data: { status: 409 } });
    expect((await bookingRow(t, booking)).total_paid).toBe(0);
  });

  it('holds the page on a payment whose settlement failed after the bank was asked: it reads it, and a retry charges nothing', async () => {
    // The settlement of this one amount fails as a database fault would, after the bank approved.
    await t.db.query(`CREATE FUNCTION fail_settlement_for_test() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'terminating connection due to administrator command'; END $$`);
    await t.db.query(`CREATE TRIGGER fail_settlement BEFORE UPDATE ON transactions FOR EACH ROW
      WHEN (OLD.status = 'incomplete' AND NEW.status <> 'incomplete' AND NEW.total = 12345) EXECUTE FUNCTION fail_settlement_for_test()`);
    try {
      const booking = await createBooking(t, shop, { total: 100_000 });
      const session = await modalSession(booking, 12_345);
      expect((await payWith(session)).statusCode).toBe(500);
      // The page reads where its payment is (the answer it lost) rather than 404...
      const current = await t.app.inject({ method: 'GET', url: '/hosted/payments/current', headers: { authorization: `Bearer ${session}` } });
      expect(current.json()).toMatchObject({ outcome: 'timeout', transaction: { status: 'incomplete', total: 12_345 } });
      // ...and a second submit does not charge the deposit again while the first is unresolved.
      expect((await payWith(session)).json()).toMatchObject({ code: 'rest_payment_in_progress', data: { status: 409 } });
      expect((await bookingRow(t, booking)).transaction_ids).toEqual([current.json().transaction.id]);
    } finally {
      await t.db.query('DROP TRIGGER fail_settlement ON transactions; DROP FUNCTION fail_settlement_for_test()');
    }
  });
});
