import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { isReleaseVersion, packageVersion } from '../../src/version.js';

let t: TestContext;
let site: SiteFixture;
beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db);
});
afterAll(async () => t.close());

describe('security headers', () => {
  it('sets them on JSON answers, errors and 404s', async () => {
    for (const response of [
      await t.app.inject({ url: `/${site.path}/api-tokens`, headers: site.headers }),
      await t.app.inject({ url: `/${site.path}/api-tokens` }),
      await t.app.inject({ url: '/no/such/route' }),
    ]) {
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(response.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it('keeps every API answer out of caches (`no-store`): those carrying secrets, errors and 404s alike', async () => {
    const own = await createSite(t.db);
    const api = `/${own.path}/site-json/vendor/v2`;
    const channel = await t.app.inject({ method: 'POST', url: `${api}/channels`, headers: own.headers, payload: { name: 'Secrets', currencies: 'USD' } });
    const vault = await t.app.inject({ method: 'POST', url: `${api}/transactions`, headers: own.headers, payload: { transaction_types: 'vault', channels: channel.json().id, currencies: 'USD', total: 0, token: 'tok_visa' } });
    expect(vault.json().token).toEqual(expect.any(String));
    const listed = await t.app.inject({ url: `${api}/channels`, headers: own.headers });
    expect(listed.json()[0].channel_secret).toEqual(expect.any(String));
    const read = await t.app.inject({ url: `${api}/transactions/${vault.json().id}`, headers: own.headers });
    expect(read.json().token).toBe(vault.json().token);
    for (const response of [channel, vault, listed, read, await t.app.inject({ url: `${api}/transactions` }), await t.app.inject({ url: '/no/such/route' })]) {
      expect(response.headers['cache-control'], response.body.slice(0, 80)).toBe('no-store');
    }
    // A route that chose its own caching keeps it.
    expect((await t.app.inject({ url: '/openapi.json' })).headers['cache-control']).toBe('no-cache');
    // Versioned scripts are kept a year only once released: before that they still change, and a
    // browser holding last build's modal would fail the new integrity value.
    expect(packageVersion()).toMatch(/^0\./);
    for (const url of ['/modal/1.0.0/payment-modal.js', '/vault/1.8.0/app.js']) {
      const asset = await t.app.inject({ url });
      expect(asset.statusCode, url).toBe(200);
      expect(asset.headers['cache-control'], url).toBe('public, max-age=300');
    }
    expect([isReleaseVersion('0.9.3'), isReleaseVersion('1.0.0'), isReleaseVersion('2.1.0')]).toEqual([false, true, true]);
  });

  it('adds HSTS when the base URL is https', async () => {
    const https = await createTestContext({ env: { BASE_URL: 'https://pay.example.com' } });
    try {
      const response = await https.app.inject({ url: '/healthz' });
      expect(response.headers['strict-transport-security']).toMatch(/^max-age=\d+/);
    } finally {
      await https.close();
    }
  });

  it('leaves a page its own Content-Security-Policy (and framing rules)', async () => {
    const response = await t.app.inject({ url: '/docs' });
    expect(response.headers['content-security-policy']).toContain("style-src 'sha256-");
    expect(response.headers['content-security-policy']).not.toBe("default-src 'none'; frame-ancestors 'none'");
  });
});

describe('OpenAPI document and reference page', () => {
  it('serves OpenAPI 3.1 with the bearer scheme and every route, including the token endpoints', async () => {
    const response = await t.app.inject({ url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.title).toBe('trustfare');
    expect(document.components.securitySchemes.bearer).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(document.security).toEqual([{ bearer: [] }]);
    const login = document.paths['/{path}/site-json/jwt-auth/v1/token'].post;
    expect(login.security).toEqual([]);
    expect(Object.keys(login.requestBody.content['application/json'].schema.properties)).toEqual(['username', 'password', 'otp']);
    expect(login.responses['200'].content['application/json'].schema.properties.default_site).toBeDefined();
    expect(document.paths['/{path}/api-tokens/{token_id}'].delete).toBeDefined();
    expect(document.paths['/openapi.json']).toBeUndefined();
    // Routes registered by other modules after the generator appear too.
    expect(Object.keys(document.paths)).toContain('/{path}/site-json/vendor/v2/channels');
  });

  it('renders /docs as plain HTML without scripts or external resources', async () => {
    const response = await t.app.inject({ url: '/docs' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = response.headers['content-security-policy'] as string;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).not.toMatch(/script-src/);
    expect(response.body).toContain('trustfare API reference');
    expect(response.body).toContain('/{path}/site-json/jwt-auth/v1/token/refresh');
    expect(response.body).toContain('refresh_token');
    expect(response.body).not.toMatch(/<script|https?:\/\/(?!trustfare\.test)[a-z]/i);
  });

  it('shows on /docs what a header parameter is for and the headers an answer carries', async () => {
    const text = (await t.app.inject({ url: '/docs' })).body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    expect(text).toContain('Idempotency-Key header string, min length 1, max length 255, pattern ^[\\x21-\\x7e]+$: Makes a retry safe');
    expect(text).toContain('Headers header schema X-Site-Total string, pattern ^[0-9]+$: Items matching the query, over every page.');
    expect(text).toContain('Location string: The URL of the new transaction');
    expect(text).toContain('Retry-After string, pattern ^[0-9]+$: Seconds until the rate limit lets a request through again.');
  });

  it('shows on /docs what each transaction type needs, a line each', async () => {
    const body = (await t.app.inject({ url: '/docs' })).body;
    for (const type of ['vault', 'purchase', 'retained_purchase', 'capture', 'void', 'refund']) expect(body).toContain(`<br>- <code>${type}</code>`);
    expect(body).toContain('<code>linked_id</code> (the vault transaction) or <code>token</code> (its vault token)');
  });
});

describe('logs', () => {
  it('never contain passwords, tokens, codes or card data', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const app = await buildApp({ context: { ...t.context, config: { ...t.config, logLevel: 'trace' } }, logStream: stream });
    try {
      const login = await app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token`, payload: { username: site.username, password: site.password } });
      const { token, refresh_token } = login.json();
      await app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token`, payload: { username: site.username, password: 'Secret-Wrong-Pass', otp: '123456' } });
      await app.inject({ url: `/${site.path}/api-tokens`, headers: site.headers });
      await app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token/refresh`, headers: { authorization: `Bearer ${refresh_token}` } });
      await app.inject({ url: `/vault/1.8.0/?auth=${token}&card_number=4111111111111111` });
      const log = lines.join('');
      expect(log).toContain('incoming request');
      expect(log).toContain('[redacted]');
      for (const secret of [site.password, 'Secret-Wrong-Pass', site.token, token, refresh_token, '4111111111111111']) expect(log).not.toContain(secret);
    } finally {
      await app.close();
    }
  });
});

// Request bodies at the edge: what is not JSON is refused in the error shape before anything
// runs, and a bodiless DELETE is not refused for the Content-Type header many clients always send.
const channels = () => `/${site.path}/site-json/vendor/v2/channels`;
const send = (method: 'POST' | 'DELETE', url: string, payload: string | undefined, contentType = 'application/json') =>
  t.app.inject({ method, url, headers: { ...site.headers, 'content-type': contentType }, ...(payload === undefined ? {} : { payload }) });
const channelCount = async () => (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM channels WHERE site_id = $1 AND deleted_at IS NULL', [site.siteId])).count;

describe('JSON bodies', () => {
  it('refuses malformed, empty and prototype-poisoning JSON with 400 rest_invalid_json, creating nothing', async () => {
    for (const payload of ['{"name": "x",', '', '{"name":"x","currencies":"USD","__proto__":{"admin":true}}']) {
      const response = await send('POST', channels(), payload);
      expect(response.json(), JSON.stringify(payload)).toEqual({ code: 'rest_invalid_json', message: 'The request body is not valid JSON.', data: { status: 400 } });
    }
    expect(await channelCount()).toBe(0);
  });

  it('refuses another media type with 415', async () => {
    const response = await send('POST', channels(), 'name=x', 'application/x-www-form-urlencoded');
    expect(response.json()).toMatchObject({ code: 'rest_unsupported_media_type', data: { status: 415 } });
  });

  it('takes a bodiless POST (token/refresh: "no body" in the spec) even when it says application/json', async () => {
    const login = await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token`, payload: { username: site.username, password: site.password } });
    const refreshed = await t.app.inject({
      method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token/refresh`, headers: { authorization: `Bearer ${login.json().refresh_token}`, 'content-type': 'application/json' },
    });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect(refreshed.json()).toMatchObject({ token: expect.any(String), user_nicename: login.json().user_nicename });
    // A route that takes a body still refuses an empty one.
    expect((await send('POST', channels(), '')).json()).toMatchObject({ code: 'rest_invalid_json' });
  });

  it('takes a DELETE without a body even when it says application/json', async () => {
    const created = await send('POST', channels(), JSON.stringify({ name: 'Tours', currencies: 'USD' }));
    expect(created.statusCode).toBe(201);
    const deleted = await send('DELETE', `${channels()}/${created.json().id}`, undefined);
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(await channelCount()).toBe(0);
  });
});
