import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createAppContext, type AppContext } from '../../src/context.js';
import { signJwt } from '../../src/domain/credentials.js';
import { createHostedSession } from '../../src/domain/hosted/sessions.js';
import { testEnv, type TestContext } from '../support/context.js';
import { addChannel, bookingRow, createBooking, createShop, paymentsContext, purchaseBody, type Body, type Shop } from './support.js';

// The sandbox approves any real card. A production server has no real acquirer yet, so a card
// payment on a channel that is not in test mode must be refused before anything is written or
// the sandbox is asked: before, it answered `complete`, "Approved (sandbox)", and the booking
// showed paid while no money moved. Development keeps live channels on the sandbox.
// docs/sandbox.md "Live channels".
let t: TestContext;
let shop: Shop;
let liveChannel: number;
/** The same database served as a development server: the sandbox takes its live payments. */
let development: { app: App; context: AppContext };

beforeAll(async () => {
  t = await paymentsContext({ env: { NODE_ENV: 'production' } });
  shop = await createShop(t);
  liveChannel = await addChannel(t, shop, { accountMode: 'live' });
  const context = createAppContext(loadConfig({ ...testEnv, NODE_ENV: 'development', DATABASE_URL: t.config.databaseUrl!, PROCESSOR_TIMEOUT_MS: '10000' }), t.db);
  development = { app: await buildApp({ context, logger: false }), context };
});
afterAll(async () => {
  await development.app.close();
  await development.context.close();
  await t.close();
});

function post(app: App, body: Body) {
  return app.inject({ method: 'POST', url: `${shop.base}/transactions`, headers: shop.site.headers, payload: body });
}

/** The hosted page's card capture of a real (non-test) card: a `ct_` token. */
async function captureToken(app: App, channelId: number): Promise<string> {
  const jwt = await signJwt(t.config.secrets.jwtSecret, { userId: shop.site.userId, kind: 'cardvaultuser', siteId: shop.site.siteId });
  const response = await app.inject({
    method: 'POST', url: `${shop.base}/cards`, headers: { authorization: `Bearer ${jwt}` },
    payload: { channels: channelId, card_number: '4242 4242 4242 4242', expiry_month: '04', expiry_year: new Date().getUTCFullYear() + 3, cvv: '123' },
  });
  expect(response.statusCode).toBe(201);
  return response.json().token;
}

function livePurchase(channelId: number, bookingId: number, token: string, total = 2500): Body {
  return { ...purchaseBody(shop, bookingId, total, { token }), channels: channelId };
}

/** What a refused request must leave as it was: every row a payment writes, and the sandbox's. */
async function footprint() {
  return t.db.one('SELECT (SELECT count(*) FROM transactions)::int AS transactions, (SELECT count(*) FROM ledger_entries)::int AS entries, (SELECT count(*) FROM sandbox_operations)::int AS sandbox');
}

function expectRefused(response: { statusCode: number; json(): unknown }): void {
  expect(response.statusCode).toBe(409);
  expect(response.json()).toEqual({ code: 'rest_no_live_processor', message: expect.stringContaining('no live payment processor is configured'), data: { status: 409 } });
}

describe('a live channel on a development server', () => {
  it('is processed by the sandbox, which approves a real card', async () => {
    const booking = await createBooking(t, shop, { channelId: liveChannel, total: 2500 });
    const paid = await post(development.app, livePurchase(liveChannel, booking, await captureToken(development.app, liveChannel)));
    expect(paid.statusCode).toBe(201);
    expect(paid.json()).toMatchObject({ status: 'complete', content: expect.stringContaining('Approved (sandbox)') });
    expect((await bookingRow(t, booking)).total_paid).toBe(2500);
  });
});

describe('a production server without a live payment processor', () => {
  it('refuses every card payment on a live channel, writing nothing and asking no processor', async () => {
    // Rows recorded before the upgrade, by the development server: a vaulted card, an
    // authorisation and a purchase on the live channel.
    // A capture token pays for one charge (docs/vault.md): one per row.
    const vault = (await post(development.app, { transaction_types: 'vault', channels: liveChannel, currencies: 'USD', total: 0, token: await captureToken(development.app, liveChannel) })).json();
    const authorized = await createBooking(t, shop, { channelId: liveChannel, total: 4000 });
    const authorization = (await post(development.app, { ...livePurchase(liveChannel, authorized, await captureToken(development.app, liveChannel), 4000), transaction_types: 'authorize' })).json();
    const paidBooking = await createBooking(t, shop, { channelId: liveChannel, total: 2500 });
    const purchase = (await post(development.app, livePurchase(liveChannel, paidBooking, await captureToken(development.app, liveChannel)))).json();
    expect([vault.status, authorization.status, purchase.status]).toEqual(['complete', 'complete', 'complete']);

    const unpaid = await createBooking(t, shop, { channelId: liveChannel, total: 2500 });
    const before = { footprint: await footprint(), bookings: await Promise.all([unpaid, authorized, paidBooking].map((id) => bookingRow(t, id))) };
    // Captured where the sandbox takes live cards: this server refuses the capture itself (below).
    const freshToken = await captureToken(development.app, liveChannel);
    const share = (bookingId: number, total: number) => ({ bookings: [{ id: bookingId, currencies: 'USD', total }] });
    const requests: [string, Body][] = [
      ['purchase', livePurchase(liveChannel, unpaid, freshToken)],
      ['authorize', { ...livePurchase(liveChannel, unpaid, freshToken), transaction_types: 'authorize' }],
      ['vault', { transaction_types: 'vault', channels: liveChannel, currencies: 'USD', total: 0, token: freshToken }],
      ['retained_purchase', { transaction_types: 'retained_purchase', channels: liveChannel, currencies: 'USD', total: 2500, linked_id: vault.id, ...share(unpaid, 2500) }],
      ['retained_authorize', { transaction_types: 'retained_authorize', channels: liveChannel, currencies: 'USD', total: 2500, linked_id: vault.id, ...share(unpaid, 2500) }],
      ['capture', { transaction_types: 'capture', channels: liveChannel, currencies: 'USD', total: 4000, linked_id: authorization.id, ...share(authorized, 4000) }],
      ['void', { transaction_types: 'void', channels: liveChannel, currencies: 'USD', total: 4000, linked_id: authorization.id, ...share(authorized, 4000) }],
      ['refund', { transaction_types: 'refund', channels: liveChannel, currencies: 'USD', total: 2500, linked_id: purchase.id, ...share(paidBooking, 2500) }],
    ];
    for (const [type, body] of requests) {
      const response = await post(t.app, body);
      expect(response.statusCode, type).toBe(409);
      expectRefused(response);
    }
    expect(await footprint()).toEqual(before.footprint);
    expect(await Promise.all([unpaid, authorized, paidBooking].map((id) => bookingRow(t, id)))).toEqual(before.bookings);
  });

  it('refuses draft channels too: the processor takes them in live mode, with real cards', async () => {
    const draft = await addChannel(t, shop, { accountMode: 'draft' });
    const booking = await createBooking(t, shop, { channelId: draft, total: 2500 });
    const before = await footprint();
    expectRefused(await post(t.app, livePurchase(draft, booking, await captureToken(development.app, draft))));
    expect(await footprint()).toEqual(before);
    expect((await bookingRow(t, booking)).total_paid).toBe(0);
  });

  it('shows the refusal on a hosted page, not a decline, and counts no card attempt', async () => {
    const booking = await createBooking(t, shop, { channelId: liveChannel, total: 2500 });
    const { token: session, session: { id: sessionId } } = await createHostedSession(t.db, {
      kind: 'pay', siteId: shop.site.siteId, channelId: liveChannel, userId: shop.site.userId, bookingId: booking, amount: 2500, currency: 'USD', language: 'enGB',
    }, new Date());
    const before = await footprint();
    const response = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: await captureToken(development.app, liveChannel) } });
    expectRefused(response);
    expect(await footprint()).toEqual(before);
    expect((await t.db.one<{ attempts: number }>('SELECT attempts FROM hosted_sessions WHERE id = $1', [sessionId])).attempts).toBe(0);
    expect((await bookingRow(t, booking)).total_paid).toBe(0);
  });

  it('refuses to capture a card for a live channel: no payment could use it, so the vault keeps no real card number for nothing', async () => {
    const jwt = await signJwt(t.config.secrets.jwtSecret, { userId: shop.site.userId, kind: 'cardvaultuser', siteId: shop.site.siteId });
    const cards = async () => (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards WHERE site_id = $1', [shop.site.siteId])).count;
    const before = await cards();
    const capture = (channelId: number, cardNumber: string) => t.app.inject({
      method: 'POST', url: `${shop.base}/cards`, headers: { authorization: `Bearer ${jwt}` },
      payload: { channels: channelId, card_number: cardNumber, expiry_month: '04', expiry_year: new Date().getUTCFullYear() + 3, cvv: '123' },
    });
    const refused = await capture(liveChannel, '4242 4242 4242 4242');
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ code: 'rest_no_live_processor', message: expect.stringContaining('The card was not stored.'), data: { status: 409 } });
    expect(await cards()).toBe(before);
    // A test card on a test channel is captured as ever.
    expect((await capture(shop.channelId, '4111 1111 1111 1111')).statusCode).toBe(201);
    expect(await cards()).toBe(before + 1);
  });

  it('still takes payments on test channels', async () => {
    const booking = await createBooking(t, shop, { total: 1500 });
    const paid = await post(t.app, purchaseBody(shop, booking, 1500));
    expect(paid.statusCode).toBe(201);
    expect(paid.json()).toMatchObject({ status: 'complete' });
    expect((await bookingRow(t, booking)).total_paid).toBe(1500);
  });

  it("refunds a test channel's sandbox payment after the channel was closed: the refund is in the payment's test mode", async () => {
    const channel = await addChannel(t, shop);
    const booking = await createBooking(t, shop, { channelId: channel, total: 1500 });
    const paid = (await post(t.app, { ...purchaseBody(shop, booking, 1500), channels: channel })).json();
    await t.db.query(`UPDATE channels SET account_mode = 'closed' WHERE id = $1`, [channel]);
    const refund = await post(t.app, { transaction_types: 'refund', channels: channel, currencies: 'USD', total: 1500, linked_id: paid.id, bookings: [{ id: booking, currencies: 'USD', total: 1500 }] });
    expect(refund.statusCode).toBe(201);
    expect(refund.json()).toMatchObject({ status: 'complete' });
    expect((await bookingRow(t, booking)).total_paid).toBe(0);
  });
});
