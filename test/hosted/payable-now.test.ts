import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { pageSessionOf } from '../support/fixtures.js';
import { signAuthString } from '../../src/domain/hosted/auth-string.js';
import { cli } from '../cli/helpers.js';
import { buildWebBundles } from '../e2e/support.js';
import { createBooking, createShop, get, paymentsContext, post, purchaseBody, type Shop } from '../payments/support.js';

// The payment request page and the modal offer only what can be paid on a booking now: its total
// less the money paid, authorised, in payments still being processed or under an open chargeback
// (payableNow, the sum the payments core refuses a payment above). total_unpaid, the spec's field,
// still says what the booking is owed.
let t: TestContext;
let shop: Shop;
let secret: string;
const logLines: string[] = [];

beforeAll(async () => {
  await buildWebBundles();
  t = await paymentsContext({ env: { LOG_LEVEL: 'warn' }, logStream: { write: (line: string) => void logLines.push(line) } });
  shop = await createShop(t);
  secret = (await t.db.one<{ channel_secret: string }>('SELECT channel_secret FROM channels WHERE id = $1', [shop.channelId])).channel_secret;
});
afterAll(async () => t.close());

/** A booking of `total` with `paid` of it purchased, and `disputed` of that charged back by the operator. */
async function chargedBack(options: { total: number; paid: number; disputed: number }): Promise<number> {
  const booking = await createBooking(t, shop, { total: options.total });
  const purchase = (await post(t, shop, purchaseBody(shop, booking, options.paid))).json();
  expect(purchase.status).toBe('complete');
  const chargeback = await cli(t.config.databaseUrl!, ['chargeback', '--site', shop.site.path, '--transaction', String(purchase.id), '--total', String(options.disputed)]);
  expect(chargeback.code, chargeback.stderr).toBe(0);
  return booking;
}

/** The booking's payment request page, as the payer opens it from the link. */
async function payPage(booking: number, language?: string) {
  const linked = await t.app.inject({ method: 'PUT', url: `${shop.base}/bookings/${booking}`, headers: shop.site.headers, payload: { payment_request_url: true } });
  const url = new URL(linked.json()._links.self[0].payment_request as string);
  const page = await t.app.inject({ url: `${url.pathname}${language ? `?language=${language}` : ''}` });
  expect(page.statusCode).toBe(200);
  return page.body;
}

/** Opens the modal for an existing booking, its ID signed into the auth string. */
function openModal(booking: number, total: number) {
  const auth = signAuthString({ channels: shop.channelId, currencies: 'USD', total, booking_id: booking }, secret, new Date());
  return t.app.inject({
    method: 'POST', url: '/hosted/modal/sessions',
    payload: { path: shop.site.path, channels: shop.channelId, currencies: 'USD', total, auth, verify: ['booking_id'], booking: { booking_id: booking }, origin: 'https://shop.example' },
  });
}

describe('what a hosted page offers to pay', () => {
  it('offers nothing for money under an open chargeback: the page says so in its language, the modal refuses the amount as booking data', async () => {
    const booking = await chargedBack({ total: 10_000, paid: 10_000, disputed: 4_000 });
    expect((await get(t, shop, `/bookings/${booking}`)).json()).toMatchObject({ status: 'locked', total_unpaid: 4_000 });

    const french = await payPage(booking, 'frFR');
    expect(french).toContain('Cette réservation ne peut pas être payée en ligne.');
    expect(french).not.toContain('id="card-form"');
    expect(french).not.toContain('id="amount-due"');
    expect(french).not.toContain('above its total');
    // The payments core's own refusal says the same amount.
    const again = (await post(t, shop, purchaseBody(shop, booking, 4_000, { token: 'tok_mastercard' }))).json();
    expect(again.data.params.bookings).toContain('(10000); 0 can be paid on it now: its total less the money paid, authorised, in payments still being processed or under an open chargeback.');

    const modal = await openModal(booking, 4_000);
    expect(modal.statusCode).toBe(400);
    expect(modal.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { total: expect.stringContaining('exceeds what can be paid on the booking now (0)') } } });
    expect((await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM hosted_sessions WHERE booking_id = $1', [booking])).count).toBe(0);
  });

  it('offers the part not under dispute, and the payment it offers is taken', async () => {
    // Total 100.00, 60.00 paid, 20.00 of it charged back: 60.00 unpaid, 40.00 payable now.
    const booking = await chargedBack({ total: 10_000, paid: 6_000, disputed: 2_000 });
    expect((await get(t, shop, `/bookings/${booking}`)).json()).toMatchObject({ total_unpaid: 6_000 });
    const page = await payPage(booking);
    expect(page).toMatch(/id="amount-due">US\$40\.00</);
    expect(page).toContain('Pay US$40.00');

    expect((await post(t, shop, purchaseBody(shop, booking, 4_001))).json().data.params.bookings).toContain('; 4000 can be paid on it now');
    expect((await openModal(booking, 4_001)).json()).toMatchObject({ data: { params: { total: expect.stringContaining('(4000)') } } });
    expect((await openModal(booking, 4_000)).statusCode).toBe(201);

    const session = pageSessionOf(page)!;
    const paid = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: 'tok_visa' } });
    expect(paid.json()).toMatchObject({ outcome: 'complete', transaction: { total: 4_000 } });
  });

  it('offers nothing while a payment of the booking awaits its 3DS challenge, and says for how many minutes at most', async () => {
    const booking = await createBooking(t, shop, { total: 3_000 });
    const pending = (await post(t, shop, purchaseBody(shop, booking, 3_000, { token: 'tok_visa_3ds_challenge', attempt_3ds: true }))).json();
    expect(pending.status).toBe('pending');
    const german = await payPage(booking, 'deDE');
    // The challenge lapses with the payments job (pendingExpiryMinutes); "in a few minutes" sent the payer back for up to 35.
    expect(german).toMatch(/Eine Zahlung für diese Buchung wartet darauf, dass der Karteninhaber sie bei seiner Bank bestätigt .* Minuten bis dahin: 3[56]\./);
    expect(german).not.toContain('id="card-form"');
    expect((await openModal(booking, 3_000)).json()).toMatchObject({ data: { params: { total: expect.stringContaining('(0)') } } });
  });

  it("tells a modal opened anew during another modal's 3DS challenge for how many minutes at most the booking is held (booking_error data), which the frame says", async () => {
    const booking = await createBooking(t, shop, { total: 3_100 });
    expect((await post(t, shop, purchaseBody(shop, booking, 3_100, { token: 'tok_visa_3ds_challenge', attempt_3ds: true }))).json().status).toBe('pending');
    const refused = (await openModal(booking, 3_100)).json();
    expect(refused.data).toMatchObject({ nothing_payable: 'in_progress' });
    expect([35, 36]).toContain(refused.data.lapses_in_minutes);
  });
});

describe('a site without a member the modal can act for', () => {
  it('refuses the modal session in the error shape, not with a server error, and logs it as a warning', async () => {
    const lonely = await createShop(t);
    const lonelySecret = (await t.db.one<{ channel_secret: string }>('SELECT channel_secret FROM channels WHERE id = $1', [lonely.channelId])).channel_secret;
    // Removed in SQL: `membership remove` keeps the last member who is not read-only.
    await t.db.query('UPDATE memberships SET read_only = true WHERE site_id = $1', [lonely.site.siteId]);
    const auth = signAuthString({ channels: lonely.channelId, currencies: 'USD', total: 100 }, lonelySecret, new Date());
    const answer = await t.app.inject({
      method: 'POST', url: '/hosted/modal/sessions',
      payload: {
        path: lonely.site.path, channels: lonely.channelId, currencies: 'USD', total: 100, auth, origin: 'https://shop.example',
        booking: { booking_id: 0, firstname: 'Eve', surname: 'Example', email: 'eve@example.com', date: '2031-05-20', countries: 'GB' },
      },
    });
    expect(answer.statusCode).toBe(403);
    expect(answer.json()).toEqual({ code: 'rest_forbidden', message: expect.stringContaining('no member who is not read-only'), data: { status: 403 } });
    // Nothing was kept of the refused session: no draft booking.
    expect((await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM bookings WHERE site_id = $1', [lonely.site.siteId])).count).toBe(0);
    const warned = logLines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.msg.includes('no member to act for'));
    expect(warned).toEqual([expect.objectContaining({ level: 40 })]);
  });
});
