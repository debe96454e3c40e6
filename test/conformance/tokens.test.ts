import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { addUser } from '../support/fixtures.js';
import { api, authPrefix, expectError, expectFields, expectStatus, newSite, send, type Json } from './support.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t?.close());

const jwt = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

function expectUserObject(body: Json, user: { userId: number; username: string; siteId: number; path: string }) {
  expectFields(body, {
    id: 'integer',
    name: 'string',
    username: 'string',
    user_email: 'string',
    user_nicename: 'string',
    user_display_name: 'string',
    usertype: 'string',
    type: 'string',
    read_only: 'boolean',
    can_sign_off_payout: 'boolean',
    default_site: 'object',
    site_count: 'integer',
    two_factor_confirmed_at: ['string', 'null'],
    sites: 'array',
    token: 'string',
    refresh_token: 'string',
  });
  expect(body.id).toBe(user.userId);
  expect(body.username).toBe(user.username);
  expect(body.token).toMatch(jwt);
  expect(body.refresh_token).toMatch(jwt);
  expectFields(body.default_site, { id: 'integer', name: 'string', path: 'string', permissions: 'array', channel_count: 'integer', usertype: 'string' });
  expect(body.default_site.id).toBe(user.siteId);
  expect(body.default_site.path).toBe(user.path);
  expect(body.sites.length).toBe(body.site_count);
  for (const site of body.sites) expectFields(site, { id: 'integer', name: 'string' });
}

describe('token endpoints', () => {
  it('POST token returns the authenticated user object; the JWT works on the REST API', async () => {
    const site = await newSite(t);
    const response = await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { username: site.username, password: site.password } });
    const body = expectStatus(response, 200);
    expectUserObject(body, site);
    expect(body.usertype).toBe('member_admin');
    expect(body.read_only).toBe(false);
    expect(body.default_site.channel_count).toBe(0);
    const list = await send(t, 'GET', `/${site.path}/site-json/vendor/v2/channels`, { headers: { authorization: `Bearer ${body.token}` } });
    expect(list.statusCode).toBe(200);
  });

  it('wrong password or unknown user: 4xx error shape, same code (no user enumeration)', async () => {
    const site = await newSite(t);
    const wrong = await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { username: site.username, password: 'nope' } });
    const unknown = await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { username: 'nobody-here', password: 'nope' } });
    expect(wrong.statusCode).toBeGreaterThanOrEqual(400);
    const a = expectError(wrong, wrong.statusCode);
    const b = expectError(unknown, wrong.statusCode);
    expect(a.code).toBe(b.code);
    expect(a.message).toBe(b.message);
  });

  it('missing username: 400 rest_missing_callback_param', async () => {
    const site = await newSite(t);
    const response = await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { password: 'x' } });
    const body = expectError(response, 400, 'rest_missing_callback_param');
    expect(JSON.stringify(body.data.params)).toContain('username');
  });

  it('read_only user object says read_only true', async () => {
    const site = await newSite(t, { role: 'member', readOnly: true });
    const body = expectStatus(await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { username: site.username, password: site.password } }), 200);
    expect(body.read_only).toBe(true);
    expect(body.usertype).toBe('member');
  });

  it('POST token/refresh with the refresh token returns the user object with a working token', async () => {
    const site = await newSite(t);
    const login = expectStatus(await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { username: site.username, password: site.password } }), 200);
    const refreshed = expectStatus(await send(t, 'POST', `${authPrefix(site.path)}/token/refresh`, { headers: { authorization: `Bearer ${login.refresh_token}` } }), 200);
    expectUserObject(refreshed, site);
    const list = await send(t, 'GET', `/${site.path}/site-json/vendor/v2/channels`, { headers: { authorization: `Bearer ${refreshed.token}` } });
    expect(list.statusCode).toBe(200);
  });

  it('a user JWT is not a refresh token, and a refresh token is not a user JWT', async () => {
    const site = await newSite(t);
    const login = expectStatus(await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { username: site.username, password: site.password } }), 200);
    expectError(await send(t, 'POST', `${authPrefix(site.path)}/token/refresh`, { headers: { authorization: `Bearer ${login.token}` } }), 401);
    expectError(await send(t, 'GET', `/${site.path}/site-json/vendor/v2/channels`, { headers: { authorization: `Bearer ${login.refresh_token}` } }), 401);
  });

  it('DELETE token/refresh rotates: {deleted:true}, old refresh token refused, next login issues a new one', async () => {
    const site = await newSite(t);
    const login = expectStatus(await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { username: site.username, password: site.password } }), 200);
    const deleted = expectStatus(await send(t, 'DELETE', `${authPrefix(site.path)}/token/refresh`, { headers: { authorization: `Bearer ${login.token}` } }), 200);
    expect(deleted).toEqual({ deleted: true });
    expectError(await send(t, 'POST', `${authPrefix(site.path)}/token/refresh`, { headers: { authorization: `Bearer ${login.refresh_token}` } }), 401);
    const again = expectStatus(await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { username: site.username, password: site.password } }), 200);
    expect(again.refresh_token).not.toBe(login.refresh_token);
    expectStatus(await send(t, 'POST', `${authPrefix(site.path)}/token/refresh`, { headers: { authorization: `Bearer ${again.refresh_token}` } }), 200);
  });

  it('POST token/refresh says what is wrong: no credential is rest_not_logged_in, a bad one jwt_auth_invalid_token (both 401)', async () => {
    const site = await newSite(t);
    expectError(await send(t, 'POST', `${authPrefix(site.path)}/token/refresh`), 401, 'rest_not_logged_in');
    expectError(await send(t, 'POST', `${authPrefix(site.path)}/token/refresh`, { headers: { authorization: 'Bearer not-a-refresh-token' } }), 401, 'jwt_auth_invalid_token');
  });

  it('DELETE token/refresh without a token is 401', async () => {
    const site = await newSite(t);
    expectError(await send(t, 'DELETE', `${authPrefix(site.path)}/token/refresh`), 401);
  });

  it('cardvaultuser returns only {token}; it cannot call the REST API; it expires after 15 minutes', async () => {
    const site = await newSite(t);
    const body = expectStatus(await send(t, 'POST', `${authPrefix(site.path)}/token/cardvaultuser`, { body: { username: site.username, password: site.password } }), 200);
    expect(Object.keys(body)).toEqual(['token']);
    expect(body.token).toMatch(jwt);
    const payload = JSON.parse(Buffer.from(body.token.split('.')[1], 'base64url').toString()) as { exp: number; iat: number };
    expect(payload.exp - payload.iat).toBe(15 * 60);
    const response = await send(t, 'GET', `/${site.path}/site-json/vendor/v2/channels`, { headers: { authorization: `Bearer ${body.token}` } });
    expect([401, 403]).toContain(response.statusCode);
    expectError(response, response.statusCode);
  });

  it('the user JWT lives 15 minutes', async () => {
    const site = await newSite(t);
    const login = expectStatus(await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { username: site.username, password: site.password } }), 200);
    const payload = JSON.parse(Buffer.from(login.token.split('.')[1], 'base64url').toString()) as { exp: number; iat: number };
    expect(payload.exp - payload.iat).toBe(15 * 60);
  });
});

describe('API tokens', () => {
  const tokensUrl = (path: string) => `/${path}/api-tokens`;

  it('GET lists API token records with the spec field set', async () => {
    const site = await newSite(t);
    const list = expectStatus(await send(t, 'GET', tokensUrl(site.path), { headers: site.headers }), 200);
    expect(Array.isArray(list)).toBe(true);
    expect(list).toHaveLength(1);
    const record = list[0] as Json;
    expectFields(record, {
      id: 'integer',
      tokenable_type: 'string',
      tokenable_id: 'integer',
      name: 'string',
      abilities: 'array',
      last_used_at: ['string', 'null'],
      expires_at: ['string', 'null'],
      created_at: 'string',
      updated_at: 'string',
    });
    expect(record.tokenable_id).toBe(site.userId);
    expect(record.expires_at).toBeNull();
    expect(JSON.stringify(record)).not.toContain(site.token);
    // The listing used the token. last_used_at is written beside the request, not inside it
    // (src/http/auth.ts touchApiToken), so a later listing shows it: ISO 8601 UTC.
    let lastUsedAt: unknown = record.last_used_at;
    for (let attempt = 0; attempt < 50 && lastUsedAt === null; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const again = expectStatus(await send(t, 'GET', tokensUrl(site.path), { headers: site.headers }), 200) as Json[];
      lastUsedAt = again[0]!.last_used_at;
    }
    expect(lastUsedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  });

  it('POST creates {token, expires_at} (201); the token works; at most two per user, expired ones count', async () => {
    const site = await newSite(t);
    // The fixture user already holds one token.
    const today = new Date().toISOString().slice(0, 10);
    const created = expectStatus(await send(t, 'POST', tokensUrl(site.path), { headers: site.headers, body: { name: 'ci', expires_at: today } }), 201);
    expect(Object.keys(created).sort()).toEqual(['expires_at', 'token']);
    expect(typeof created.token).toBe('string');
    expect(created.expires_at).toContain(today);
    const headers = { authorization: `Bearer ${created.token}` };
    expectStatus(await send(t, 'GET', tokensUrl(site.path), { headers }), 200);

    const third = await send(t, 'POST', tokensUrl(site.path), { headers: site.headers, body: { name: 'third' } });
    expectError(third, third.statusCode);
    expect(third.statusCode).toBeGreaterThanOrEqual(400);
    expect(third.statusCode).toBeLessThan(500);

    // Time passes (the service reads the database clock): the dated token has expired but still counts.
    await t.db.query("UPDATE api_tokens SET expires_at = (now() AT TIME ZONE 'UTC')::date - 1 WHERE name = 'ci' AND user_id = $1", [site.userId]);
    expectError(await send(t, 'GET', tokensUrl(site.path), { headers }), 401);
    const stillFull = await send(t, 'POST', tokensUrl(site.path), { headers: site.headers, body: { name: 'third' } });
    expect(stillFull.statusCode).toBe(third.statusCode);
    const list = expectStatus(await send(t, 'GET', tokensUrl(site.path), { headers: site.headers }), 200) as Json[];
    const expired = list.find((record) => record.name === 'ci')!;
    expect(expired.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}/);
    const gone = expectStatus(await send(t, 'DELETE', `${tokensUrl(site.path)}/${expired.id}`, { headers: site.headers }), 200);
    expect(typeof gone.message).toBe('string');
    expectStatus(await send(t, 'POST', tokensUrl(site.path), { headers: site.headers, body: { name: 'third' } }), 201);
  });

  it('expires_at in the past is refused; the token stays valid through 23:59:59 GMT of its date', async () => {
    const site = await newSite(t);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expectError(await send(t, 'POST', tokensUrl(site.path), { headers: site.headers, body: { name: 'old', expires_at: yesterday } }), 400, 'rest_invalid_param');
  });

  it('POST validation: name required; expires_at must be Y-m-d', async () => {
    const site = await newSite(t);
    expectError(await send(t, 'POST', tokensUrl(site.path), { headers: site.headers, body: {} }), 400, 'rest_missing_callback_param');
    expectError(await send(t, 'POST', tokensUrl(site.path), { headers: site.headers, body: { name: 'x', expires_at: '31/12/2030' } }), 400, 'rest_invalid_param');
    expectError(await send(t, 'POST', tokensUrl(site.path), { headers: site.headers, body: { name: 'x', expires_at: '2030-02-30' } }), 400, 'rest_invalid_param');
  });

  it('DELETE one: {message}; unknown or another user\'s token: 404', async () => {
    const site = await newSite(t);
    const other = await addUser(t.db, site.siteId, { role: 'member_admin' });
    const otherList = expectStatus(await send(t, 'GET', tokensUrl(site.path), { headers: other.headers }), 200) as Json[];
    expect(otherList).toHaveLength(1);
    expectError(await send(t, 'DELETE', `${tokensUrl(site.path)}/${otherList[0]!.id}`, { headers: site.headers }), 404);
    expectError(await send(t, 'DELETE', `${tokensUrl(site.path)}/999999`, { headers: site.headers }), 404);
    // The other user's token still works.
    expectStatus(await send(t, 'GET', tokensUrl(site.path), { headers: other.headers }), 200);
  });

  it('DELETE all: {message}; every token of the user stops working, others are untouched', async () => {
    const site = await newSite(t);
    const other = await addUser(t.db, site.siteId, { role: 'member_admin' });
    const created = expectStatus(await send(t, 'POST', tokensUrl(site.path), { headers: site.headers, body: { name: 'second' } }), 201);
    const body = expectStatus(await send(t, 'DELETE', tokensUrl(site.path), { headers: site.headers }), 200);
    expect(typeof body.message).toBe('string');
    expectError(await send(t, 'GET', tokensUrl(site.path), { headers: site.headers }), 401);
    expectError(await send(t, 'GET', tokensUrl(site.path), { headers: { authorization: `Bearer ${created.token}` } }), 401);
    expectStatus(await send(t, 'GET', tokensUrl(site.path), { headers: other.headers }), 200);
  });

  it('API tokens are per site: a token of site A does not open site B', async () => {
    const a = await newSite(t);
    const b = await newSite(t);
    const response = await send(t, 'GET', tokensUrl(b.path), { headers: a.headers });
    expect([401, 404]).toContain(response.statusCode);
    expectError(response, response.statusCode);
    const channels = await api(t, { path: b.path, headers: a.headers }, 'GET', 'channels');
    expect([401, 404]).toContain(channels.statusCode);
  });
});
