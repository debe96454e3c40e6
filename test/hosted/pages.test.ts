import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, pageSessionOf, type SiteFixture } from '../support/fixtures.js';
import { createHostedSession } from '../../src/domain/hosted/sessions.js';
import { hashToken } from '../../src/domain/credentials.js';
import { signAuthString } from '../../src/domain/hosted/auth-string.js';
import { buildWebBundles } from '../e2e/support.js';
import { limits } from '../../src/limits.js';
import { formatMoney } from '../../src/domain/money.js';

let t: TestContext;
let site: SiteFixture;
let channel: { id: number; channel_secret: string };

beforeAll(async () => {
  await buildWebBundles();
  t = await createTestContext();
  site = await createSite(t.db);
  channel = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Tours', currencies: 'USD' } })).json();
});
afterAll(async () => t.close());

/** A new USD booking of `total` and a page session paying it (a modal's unless told). */
async function bookingSession(total: number, page: { kind?: 'modal' | 'pay'; language?: string } = {}): Promise<{ token: string; bookingId: number }> {
  const booking = (await t.app.inject({
    method: 'POST', url: `/${site.path}/site-json/vendor/v2/bookings`, headers: site.headers,
    payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total, currencies: 'USD', countries: 'GB', channels: channel.id },
  })).json() as { id: number };
  const session = { kind: page.kind ?? 'modal', siteId: site.siteId, channelId: channel.id, userId: site.userId, bookingId: booking.id, amount: total, currency: 'USD', language: page.language ?? 'enGB' };
  const { token } = await createHostedSession(t.db, session, new Date());
  return { token, bookingId: booking.id };
}

describe('hosted page APIs', () => {
  it('blocks a fourth attempt on the server, even when requests race', async () => {
    const { token, bookingId } = await bookingSession(5_000);
    const headers = { authorization: `Bearer ${token}` };
    const first = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa_declined' } });
    expect(first.json()).toMatchObject({ outcome: 'failed', attempts_left: 2, transaction: { status: 'failed' } });
    // Four more at once: the server lets at most two more reach the bank (a payment refused
    // before the bank, e.g. while another holds the booking's room, gives its attempt back).
    const raced = await Promise.all(Array.from({ length: 4 }, () => t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa_declined' } })));
    expect(raced.filter((answer) => answer.statusCode === 201).length).toBeLessThanOrEqual(2);
    // When two raced requests reach the bank, the later one (fewer attempts left) is the latest state.
    let answer = raced.filter((candidate) => candidate.statusCode === 201).sort((a, b) => a.json().attempts_left - b.json().attempts_left)[0]!;
    for (let index = 0; index < 3; index++) {
      const next = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa_declined' } });
      if (next.statusCode !== 201) break;
      answer = next;
    }
    expect(answer.json()).toMatchObject({ outcome: 'failed', attempts_left: 0, rejected: { message: expect.stringContaining('Three failed attempts') } });
    const attempts = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM transactions t JOIN bookings b ON t.id = ANY(b.transaction_ids) WHERE b.id = $1', [bookingId]);
    expect(attempts.count).toBe(3);
    const refused = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa_declined' } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'rest_attempts_exhausted', data: { status: 403 } });
    expect(refused.json().message).toContain('Three failed attempts');
    const later = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa' } });
    expect(later.statusCode).toBe(403);
  });

  it('pays in another currency only for the converted total the page showed, and never in modal sessions', async () => {
    const { token, bookingId } = await bookingSession(10_000, { kind: 'pay' });
    const headers = { authorization: `Bearer ${token}` };
    const offered = (await t.app.inject({ url: '/hosted/payments/currencies', headers })).json().currencies as { currency: string; amount: number; rate: string | null }[];
    expect(offered[0]).toMatchObject({ currency: 'USD', amount: 10_000, rate: null });
    expect(offered.find((option) => option.currency === 'EUR')).toMatchObject({ amount: 9_200, rate: '0.92' });
    const missing = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa', currencies: 'EUR' } });
    expect(missing.json()).toMatchObject({ code: 'rest_missing_callback_param', data: { status: 400, params: ['total'] } });
    const wrong = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa', currencies: 'EUR', total: 9_300 } });
    expect(wrong.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { total: expect.stringContaining('9200 EUR') } } });
    // Refused before the bank: no attempt used, nothing recorded on the booking.
    const paid = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa', currencies: 'EUR', total: 9_200 } });
    expect(paid.json()).toMatchObject({ outcome: 'complete', transaction: { currencies: 'EUR', total: 9_200, forex_rate: '0.92' } });
    const read = (await t.app.inject({ url: `/${site.path}/site-json/vendor/v2/bookings/${bookingId}`, headers: site.headers })).json();
    expect(read).toMatchObject({ status: 'paid', transaction_ids: [paid.json().transaction.id] });
    const modal = await bookingSession(4_000);
    const modalHeaders = { authorization: `Bearer ${modal.token}` };
    expect((await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: modalHeaders, payload: { card_token: 'tok_visa', currencies: 'EUR', total: 3_680 } })).json()).toMatchObject({ data: { params: { currencies: expect.any(String) } } });
    expect((await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: modalHeaders, payload: { card_token: 'tok_visa', total: 1 } })).json()).toMatchObject({ data: { params: { total: expect.any(String) } } });
    expect((await t.app.inject({ url: '/hosted/payments/currencies', headers: modalHeaders })).statusCode).toBe(404);
  });

  it('answers a decline with its reason in the page language, the generic one for an unknown code', async () => {
    const { token } = await bookingSession(2_000, { kind: 'pay', language: 'frFR' });
    const headers = { authorization: `Bearer ${token}` };
    const declined = (await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa_declined' } })).json();
    expect(declined.decline).toEqual({ code: '800.100.100', message: 'declined (transaction declined for unknown reason)', reason: 'refusée (transaction refusée pour une raison inconnue)' });
    // A code the catalogue does not know (a real gateway's): the generic reason, code kept.
    await t.db.query('UPDATE transactions SET decline_code = $1 WHERE id = $2', ['999.123.456', declined.transaction.id]);
    const current = (await t.app.inject({ url: '/hosted/payments/current', headers })).json();
    expect(current.decline).toMatchObject({ code: '999.123.456', reason: 'refusée par le prestataire de paiement' });
  });

  it('brings the payer back from the 3DS challenge to a return page in the page language', async () => {
    const { token } = await bookingSession(2_100, { kind: 'pay', language: 'frFR' });
    const challenged = (await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${token}` }, payload: { card_token: 'tok_visa_3ds_challenge' } })).json();
    expect(challenged.outcome).toBe('challenge');
    // The bank's page → the payments core's return route → our return page, inside the page's frame.
    const answered = await t.app.inject({ method: 'POST', url: new URL(challenged.challenge_url).pathname, payload: 'result=authenticate', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const settled = await t.app.inject({ url: new URL(answered.headers.location as string).pathname });
    const back = new URL(settled.headers.location as string);
    expect(back.pathname).toBe('/hosted/3ds-return');
    const returnPage = await t.app.inject({ url: back.pathname + back.search });
    expect(returnPage.body).toContain('<html lang="fr-FR">');
    expect(returnPage.body).toContain('Traitement en cours, veuillez patienter…');
    // Without a language (a link from before, a hand-typed URL): English, as every page's default.
    expect((await t.app.inject({ url: '/hosted/3ds-return' })).body).toContain('<html lang="en-GB">');
  });

  it("shows the bank's 3DS challenge (the sandbox's) in the page language, as every other page of the payment", async () => {
    const { token } = await bookingSession(2_150, { kind: 'pay', language: 'frFR' });
    const challenged = (await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${token}` }, payload: { card_token: 'tok_visa_3ds_challenge' } })).json();
    const path = new URL(challenged.challenge_url).pathname;
    const challenge = (await t.app.inject({ url: path })).body;
    expect(challenge).toContain('<html lang="fr-FR">');
    expect(challenge).toContain('Confirmez ce paiement');
    expect(challenge).toMatch(/<button type="submit" name="result" value="authenticate">Authentifier<\/button>/);
    expect(challenge).toMatch(/<button type="submit" name="result" value="fail">Échouer<\/button>/);
    // The amount as the French page showed it, the card in French.
    expect(challenge).toContain(formatMoney(2_150, 'USD', 'fr-FR'));
    expect(challenge).toContain('Visa se terminant par 0042');
    expect(challenge).not.toContain('Authenticate');
    await t.app.inject({ method: 'POST', url: path, payload: 'result=fail', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect((await t.app.inject({ url: path })).body).toContain('Cette authentification a déjà été effectuée.');
  });

  it("reads back only the page's own payments, never another payment of its booking (its payer, card and vault token)", async () => {
    const { token, bookingId } = await bookingSession(6_000, { kind: 'pay' });
    const headers = { authorization: `Bearer ${token}` };
    const other = await t.app.inject({
      method: 'POST', url: `/${site.path}/site-json/vendor/v2/transactions`, headers: site.headers,
      payload: { transaction_types: 'purchase', channels: channel.id, currencies: 'USD', total: 1_000, token: 'tok_mastercard_declined', payee_email: 'other.payer@example.com', bookings: [{ id: bookingId, currencies: 'USD', total: 1_000 }] },
    });
    expect(other.json()).toMatchObject({ status: 'failed', last_four_digits: '5100' });
    const none = await t.app.inject({ url: '/hosted/payments/current', headers });
    expect(none.statusCode).toBe(404);
    expect(none.body).not.toContain('other.payer@example.com');
    expect(none.body).not.toContain('5100');
    const declined = (await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa_declined' } })).json();
    expect((await t.app.inject({ url: '/hosted/payments/current', headers })).json()).toMatchObject({ outcome: 'failed', transaction: { id: declined.transaction.id } });
  });

  it("reads back a named attempt's outcome only once that attempt is recorded, never an earlier attempt's", async () => {
    const { token } = await bookingSession(6_100, { kind: 'pay' });
    const headers = { authorization: `Bearer ${token}` };
    const current = (attempt: string) => t.app.inject({ url: `/hosted/payments/current?attempt_id=${attempt}`, headers });
    const [first, second] = ['a'.repeat(32), 'b'.repeat(32)];
    const declined = (await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa_declined', attempt_id: first } })).json();
    expect((await current(first)).json()).toMatchObject({ outcome: 'failed', transaction: { id: declined.transaction.id } });
    // The second attempt, not recorded yet: its outcome is not known, the first one's decline is not it.
    const pending = await current(second);
    expect(pending.statusCode).toBe(404);
    expect(pending.json()).toMatchObject({ code: 'rest_post_invalid_id', data: { status: 404 } });
    const paid = (await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa', attempt_id: second } })).json();
    expect((await current(second)).json()).toMatchObject({ outcome: 'complete', transaction: { id: paid.transaction.id } });
    expect((await current(first)).statusCode).toBe(404);
    // A name that is not one a page makes is refused.
    expect((await current('short')).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa', attempt_id: 'x'.repeat(limits.hostedAttemptIdLengthMax + 1) } })).statusCode).toBe(400);
  });

  it('charges only a card entered on the page: a vaulted card named by its vault token is an unknown token', async () => {
    const vault = (await t.app.inject({
      method: 'POST', url: `/${site.path}/site-json/vendor/v2/transactions`, headers: site.headers,
      payload: { transaction_types: 'vault', channels: channel.id, currencies: 'USD', total: 0, token: 'tok_visa' },
    })).json() as { id: number; status: string; token: string };
    expect(vault).toMatchObject({ status: 'complete', token: expect.any(String) });
    const vaultPage = await createHostedSession(t.db, { kind: 'vault', siteId: site.siteId, channelId: channel.id, userId: site.userId, bookingId: null, amount: null, currency: 'USD', language: 'enGB' }, new Date());
    for (const token of [(await bookingSession(4_000, { kind: 'pay' })).token, (await bookingSession(4_000)).token, vaultPage.token]) {
      const paid = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${token}` }, payload: { card_token: vault.token } });
      expect(paid.statusCode).toBe(400);
      // Named as the page sent it (`card_token`), not as the payments core calls it (`token`).
      expect(paid.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { card_token: 'Unknown or expired card token.' } } });
      expect(paid.json().data.params).not.toHaveProperty('token');
    }
    // Longer than any card token (limits.captureTokenLengthMax): told so, as the OpenAPI document says.
    const long = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${vaultPage.token}` }, payload: { card_token: `ct_${'a'.repeat(198)}` } });
    expect(long.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { card_token: 'must NOT have more than 200 characters' } } });
    const after = await t.db.one<{ count: number }>(`SELECT count(*)::int AS count FROM transactions WHERE site_id = $1 AND id > $2`, [site.siteId, vault.id]);
    expect(after.count).toBe(0);
  });

  it('offers the payment request page only what can be paid: never "fully paid" for money merely held, nor a form a closed channel would refuse', async () => {
    const shown = async (channelId: number, total: number, pay?: { type: 'authorize' | 'purchase'; total: number }) => {
      const booking = (await t.app.inject({
        method: 'POST', url: `/${site.path}/site-json/vendor/v2/bookings`, headers: site.headers,
        payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total, currencies: 'USD', countries: 'GB', channels: channelId, payment_request_url: true },
      })).json();
      if (pay) {
        const paid = await t.app.inject({
          method: 'POST', url: `/${site.path}/site-json/vendor/v2/transactions`, headers: site.headers,
          payload: { transaction_types: pay.type, channels: channelId, currencies: 'USD', total: pay.total, token: 'tok_visa', bookings: [{ id: booking.id, currencies: 'USD', total: pay.total }] },
        });
        expect(paid.json().status).toBe('complete');
      }
      const page = await t.app.inject({ url: new URL(booking._links.self[0].payment_request).pathname });
      expect(page.statusCode).toBe(200);
      return { body: page.body, bookingId: booking.id as number };
    };
    expect((await shown(channel.id, 4_000, { type: 'purchase', total: 4_000 })).body).toContain('This booking is fully paid. Nothing is due.');
    const held = await shown(channel.id, 4_000, { type: 'authorize', total: 4_000 });
    expect(held.body).toContain('Nothing is due on this booking: its total is already paid or held on a card.');
    expect(held.body).not.toContain('id="card-form"');
    const partly = await shown(channel.id, 4_000, { type: 'authorize', total: 1_500 });
    expect(partly.body).toMatch(/id="amount-due">US\$25\.00</);
    const closing = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Closing', currencies: 'USD', receipt_label: 'Sunny Tours' } })).json();
    const unpaidOnClosed = (await t.app.inject({
      method: 'POST', url: `/${site.path}/site-json/vendor/v2/bookings`, headers: site.headers,
      payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 3_000, currencies: 'USD', countries: 'GB', channels: closing.id, payment_request_url: true },
    })).json();
    await t.db.query(`UPDATE channels SET account_mode = 'closed' WHERE id = $1`, [closing.id]);
    const closed = await t.app.inject({ url: new URL(unpaidOnClosed._links.self[0].payment_request).pathname });
    expect(closed.body).toContain('This booking cannot be paid online. Please contact Sunny Tours.');
    expect(closed.body).not.toContain('fully paid');
  });

  // The operator's channel_status closed or locked refuses every payment (docs/payments.md "Closed
  // channels"), yet the page still showed its card form, which could only end in a refusal.
  it('offers no form on the payment request page of a channel the operator locked or closed by status', async () => {
    for (const status of ['locked', 'closed']) {
      const held = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: `Held ${status}`, currencies: 'USD', receipt_label: 'Sunny Tours' } })).json();
      const booking = (await t.app.inject({
        method: 'POST', url: `/${site.path}/site-json/vendor/v2/bookings`, headers: site.headers,
        payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 3_000, currencies: 'USD', countries: 'GB', channels: held.id, payment_request_url: true },
      })).json();
      await t.db.query('UPDATE channels SET channel_status = $2 WHERE id = $1', [held.id, status]);
      const page = await t.app.inject({ url: new URL(booking._links.self[0].payment_request).pathname });
      expect(page.body, status).toContain('This booking cannot be paid online. Please contact Sunny Tours.');
      expect(page.body, status).not.toContain('id="card-form"');
    }
  });

  it('bounds the failed card attempts of all the payment request pages of one booking (each load opens a new page)', async () => {
    const booking = (await t.app.inject({
      method: 'POST', url: `/${site.path}/site-json/vendor/v2/bookings`, headers: site.headers,
      payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 3_000, currencies: 'USD', countries: 'GB', channels: channel.id, payment_request_url: true },
    })).json();
    const page = () => t.app.inject({ url: new URL(booking._links.self[0].payment_request).pathname });
    const sessionOf = (body: string) => pageSessionOf(body)!;
    const decline = (session: string) => t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: 'tok_visa_declined' } });
    let declined = 0;
    while (declined < limits.payRequestFailedAttemptsPerBookingMax) {
      const session = sessionOf((await page()).body);
      for (let attempt = 0; attempt < limits.hostedFailedAttemptsMax && declined < limits.payRequestFailedAttemptsPerBookingMax; attempt++, declined++) {
        expect((await decline(session)).json().outcome).toBe('failed');
      }
    }
    const reloaded = await page();
    expect(reloaded.body).toContain('This booking cannot be paid online.');
    expect(reloaded.body).not.toContain('id="card-form"');
    const { token } = await createHostedSession(t.db, { kind: 'pay', siteId: site.siteId, channelId: channel.id, userId: site.userId, bookingId: booking.id, amount: 3_000, currency: 'USD', language: 'enGB' }, new Date());
    expect((await decline(token)).json()).toMatchObject({ code: 'rest_attempts_exhausted', data: { status: 403 } });
  });

  it('refuses unknown session tokens with the token_error shape', async () => {
    const answer = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: 'Bearer hps_' + 'a'.repeat(43) }, payload: { card_token: 'tok_visa' } });
    expect(answer.statusCode).toBe(403);
    expect(answer.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
  });

  it('refuses a page session past its lifetime: it captures no card and pays nothing', async () => {
    const { token } = await bookingSession(1_000);
    await t.db.query("UPDATE hosted_sessions SET expires_at = now() - interval '1 second' WHERE token_hash = $1", [hashToken(token)]);
    const headers = { authorization: `Bearer ${token}` };
    const card = { card_number: '4111111111111111', expiry_month: '12', expiry_year: 2030, cvv: '123' };
    const rows = async () => (await t.db.one<{ cards: number; transactions: number }>('SELECT (SELECT count(*)::int FROM cards WHERE site_id = $1) AS cards, (SELECT count(*)::int FROM transactions WHERE site_id = $1) AS transactions', [site.siteId]));
    const before = await rows();
    const captured = await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/cards`, headers, payload: { channels: channel.id, ...card } });
    expect(captured.statusCode).toBe(403);
    expect(captured.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    const paid = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: 'tok_visa' } });
    expect(paid.statusCode).toBe(403);
    expect(paid.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    expect(await rows()).toEqual(before);
  });

  it('lets a page session capture cards only for its own channel and site', async () => {
    const { token } = await bookingSession(1_000);
    const card = { card_number: '4111111111111111', expiry_month: '12', expiry_year: 2030, cvv: '123' };
    const own = await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${token}` }, payload: { channels: channel.id, ...card } });
    expect(own.statusCode).toBe(201);
    const otherChannel = await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${token}` }, payload: { channels: channel.id + 1000, ...card } });
    expect(otherChannel.statusCode).toBe(400);
    const other = await createSite(t.db);
    const otherSite = await t.app.inject({ method: 'POST', url: `/${other.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${token}` }, payload: { channels: channel.id, ...card } });
    expect(otherSite.statusCode).toBe(404);
  });

  it('opens a modal session only with a valid auth string, and never for a channel of another site', async () => {
    const total = 2_000;
    const body = (auth: string, path = site.path) => ({ path, channels: channel.id, currencies: 'USD', total, auth, booking: { booking_id: 0, firstname: 'A', surname: 'B', email: 'a@example.com', date: '2031-01-01', countries: 'GB' }, origin: 'https://shop.example' });
    const good = signAuthString({ channels: channel.id, currencies: 'USD', total }, channel.channel_secret, new Date());
    const opened = await t.app.inject({ method: 'POST', url: '/hosted/modal/sessions', payload: body(good) });
    expect(opened.statusCode).toBe(201);
    expect(opened.json()).toMatchObject({ booking_event: 'booking_logged', booking: { status: 'draft', total }, attempts_left: 3 });
    const other = await createSite(t.db);
    const foreign = await t.app.inject({ method: 'POST', url: '/hosted/modal/sessions', payload: body(good, other.path) });
    expect(foreign.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
  });

  it('sets page CSPs: no inline script, frame-ancestors per page', async () => {
    const frame = await t.app.inject({ url: '/modal/1.0.0/frame?origin=https%3A%2F%2Fshop.example' });
    expect(frame.headers['content-security-policy']).toContain('frame-ancestors https://shop.example');
    expect(frame.headers['content-security-policy']).toContain("script-src 'self'");
    expect(frame.body).not.toMatch(/<script(?![^>]*(src=|type="application\/json"))/);
    const badOrigin = await t.app.inject({ url: '/modal/1.0.0/frame?origin=javascript:alert(1)' });
    expect(badOrigin.statusCode).toBe(400);
    expect(badOrigin.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('accepts as origin only a bare origin: a path, or a second source after it, is a 400 framed by nobody', async () => {
    for (const origin of ['https://shop.example/ https://evil.example', 'https://shop.example/checkout']) {
      const frame = await t.app.inject({ url: `/modal/1.0.0/frame?origin=${encodeURIComponent(origin)}` });
      expect(frame.statusCode, origin).toBe(400);
      expect(frame.headers['content-security-policy'], origin).toContain("frame-ancestors 'none'");
      expect(frame.headers['content-security-policy'], origin).not.toContain('evil.example');
    }
  });

  it('tells browsers that ignore frame-ancestors not to frame the pages no one may frame (X-Frame-Options), and not the modal frame', async () => {
    const refused = await t.app.inject({ url: '/modal/1.0.0/frame?origin=javascript:alert(1)' });
    expect(refused.headers['x-frame-options']).toBe('DENY');
    const payPage = await t.app.inject({ url: '/pay/no-such-link' });
    expect(payPage.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(payPage.headers['x-frame-options']).toBe('DENY');
    const frame = await t.app.inject({ url: '/modal/1.0.0/frame?origin=https%3A%2F%2Fshop.example' });
    expect(frame.statusCode).toBe(200);
    expect(frame.headers['x-frame-options']).toBeUndefined();
  });

  it("gives the modal frame's script its locale as a BCP 47 tag (de-DE, as <html lang> and as every other page), which Intl formats with: not the language code deDE, which Intl refuses", async () => {
    const frame = (await t.app.inject({ url: '/modal/1.0.0/frame?origin=https%3A%2F%2Fshop.example&language=de-AT' })).body;
    const data = JSON.parse(/<script type="application\/json" id="page-data">([\s\S]*?)<\/script>/.exec(frame)![1]!) as { locale: string; language: string };
    expect(frame).toContain('<html lang="de-DE"');
    expect(data).toMatchObject({ locale: 'de-DE', language: 'deDE' });
    expect(new Intl.ListFormat(data.locale, { type: 'unit' }).format(['E-Mail', 'Reisedaten'])).toBe('E-Mail, Reisedaten');
  });
});
