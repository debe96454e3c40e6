import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, pageSessionOf, type SiteFixture } from '../support/fixtures.js';
import { hashToken } from '../../src/domain/credentials.js';
import { createHostedSession } from '../../src/domain/hosted/sessions.js';
import { buildWebBundles } from '../e2e/support.js';
import { limits } from '../../src/limits.js';

// What an anonymous page (a payment link anyone may hold) can do with cards: every card it
// submits is counted on its session and, for payment request pages, on its booking; a capture
// token it got pays for one attempt only.
let t: TestContext;
let site: SiteFixture;
let channel: number;
let liveChannel: number;
const year = new Date().getUTCFullYear() + 3;

beforeAll(async () => {
  await buildWebBundles();
  t = await createTestContext();
  site = await createSite(t.db);
  const create = async () => (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Tours', currencies: 'USD' } })).json().id as number;
  channel = await create();
  liveChannel = await create();
  await t.db.query(`UPDATE channels SET account_mode = 'live' WHERE id = $1`, [liveChannel]);
});
afterAll(async () => t.close());

/** A Luhn-valid 16-digit number that is not a sandbox test card: `4929` then `serial`. */
function cardNumber(serial: number): string {
  const body = `4929${String(serial).padStart(11, '0')}`;
  let sum = 0;
  for (let index = 0; index < body.length; index++) {
    let digit = Number(body[body.length - 1 - index]);
    if (index % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return body + String((10 - (sum % 10)) % 10);
}

async function newBooking(channelId: number, total: number): Promise<{ id: number; link: string }> {
  const booking = (await t.app.inject({
    method: 'POST', url: `/${site.path}/site-json/vendor/v2/bookings`, headers: site.headers,
    payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total, currencies: 'USD', countries: 'GB', channels: channelId, payment_request_url: true },
  })).json();
  return { id: booking.id, link: new URL(booking._links.self[0].payment_request).pathname };
}

/** The session of a payment request page load, as the page's data carries it. */
async function openPage(link: string): Promise<{ session: string | null; body: string }> {
  const body = (await t.app.inject({ url: link })).body;
  return { session: pageSessionOf(body), body };
}

const capture = (session: string, channelId: number, card: { number: string; cvv?: string }) =>
  t.app.inject({
    method: 'POST', url: `/${site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${session}` },
    payload: { channels: channelId, card_number: card.number, expiry_month: '04', expiry_year: year, cvv: card.cvv ?? '123' },
  });

const pay = (session: string, cardToken: string) =>
  t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: cardToken } });

const cardCount = async () => (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards WHERE site_id = $1', [site.siteId])).count;

describe('card captures of a hosted page session', () => {
  it('are bounded per session, even when sent at once: the page stores no more cards', async () => {
    const booking = await newBooking(liveChannel, 5_000);
    const { session } = await openPage(booking.link);
    const before = await cardCount();
    const sent = limits.hostedCardCapturesPerSessionMax + 4;
    const answers = await Promise.all(Array.from({ length: sent }, (_, index) => capture(session!, liveChannel, { number: cardNumber(index + 1) })));
    expect(answers.filter((answer) => answer.statusCode === 201)).toHaveLength(limits.hostedCardCapturesPerSessionMax);
    for (const refused of answers.filter((answer) => answer.statusCode !== 201)) {
      expect(refused.statusCode).toBe(403);
      // Told apart from failed attempts (same code): the pages say no more cards, not "three failed attempts".
      expect(refused.json()).toMatchObject({ code: 'rest_attempts_exhausted', data: { status: 403, exhausted: 'captures' } });
      expect(refused.body).not.toContain('"token"');
    }
    expect(await cardCount()).toBe(before + limits.hostedCardCapturesPerSessionMax);
    // A card the capture endpoint refuses (here, a test card on a live channel) counts too.
    const next = await openPage(booking.link);
    expect((await capture(next.session!, liveChannel, { number: '4111111111111111' })).statusCode).toBe(400);
    expect((await t.db.one<{ captures: number }>('SELECT captures FROM hosted_sessions WHERE token_hash = $1', [hashToken(next.session!)])).captures).toBe(1);
  });

  it("are bounded for all the payment request pages of one booking together, which then offer no card form", async () => {
    const booking = await newBooking(channel, 5_000);
    let captured = 0;
    let last: string | null = null;
    while (captured < limits.payRequestCapturesPerBookingMax) {
      const page = await openPage(booking.link);
      expect(page.session).not.toBeNull();
      last = page.session;
      for (let index = 0; index < limits.hostedCardCapturesPerSessionMax && captured < limits.payRequestCapturesPerBookingMax; index++, captured++) {
        expect((await capture(page.session!, channel, { number: '4111111111111111' })).statusCode).toBe(201);
      }
    }
    // The last page still had room of its own; the booking's pages together have none.
    expect(captured % limits.hostedCardCapturesPerSessionMax).not.toBe(0);
    expect((await capture(last!, channel, { number: '4111111111111111' })).json()).toMatchObject({ code: 'rest_attempts_exhausted', data: { status: 403 } });
    const reloaded = await openPage(booking.link);
    expect(reloaded.session).toBeNull();
    expect(reloaded.body).toContain('This booking cannot be paid online.');
    // Another booking's link is unaffected.
    const other = await newBooking(channel, 5_000);
    expect((await capture((await openPage(other.link)).session!, channel, { number: '4111111111111111' })).statusCode).toBe(201);
  });

  it('a modal or vaulting app session has its own bound', async () => {
    const { token } = await createHostedSession(t.db, { kind: 'vault', siteId: site.siteId, channelId: channel, userId: site.userId, currency: 'USD', language: 'enGB' }, new Date());
    for (let index = 0; index < limits.hostedCardCapturesPerSessionMax; index++) expect((await capture(token, channel, { number: '4111111111111111' })).statusCode).toBe(201);
    expect((await capture(token, channel, { number: '4111111111111111' })).statusCode).toBe(403);
  });
});

// A page whose payment completed has nothing more to pay: a card it captured would only be stored,
// and its capture token minted, for nothing (a payment link forwarded after paying).
describe('card captures of a page whose payment completed', () => {
  it('are refused as the page payment API refuses a second payment (409 rest_session_completed): no card stored', async () => {
    const booking = await newBooking(channel, 1_000);
    const { session: paySession } = await openPage(booking.link);
    const { token: vaultSession } = await createHostedSession(t.db, { kind: 'vault', siteId: site.siteId, channelId: channel, userId: site.userId, currency: 'USD', language: 'enGB' }, new Date());
    for (const session of [paySession!, vaultSession]) {
      const token = (await capture(session, channel, { number: '5555555555554444' })).json().token as string;
      expect((await pay(session, token)).json()).toMatchObject({ outcome: 'complete' });
      const before = await cardCount();
      const again = await capture(session, channel, { number: '4111111111111111' });
      expect(again.statusCode).toBe(409);
      expect(again.json()).toMatchObject({ code: 'rest_session_completed', data: { status: 409 } });
      expect(again.body).not.toContain('ct_');
      expect(await cardCount()).toBe(before);
    }
  });
});

// A page whose payment awaits its 3DS challenge (pending) cannot make another: the payment step
// refuses it (409 rest_payment_in_progress), so a card captured meanwhile would be stored for nothing.
describe('card captures of a page whose payment awaits 3DS', () => {
  it('are refused up front as the payment step refuses them (409 rest_payment_in_progress): no card stored, none counted', async () => {
    const booking = await newBooking(channel, 1_000);
    const { session } = await openPage(booking.link);
    const token = (await capture(session!, channel, { number: '4200000000000042' })).json().token as string;
    expect((await pay(session!, token)).json()).toMatchObject({ outcome: 'challenge' });
    const before = await cardCount();
    const again = await capture(session!, channel, { number: '4111111111111111' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'rest_payment_in_progress', data: { status: 409 } });
    expect(again.body).not.toContain('ct_');
    expect(await cardCount()).toBe(before);
    expect((await t.db.one<{ captures: number }>('SELECT captures FROM hosted_sessions WHERE token_hash = $1', [hashToken(session!)])).captures).toBe(1);
  });
});

describe('a capture token on a hosted page', () => {
  it('pays for one attempt: after a CVV decline the page must capture the card again, and the refusal costs no attempt', async () => {
    // A total ending in 53 makes the sandbox decline the CVV (800.100.153).
    const booking = await newBooking(channel, 1_153);
    const { session } = await openPage(booking.link);
    const token = (await capture(session!, channel, { number: '5555555555554444', cvv: '000' })).json().token as string;
    expect((await pay(session!, token)).json()).toMatchObject({ outcome: 'failed', attempts_left: 2, decline: { code: '800.100.153' } });
    const reused = await pay(session!, token);
    expect(reused.statusCode).toBe(400);
    expect(reused.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { card_token: 'Unknown or expired card token.' } } });
    const read = (await t.app.inject({ url: `/${site.path}/site-json/vendor/v2/bookings/${booking.id}`, headers: site.headers })).json();
    expect(read.transaction_ids).toHaveLength(1);
    // Captured again, as the page does on every submit: the next attempt is the second, not the third.
    const again = (await capture(session!, channel, { number: '5555555555554444', cvv: '000' })).json().token as string;
    expect((await pay(session!, again)).json()).toMatchObject({ outcome: 'failed', attempts_left: 1 });
  });
});

describe("a capture token of another channel's page", () => {
  it('does not pay on this page: refused as an unknown card token, no attempt used, nothing charged', async () => {
    // Same site, currency and account type: only the channel differs.
    const otherChannel = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Cruises', currencies: 'USD' } })).json().id as number;
    const { token: otherPage } = await createHostedSession(t.db, { kind: 'vault', siteId: site.siteId, channelId: otherChannel, userId: site.userId, currency: 'USD', language: 'enGB' }, new Date());
    const captured = await capture(otherPage, otherChannel, { number: '5555555555554444' });
    expect(captured.statusCode).toBe(201);
    const booking = await newBooking(channel, 1_000);
    const { session } = await openPage(booking.link);
    const paid = await pay(session!, captured.json().token as string);
    expect(paid.statusCode).toBe(400);
    expect(paid.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { card_token: 'Unknown or expired card token.' } } });
    const read = (await t.app.inject({ url: `/${site.path}/site-json/vendor/v2/bookings/${booking.id}`, headers: site.headers })).json();
    expect(read.transaction_ids).toHaveLength(0);
    expect((await t.db.one<{ attempts: number }>('SELECT attempts FROM hosted_sessions WHERE token_hash = $1', [hashToken(session!)])).attempts).toBe(0);
    // The page's own card still pays, with every attempt left.
    const own = (await capture(session!, channel, { number: '5555555555554444' })).json().token as string;
    expect((await pay(session!, own)).json()).toMatchObject({ outcome: 'complete' });
  });
});
