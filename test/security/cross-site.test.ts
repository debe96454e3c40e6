import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../../src/domain/credentials.js';
import { addUser } from '../support/fixtures.js';
import { createHostedSession } from '../../src/domain/hosted/sessions.js';
import type { TestContext } from '../support/context.js';
import { addChannel, createBooking, createShop, paymentsContext, post, purchaseBody, type Shop } from '../payments/support.js';

// Site B's credential naming what site A owns, in every place a request can name it: ids in the
// path, list filters, a transaction's channel, bookings, linked_id, vault token, capture token and
// allocation target, a page session's card. Each is refused as unknown (nothing of A's shows), and
// nothing is written. The database's own guard (migration 015) is tenant-integrity.test.ts.
let t: TestContext;
let siteA: Shop;
let siteB: Shop;
const a = { booking: 0, purchase: 0, authorization: 0, vault: 0, vaultToken: '' };
beforeAll(async () => {
  t = await paymentsContext();
  siteA = await createShop(t);
  siteB = await createShop(t);
  a.booking = await createBooking(t, siteA, { total: 9_000, reference: 'SITE-A-SECRET' });
  a.purchase = (await post(t, siteA, purchaseBody(siteA, a.booking, 2_000))).json().id;
  a.authorization = (await post(t, siteA, { ...purchaseBody(siteA, a.booking, 1_000), transaction_types: 'authorize' })).json().id;
  const vault = (await post(t, siteA, { transaction_types: 'vault', channels: siteA.channelId, currencies: 'USD', total: 0, token: 'tok_visa' })).json();
  a.vault = vault.id;
  a.vaultToken = vault.token;
});
afterAll(async () => t.close());

const rowCounts = async () => (await t.db.one<{ transactions: number; bookings: number; cards: number }>(
  'SELECT (SELECT count(*)::int FROM transactions) AS transactions, (SELECT count(*)::int FROM bookings) AS bookings, (SELECT count(*)::int FROM cards) AS cards',
));

/** A capture token of site A's channel, as its vaulting app would get one. */
async function captureTokenOfA(): Promise<string> {
  const jwt = await signJwt(t.config.secrets.jwtSecret, { userId: siteA.site.userId, kind: 'cardvaultuser', siteId: siteA.site.siteId });
  const captured = await t.app.inject({
    method: 'POST', url: `${siteA.base}/cards`, headers: { authorization: `Bearer ${jwt}` },
    payload: { channels: siteA.channelId, card_number: '4111111111111111', expiry_month: 12, expiry_year: 2031, cvv: '123' },
  });
  expect(captured.statusCode).toBe(201);
  return captured.json().token;
}

describe("site B naming site A's things", () => {
  it('reads, changes and deletes nothing of A by id, and its list filters find nothing of A', async () => {
    const asB = (method: 'GET' | 'PUT' | 'DELETE', path: string, payload?: Record<string, unknown>) =>
      t.app.inject({ method, url: `${siteB.base}/${path}`, headers: siteB.site.headers, ...(payload ? { payload } : {}) });
    for (const [method, path, payload] of [
      ['GET', `bookings/${a.booking}`], ['PUT', `bookings/${a.booking}`, { surname: 'Changed' }], ['DELETE', `bookings/${a.booking}`],
      ['GET', `transactions/${a.purchase}`], ['GET', `channels/${siteA.channelId}`], ['PUT', `channels/${siteA.channelId}`, { name: 'Changed' }],
      ['DELETE', `channels/${siteA.channelId}`],
    ] as const) {
      const answer = await asB(method, path, payload);
      expect(answer.statusCode, `${method} ${path}`).toBe(404);
      expect(answer.json()).toMatchObject({ code: 'rest_post_invalid_id', data: { status: 404 } });
    }
    // (`search` was here; it was ignored then, and is refused now: docs/resources.md.)
    const probes = [...[`channels=${siteA.channelId}`, `bookings=${a.booking}`].flatMap((query) => [`bookings?${query}`, `transactions?${query}`]), 'bookings?reference=SITE-A-SECRET', 'bookings?surname=Lovelace'];
    for (const probe of probes) {
      const answer = await asB('GET', probe);
      expect(answer.statusCode, probe).toBe(200);
      expect(answer.json(), probe).toEqual([]);
      // Nor does it count them: the total is of B's own matches.
      expect(answer.headers['x-site-total'], probe).toBe('0');
    }
    // A's own path with B's credential: the site is unknown to it.
    const foreignPath = await t.app.inject({ url: `${siteA.base}/bookings/${a.booking}`, headers: siteB.site.headers });
    expect(foreignPath.json()).toMatchObject({ code: 'rest_post_invalid_id', message: expect.stringMatching(/^Invalid site: /), data: { status: 404 } });
    expect((await t.db.one<{ surname: string }>('SELECT surname FROM bookings WHERE id = $1', [a.booking])).surname).toBe('Lovelace');
  });

  it("pays, refunds, captures or charges nothing of A: A's channel, booking, linked transactions, vault token, capture token and allocation target are unknown", async () => {
    const bookingB = await createBooking(t, siteB, { total: 9_000 });
    const shareB = [{ id: bookingB, currencies: 'USD', total: 100 }];
    const captureToken = await captureTokenOfA();
    const before = await rowCounts();
    const refused = [
      [{ transaction_types: 'purchase', channels: siteA.channelId, currencies: 'USD', total: 100, token: 'tok_visa', bookings: shareB }, 400, 'channels'],
      [{ transaction_types: 'purchase', channels: siteB.channelId, currencies: 'USD', total: 100, token: 'tok_visa', bookings: [{ id: a.booking, currencies: 'USD', total: 100 }] }, 400, 'bookings'],
      [{ transaction_types: 'refund', channels: siteB.channelId, currencies: 'USD', total: 100, linked_id: a.purchase, bookings: shareB }, 404, null],
      [{ transaction_types: 'capture', channels: siteB.channelId, currencies: 'USD', total: 100, linked_id: a.authorization, bookings: shareB }, 404, null],
      [{ transaction_types: 'retained_purchase', channels: siteB.channelId, currencies: 'USD', total: 100, linked_id: a.vault, bookings: shareB }, 404, null],
      [{ transaction_types: 'retained_purchase', channels: siteB.channelId, currencies: 'USD', total: 100, token: a.vaultToken, bookings: shareB }, 400, 'token'],
      [{ transaction_types: 'purchase', channels: siteB.channelId, currencies: 'USD', total: 100, token: captureToken, bookings: shareB }, 400, 'token'],
      [{ ...purchaseBody(siteB, bookingB, 100), allocations: [{ channels: siteA.channelId, operator: 'flat', total: 10, currencies: 'USD' }] }, 400, 'allocations'],
    ] as const;
    for (const [body, status, param] of refused) {
      const answer = await post(t, siteB, body);
      expect(answer.statusCode, JSON.stringify(body)).toBe(status);
      if (param) expect(Object.keys(answer.json().data.params)).toEqual([param]);
      else expect(answer.json()).toMatchObject({ code: 'rest_post_invalid_id', message: 'Invalid linked_id.' });
    }
    expect(await rowCounts()).toEqual(before);
  });

  it("lets a platform operator's token in B charge back nothing of A: A's payment is an unknown linked_id there", async () => {
    const operator = await addUser(t.db, siteB.site.siteId, { role: 'member_admin', platformAdmin: true });
    const before = await rowCounts();
    const answer = await t.app.inject({ method: 'POST', url: `${siteB.base}/transactions`, headers: operator.headers, payload: { transaction_types: 'chargeback', linked_id: a.purchase, total: 500 } });
    expect(answer.statusCode).toBe(404);
    expect(answer.json()).toMatchObject({ code: 'rest_post_invalid_id', message: 'Invalid linked_id.' });
    expect(await rowCounts()).toEqual(before);
    expect((await t.db.one<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [a.purchase])).status).toBe('complete');
  });

  it("moves none of its own bookings onto A's channel", async () => {
    const bookingB = await createBooking(t, siteB, { total: 9_000 });
    const moved = await t.app.inject({ method: 'PUT', url: `${siteB.base}/bookings/${bookingB}`, headers: siteB.site.headers, payload: { channels: siteA.channelId } });
    expect(moved.statusCode).toBe(400);
    expect(moved.json().data.params).toEqual({ channels: 'Invalid channel ID.' });
    expect((await t.db.one<{ channel_id: number }>('SELECT channel_id FROM bookings WHERE id = $1', [bookingB])).channel_id).toBe(siteB.channelId);
  });

  it("lets a page of B pay with no card captured for A, nor capture a card into A's site or channel", async () => {
    const bookingB = await createBooking(t, siteB, { total: 5_000 });
    const { token } = await createHostedSession(t.db, { kind: 'pay', siteId: siteB.site.siteId, channelId: siteB.channelId, userId: siteB.site.userId, bookingId: bookingB, amount: 5_000, currency: 'USD', language: 'enGB' }, new Date());
    const headers = { authorization: `Bearer ${token}` };
    const paid = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: await captureTokenOfA() } });
    expect(paid.statusCode).toBe(400);
    expect(paid.json()).toMatchObject({ data: { params: { card_token: 'Unknown or expired card token.' } } });
    const card = { card_number: '4111111111111111', expiry_month: 12, expiry_year: 2031, cvv: '123' };
    const intoA = await t.app.inject({ method: 'POST', url: `${siteA.base}/cards`, headers, payload: { channels: siteA.channelId, ...card } });
    expect(intoA.json()).toMatchObject({ code: 'rest_post_invalid_id', data: { status: 404 } });
    const channelOfA = await t.app.inject({ method: 'POST', url: `${siteB.base}/cards`, headers, payload: { channels: siteA.channelId, ...card } });
    expect(channelOfA.statusCode).toBe(400);
    // Neither kind of page credential is a REST credential.
    const rest = await t.app.inject({ url: `${siteB.base}/transactions`, headers });
    expect(rest.json()).toMatchObject({ code: 'jwt_auth_invalid_token', data: { status: 401 } });
  });
});

describe('one site, two channels of the same currency', () => {
  it("lets a page pay only with a card entered for its own channel: another channel's page capture is an unknown token", async () => {
    const otherChannel = await addChannel(t, siteA);
    const card = { card_number: '4111111111111111', expiry_month: 12, expiry_year: 2031, cvv: '123' };
    const pageOf = async (channelId: number) => {
      const bookingId = await createBooking(t, siteA, { total: 3_000, channelId });
      const { token } = await createHostedSession(t.db, { kind: 'pay', siteId: siteA.site.siteId, channelId, userId: siteA.site.userId, bookingId, amount: 3_000, currency: 'USD', language: 'enGB' }, new Date());
      return { authorization: `Bearer ${token}` };
    };
    const otherPage = await pageOf(otherChannel);
    const captured = await t.app.inject({ method: 'POST', url: `${siteA.base}/cards`, headers: otherPage, payload: { channels: otherChannel, ...card } });
    expect(captured.statusCode).toBe(201);
    const page = await pageOf(siteA.channelId);
    const paid = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: page, payload: { card_token: captured.json().token } });
    expect(paid.statusCode).toBe(400);
    expect(paid.json()).toMatchObject({ data: { params: { card_token: 'Unknown or expired card token.' } } });
    // The token was not used up: the page it was captured on pays with it.
    const own = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: otherPage, payload: { card_token: captured.json().token } });
    expect(own.json()).toMatchObject({ outcome: 'complete' });
  });
});
