import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestContext, testEnv, type TestContext } from '../support/context.js';
import { createHostedSession } from '../../src/domain/hosted/sessions.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { RateWindows } from '../../src/http/rate-limit.js';

let t: TestContext;
let site: SiteFixture;
beforeAll(async () => {
  t = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '5', LOGIN_RATE_LIMIT_PER_MINUTE: '3' } });
  site = await createSite(t.db);
});
afterAll(async () => t.close());

describe('rate limiting', () => {
  it('answers 429 rest_too_many_requests with Retry-After past the per-credential limit', async () => {
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push(await t.app.inject({ url: `/${site.path}/api-tokens`, headers: site.headers }));
    expect(statuses.slice(0, 5).every((response) => response.statusCode === 200)).toBe(true);
    const limited = statuses[5]!;
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ code: 'rest_too_many_requests', message: expect.stringContaining('Too many requests'), data: { status: 429 } });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('tells every answer how much of the window is left, and a refusal when it reopens', async () => {
    const member = await createSite(t.db);
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await t.app.inject({ url: `/${member.path}/api-tokens`, headers: member.headers }));
    expect(answers.map((answer) => answer.headers['x-ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0', '0']);
    expect(answers[0]!.headers['x-ratelimit-limit']).toBe('5');
    const refused = answers[5]!;
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['x-ratelimit-reset']).toBe(refused.headers['retry-after']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
  });

  it('refuses a request over the limit before authenticating it', async () => {
    // A genuine token used on a site it does not belong to: 404 while allowed, 429 once over.
    const member = await createSite(t.db);
    const stranger = await createSite(t.db);
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await t.app.inject({ url: `/${stranger.path}/api-tokens`, headers: member.headers })).statusCode);
    expect(statuses).toEqual([404, 404, 404, 404, 404, 429]);
  });

  it('counts each credential separately', async () => {
    const other = await createSite(t.db);
    expect((await t.app.inject({ url: `/${other.path}/api-tokens`, headers: other.headers })).statusCode).toBe(200);
  });

  it('applies the stricter login limit per client address to the token endpoints', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) {
      answers.push(await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token`, payload: { username: site.username, password: site.password }, remoteAddress: '10.0.0.9' }));
    }
    expect(answers.slice(0, 3).map((answer) => answer.statusCode)).toEqual([200, 200, 200]);
    expect(answers[3]!.statusCode).toBe(429);
    expect(answers[3]!.json().code).toBe('rest_too_many_requests');
    const elsewhere = await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token`, payload: { username: site.username, password: site.password }, remoteAddress: '10.0.0.10' });
    expect(elsewhere.statusCode).toBe(200);
  });

  it('counts unverified bearer tokens against the client address, so random tokens do not escape the limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const forged = `tfat_${randomBytes(32).toString('base64url')}`;
      const response = await t.app.inject({ url: `/${site.path}/api-tokens`, headers: { authorization: `Bearer ${forged}` }, remoteAddress: '10.0.0.77' });
      statuses.push(response.statusCode);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    // A verified credential keeps its own allowance, whatever its address did.
    const other = await createSite(t.db);
    expect((await t.app.inject({ url: `/${other.path}/api-tokens`, headers: other.headers, remoteAddress: '10.0.0.77' })).statusCode).not.toBe(429);
  });

  it('gives each live hosted page session its own allowance (cardholders behind one address)', async () => {
    const channel = await t.db.one<{ id: number }>("INSERT INTO channels (site_id, name, slug, currency) VALUES ($1, 'Hosted', 'hosted', 'EUR') RETURNING id", [site.siteId]);
    const { token } = await createHostedSession(t.db, { kind: 'vault', siteId: site.siteId, channelId: channel.id, userId: site.userId, language: 'enGB' }, new Date());
    const url = `/${site.path}/api-tokens`;
    for (let i = 0; i < 6; i++) await t.app.inject({ url, remoteAddress: '10.0.0.88' });
    expect((await t.app.inject({ url, remoteAddress: '10.0.0.88' })).statusCode).toBe(429);
    // Not a REST credential (401), but not counted against the exhausted address either.
    const page = await t.app.inject({ url, headers: { authorization: `Bearer ${token}` }, remoteAddress: '10.0.0.88' });
    expect(page.statusCode).toBe(401);
  });

  it('behind a trusted proxy (TRUST_PROXY), limits each client address from X-Forwarded-For, not the proxy', async () => {
    const proxied = await createTestContext({ env: { LOGIN_RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '10.9.0.1' } });
    try {
      const member = await createSite(proxied.db);
      const login = (client: string, proxy = '10.9.0.1') =>
        proxied.app.inject({ method: 'POST', url: `/${member.path}/site-json/jwt-auth/v1/token`, payload: { username: member.username, password: member.password }, remoteAddress: proxy, headers: { 'x-forwarded-for': client } });
      expect((await login('203.0.113.1')).statusCode).toBe(200);
      expect((await login('203.0.113.1')).statusCode).toBe(200);
      expect((await login('203.0.113.1')).statusCode).toBe(429);
      expect((await login('203.0.113.2')).statusCode).toBe(200);
      // Anyone else's X-Forwarded-For is ignored: the limit follows the connecting address.
      expect((await login('203.0.113.3', '10.9.0.2')).statusCode).toBe(200);
      expect((await login('203.0.113.4', '10.9.0.2')).statusCode).toBe(200);
      expect((await login('203.0.113.5', '10.9.0.2')).statusCode).toBe(429);
    } finally {
      await proxied.close();
    }
  });

  it('refuses a malformed TRUST_PROXY at start-up', () => {
    expect(() => loadConfig({ ...testEnv, TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig({ ...testEnv, TRUST_PROXY: '10.0.0.0/8; rm -rf' })).toThrow(/TRUST_PROXY/);
    expect(loadConfig({ ...testEnv, TRUST_PROXY: '10.0.0.0/8, 192.168.1.1,::1' }).trustProxy).toBe('10.0.0.0/8,192.168.1.1,::1');
    expect(loadConfig({ ...testEnv, TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ ...testEnv }).trustProxy).toBe(false);
  });

  it('never limits the health probes, with a query string too', async () => {
    for (let i = 0; i < 8; i++) expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    for (let i = 0; i < 8; i++) expect((await t.app.inject({ url: '/healthz?check=1', remoteAddress: '10.0.0.88' })).statusCode).toBe(200);
  });

  it('gives a JWT one allowance: another spelling of it (a trailing =, other spare bits) is no credential', async () => {
    const login = await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token`, payload: { username: site.username, password: site.password }, remoteAddress: '10.0.0.89' });
    const jwt = login.json().token as string;
    const signature = jwt.split('.')[2]!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // The last character of a 43-character signature carries 2 spare bits: the next one decodes alike.
    const last = alphabet.indexOf(signature.at(-1)!);
    const sibling = `${jwt.slice(0, -1)}${alphabet[last ^ 1]}`;
    for (const spelling of [`${jwt}=`, sibling]) {
      const answer = await t.app.inject({ url: `/${site.path}/api-tokens`, headers: { authorization: `Bearer ${spelling}` }, remoteAddress: '10.0.0.90' });
      expect(answer.statusCode, spelling.slice(-4)).toBe(401);
    }
    expect((await t.app.inject({ url: `/${site.path}/api-tokens`, headers: { authorization: `Bearer ${jwt}` } })).statusCode).toBe(200);
  });
});

describe('rate windows', () => {
  it('allows a key its requests in a window that opens at its first request and reopens after it', () => {
    const windows = new RateWindows({ windowMs: 60_000, keysMax: 10 });
    expect(windows.hit('a', 1_000)).toEqual({ count: 1, resetAtMs: 61_000 });
    expect(windows.hit('a', 30_000)).toEqual({ count: 2, resetAtMs: 61_000 });
    expect(windows.hit('b', 30_000)).toEqual({ count: 1, resetAtMs: 90_000 });
    expect(windows.hit('a', 60_999).count).toBe(3);
    expect(windows.hit('a', 61_000)).toEqual({ count: 1, resetAtMs: 121_000 });
  });

  it('holds at most keysMax keys, forgetting the one first seen', () => {
    const windows = new RateWindows({ windowMs: 60_000, keysMax: 2 });
    windows.hit('a', 0);
    windows.hit('a', 1);
    windows.hit('b', 2);
    windows.hit('c', 3);
    expect(windows.hit('b', 4).count).toBe(2);
    expect(windows.hit('a', 5).count).toBe(1);
  });
});
