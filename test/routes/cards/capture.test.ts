import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../support/context.js';
import { createSite, type SiteFixture } from '../../support/fixtures.js';
import { createChannel, futureYear } from '../../domain/vault/support.js';
import { signJwt } from '../../../src/domain/credentials.js';
import { resolvePaymentCard } from '../../../src/domain/vault/index.js';
import { buildApp } from '../../../src/app.js';
import { Writable } from 'node:stream';

let t: TestContext;
let site: SiteFixture;
let channel: number;
let vaultJwt: string;
beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db);
  channel = await createChannel(t.db, site.siteId, { currency: 'EUR' });
  vaultJwt = await signJwt(t.config.secrets.jwtSecret, { userId: site.userId, kind: 'cardvaultuser', siteId: site.siteId });
});
afterAll(async () => t.close());

const body = (overrides: Record<string, unknown> = {}) => ({
  channels: channel, card_number: '4111 1111 1111 1111', expiry_month: '04', expiry_year: futureYear, cvv: '123', name: 'Ada Lovelace', email: 'ada@example.com', country: 'GB', ...overrides,
});
const post = (payload: unknown, authorization: string | null = `Bearer ${vaultJwt}`, path = site.path) =>
  t.app.inject({ method: 'POST', url: `/${path}/site-json/vendor/v2/cards`, headers: authorization ? { authorization } : {}, payload: payload as object });

describe('POST /{path}/site-json/vendor/v2/cards', () => {
  it('captures a card with a cardvaultuser token: a capture token and BIN/last four, never the number or CVV', async () => {
    const reply = await post(body());
    expect(reply.statusCode).toBe(201);
    const json = reply.json();
    expect(json).toEqual({
      token: expect.stringMatching(/^ct_/),
      expires_at: expect.any(String),
      card: { bin: '411111', last_four: '1111', card_type: 'visa', expiry_month: '04', expiry_year: futureYear, issuer_countries: 'US' },
    });
    expect(reply.body).not.toContain('4111111111111111');
    expect(reply.headers['cache-control']).toBe('no-store');
    const resolved = await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: json.token });
    expect(resolved).toMatchObject({ cvv: '123', card: { channelId: channel, currency: 'EUR', holder: { name: 'Ada Lovelace', email: 'ada@example.com', country: 'GB' } } });
  });

  it('accepts two-digit years and integer months; 4-digit CVV for Amex', async () => {
    const reply = await post(body({ card_number: '378282246310005', expiry_month: 11, expiry_year: futureYear % 100, cvv: '1234' }));
    expect(reply.statusCode).toBe(201);
    expect(reply.json().card).toMatchObject({ card_type: 'amex', last_four: '0005', expiry_month: '11', expiry_year: futureYear });
  });

  it('refuses API tokens and user JWTs with 403', async () => {
    const api = await post(body(), site.headers.authorization);
    expect(api.statusCode).toBe(403);
    expect(api.json().code).toBe('rest_forbidden');
    const userJwt = await signJwt(t.config.secrets.jwtSecret, { userId: site.userId, kind: 'user' });
    expect((await post(body(), `Bearer ${userJwt}`)).statusCode).toBe(403);
  });

  it('refuses a vaulting-app token of a user who is now read-only (403), storing nothing', async () => {
    const member = await createSite(t.db);
    const memberChannel = await createChannel(t.db, member.siteId, { currency: 'EUR' });
    const jwt = await signJwt(t.config.secrets.jwtSecret, { userId: member.userId, kind: 'cardvaultuser', siteId: member.siteId });
    await t.db.query('UPDATE memberships SET read_only = true WHERE site_id = $1 AND user_id = $2', [member.siteId, member.userId]);
    const reply = await post(body({ channels: memberChannel }), `Bearer ${jwt}`, member.path);
    expect(reply.statusCode).toBe(403);
    expect(reply.json()).toMatchObject({ code: 'rest_forbidden', data: { status: 403 } });
    expect((await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards WHERE site_id = $1', [member.siteId])).count).toBe(0);
  });

  it('refuses missing, expired and forged tokens with 401', async () => {
    expect((await post(body(), null)).json()).toMatchObject({ code: 'rest_not_logged_in', data: { status: 401 } });
    const expired = await signJwt(t.config.secrets.jwtSecret, { userId: site.userId, kind: 'cardvaultuser', siteId: site.siteId }, new Date(Date.now() - 16 * 60_000));
    expect((await post(body(), `Bearer ${expired}`)).json()).toMatchObject({ code: 'jwt_auth_invalid_token', data: { status: 401 } });
    const forged = await signJwt(new Uint8Array(32), { userId: site.userId, kind: 'cardvaultuser', siteId: site.siteId });
    expect((await post(body(), `Bearer ${forged}`)).statusCode).toBe(401);
  });

  it("refuses a token of another site, and another site's channel, with 404", async () => {
    const other = await createSite(t.db);
    expect((await post(body(), `Bearer ${vaultJwt}`, other.path)).json()).toMatchObject({ code: 'rest_post_invalid_id', data: { status: 404 } });
    const otherChannel = await createChannel(t.db, other.siteId);
    expect((await post(body({ channels: otherChannel }))).json()).toMatchObject({ code: 'rest_post_invalid_id', data: { status: 404 } });
  });

  it('refuses a channel id beyond the integer range with 400, not a database error', async () => {
    for (const channels of [1e20, 2 ** 53, Number.MAX_SAFE_INTEGER + 2]) {
      const reply = await post(body({ channels }));
      expect(reply.statusCode).toBe(400);
      expect(reply.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { channels: expect.any(String) } } });
    }
  });

  it('validates the card and the body, storing nothing', async () => {
    const count = async () => (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards')).count;
    const before = await count();
    const bad = await post(body({ card_number: '4111111111111112', cvv: '12' }));
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { cvv: expect.any(String) } } });
    expect(bad.body).not.toContain('4111111111111112');
    const luhn = await post(body({ card_number: '4111111111111112' }));
    expect(luhn.json().data.params).toEqual({ card_number: 'The card number is not valid.' });
    expect((await post(body({ expiry_month: '01', expiry_year: 2020 }))).json().data.params).toHaveProperty('expiry_year');
    expect((await post(body({ card_number: '5555555555554444', cvv: '1234' }))).json().data.params).toHaveProperty('cvv');
    expect((await post(body({ card_number: '4242424242424242' }))).json().data.params.card_number).toMatch(/Test channels/);
    expect((await post(body({ pan: '4111' }))).json().data.params).toEqual({ pan: 'unknown field pan' });
    // A month sent as text is told what a month is, not that it should have been an integer.
    expect((await post(body({ expiry_month: '00' }))).json().data.params).toEqual({ expiry_month: 'must be a month from 1 to 12' });
    expect((await post(body({ expiry_month: 13 }))).json().data.params).toEqual({ expiry_month: 'must be <= 12' });
    expect((await post(body({ expiry_month: true }))).json().data.params).toEqual({ expiry_month: 'must be integer or string' });
    expect((await post(body({ country: 'XX' }))).json().data.params).toEqual({ country: 'must be a country code of the ISO 3166-1 alpha-2 list, in capitals, such as GB' });
    const missing = await post({ channels: channel });
    expect(missing.json()).toMatchObject({ code: 'rest_missing_callback_param', data: { params: expect.arrayContaining(['card_number', 'cvv']) } });
    expect(await count()).toBe(before);
  });

  it('never writes the card number or CVV to the logs, even at trace level', async () => {
    let logged = '';
    const stream = new Writable({ write(chunk, _encoding, done) { logged += String(chunk); done(); } });
    const app = await buildApp({ context: t.context, logger: { level: 'trace', stream } });
    try {
      const ok = await app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${vaultJwt}` }, payload: body({ cvv: '918' }) });
      expect(ok.statusCode).toBe(201);
      const bad = await app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${vaultJwt}` }, payload: body({ card_number: '4111111111111112', cvv: '918' }) });
      expect(bad.statusCode).toBe(400);
    } finally {
      await app.close();
    }
    expect(logged).toContain('/site-json/vendor/v2/cards');
    expect(logged).not.toContain('4111111111111111');
    expect(logged).not.toContain('4111111111111112');
    expect(logged).not.toContain('"918"');
    expect(logged).not.toContain(vaultJwt);
  });
});
