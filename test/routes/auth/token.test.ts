import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { hash } from '@node-rs/argon2';
import { createTestContext, type TestContext } from '../../support/context.js';
import { addUser, createSite, type SiteFixture } from '../../support/fixtures.js';
import { setPassword } from '../../../src/domain/users/accounts.js';
import { authPath, postToken, userObjectKeys } from './helpers.js';

let t: TestContext;
let site: SiteFixture;
beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db, { role: 'member_admin' });
});
afterAll(async () => t.close());

describe('POST token (happy)', () => {
  it('returns the authenticated user object with exactly the spec fields', async () => {
    const response = await postToken(t, site.path, { username: site.username, password: site.password });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const user = response.json();
    expect(Object.keys(user).sort()).toEqual(userObjectKeys);
    expect(user).toMatchObject({
      id: site.userId,
      username: site.username,
      name: site.username,
      user_email: `${site.username}@example.com`,
      user_nicename: site.username,
      user_display_name: site.username,
      usertype: 'member_admin',
      type: 'member_admin',
      read_only: false,
      can_sign_off_payout: false,
      site_count: 1,
      two_factor_confirmed_at: null,
      sites: [{ id: site.siteId, name: expect.any(String) }],
    });
    expect(Object.keys(user.default_site).sort()).toEqual(['channel_count', 'id', 'name', 'path', 'permissions', 'usertype']);
    expect(user.default_site).toMatchObject({ id: site.siteId, path: site.path, channel_count: 0, usertype: 'member_admin' });
    expect(user.default_site.permissions).toContain('api_tokens:write');
    expect(decodeJwt(user.token)).toMatchObject({ kind: 'user', sub: String(site.userId) });
    expect(decodeJwt(user.refresh_token)).toMatchObject({ kind: 'refresh' });
    expect(decodeJwt(user.refresh_token).exp).toBeUndefined();
  });

  it('issues a user JWT that calls the REST API of that site', async () => {
    const { token } = (await postToken(t, site.path, { username: site.username, password: site.password })).json();
    const list = await t.app.inject({ url: `/${site.path}/api-tokens`, headers: { authorization: `Bearer ${token}` } });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toHaveLength(1);
  });

  it('describes the site of the URL as default_site and lists every site of the user', async () => {
    const other = await createSite(t.db, { role: 'member_admin' });
    await t.db.query("INSERT INTO memberships (site_id, user_id, role, read_only) VALUES ($1, $2, 'member', true)", [other.siteId, site.userId]);
    const user = (await postToken(t, other.path, { username: site.username, password: site.password })).json();
    expect(user.default_site).toMatchObject({ id: other.siteId, path: other.path, usertype: 'member' });
    expect(user).toMatchObject({ usertype: 'member', read_only: true, site_count: 2 });
    expect(user.default_site.permissions.every((permission: string) => permission.endsWith(':read'))).toBe(true);
    expect(user.sites.map((entry: { id: number }) => entry.id)).toEqual([site.siteId, other.siteId]);
  });

  it('counts the channels of the default site', async () => {
    const fresh = await createSite(t.db);
    await t.db.query("INSERT INTO channels (site_id, name, slug, currency) VALUES ($1, 'A', 'a', 'USD'), ($1, 'B', 'b', 'EUR')", [fresh.siteId]);
    const user = (await postToken(t, fresh.path, { username: fresh.username, password: fresh.password })).json();
    expect(user.default_site.channel_count).toBe(2);
  });
});

describe('POST token (errors)', () => {
  it('answers a wrong password, an unknown user, a non-member and an unknown site identically', async () => {
    const stranger = await createSite(t.db);
    const answers = await Promise.all([
      postToken(t, site.path, { username: site.username, password: 'wrong-password' }),
      postToken(t, site.path, { username: 'nobody-here', password: 'wrong-password' }),
      postToken(t, site.path, { username: stranger.username, password: stranger.password }),
      postToken(t, 'no-such-site', { username: site.username, password: site.password }),
    ]);
    for (const answer of answers) {
      expect(answer.statusCode).toBe(401);
      expect(answer.json()).toEqual({ code: 'rest_not_logged_in', message: 'The username or password is incorrect.', data: { status: 401 } });
    }
  });

  it('finds the user whatever the case of the name, as usernames are unique regardless of case', async () => {
    const fresh = await createSite(t.db);
    const shouted = fresh.username.toUpperCase();
    const response = await postToken(t, fresh.path, { username: shouted, password: fresh.password });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ id: fresh.userId, username: fresh.username });
    // A wrong password under another case is counted towards the same name, and answered like any.
    const wrong = await postToken(t, fresh.path, { username: shouted, password: 'wrong-password' });
    expect(wrong.json()).toEqual({ code: 'rest_not_logged_in', message: 'The username or password is incorrect.', data: { status: 401 } });
    // Two names differing only in case cannot both exist, even written with SQL.
    await expect(t.db.query("INSERT INTO users (username, email, display_name, password_hash) VALUES ($1, 'x@example.com', 'x', 'x')", [shouted])).rejects.toThrow(/unique/);
  });

  it('accepts a password whichever Unicode form it is typed in (NFC or NFD), hashes set before included', async () => {
    const composed = 'Grüße-aus-Köln';
    const decomposed = composed.normalize('NFD');
    expect(decomposed).not.toBe(composed);
    // Set on a machine that sends decomposed letters, typed on one that sends composed ones, and back.
    const member = await createSite(t.db);
    await setPassword(t.db, member.userId, decomposed);
    for (const password of [composed, decomposed]) expect((await postToken(t, member.path, { username: member.username, password })).statusCode).toBe(200);
    await setPassword(t.db, member.userId, composed);
    for (const password of [composed, decomposed]) expect((await postToken(t, member.path, { username: member.username, password })).statusCode).toBe(200);
    // A hash made of the password as sent, before passwords were normalised.
    await t.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [member.userId, await hash(decomposed, { memoryCost: 1024, timeCost: 1, parallelism: 1 })]);
    for (const password of [composed, decomposed]) expect((await postToken(t, member.path, { username: member.username, password })).statusCode).toBe(200);
    expect((await postToken(t, member.path, { username: member.username, password: 'Grüsse-aus-Köln' })).statusCode).toBe(401);
  });

  it('names missing fields', async () => {
    const response = await postToken(t, site.path, { username: site.username });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'rest_missing_callback_param', data: { status: 400, params: ['password'] } });
  });

  it('refuses a non-string password without trying it', async () => {
    const response = await postToken(t, site.path, { username: site.username, password: 12345678 });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('rest_invalid_param');
  });
});

describe('token/refresh', () => {
  it('exchanges a refresh token for a user object with a new JWT', async () => {
    const login = (await postToken(t, site.path, { username: site.username, password: site.password })).json();
    const response = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${login.refresh_token}` } });
    expect(response.statusCode).toBe(200);
    const user = response.json();
    expect(Object.keys(user).sort()).toEqual(userObjectKeys);
    expect(user.refresh_token).toBe(login.refresh_token);
    expect(user.token).not.toBe(login.token);
    const list = await t.app.inject({ url: `/${site.path}/api-tokens`, headers: { authorization: `Bearer ${user.token}` } });
    expect(list.statusCode).toBe(200);
  });

  it('DELETE revokes the refresh tokens; the next login issues a working one', async () => {
    const login = (await postToken(t, site.path, { username: site.username, password: site.password })).json();
    const deleted = await t.app.inject({ method: 'DELETE', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${login.token}` } });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ deleted: true });
    const refused = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${login.refresh_token}` } });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().code).toBe('jwt_auth_invalid_token');
    const again = (await postToken(t, site.path, { username: site.username, password: site.password })).json();
    expect(again.refresh_token).not.toBe(login.refresh_token);
    const refreshed = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${again.refresh_token}` } });
    expect(refreshed.statusCode).toBe(200);
  });

  it('stores refresh tokens only as hashes', async () => {
    const login = (await postToken(t, site.path, { username: site.username, password: site.password })).json();
    const rows = await t.db.query<{ token_hash: string }>('SELECT token_hash FROM refresh_tokens WHERE user_id = $1', [site.userId]);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.some((row) => row.token_hash === login.refresh_token)).toBe(false);
    expect(rows.every((row) => /^[0-9a-f]{64}$/.test(row.token_hash))).toBe(true);
  });

  it('a password change invalidates refresh tokens', async () => {
    const member = await createSite(t.db);
    const login = (await postToken(t, member.path, { username: member.username, password: member.password })).json();
    await setPassword(t.db, member.userId, 'a-brand-new-password');
    const refused = await t.app.inject({ method: 'POST', url: authPath(member.path, 'token/refresh'), headers: { authorization: `Bearer ${login.refresh_token}` } });
    expect(refused.statusCode).toBe(401);
    expect((await postToken(t, member.path, { username: member.username, password: member.password })).statusCode).toBe(401);
    expect((await postToken(t, member.path, { username: member.username, password: 'a-brand-new-password' })).statusCode).toBe(200);
  });

  it('refuses a refresh for a site the user is not a member of', async () => {
    const other = await createSite(t.db);
    const login = (await postToken(t, site.path, { username: site.username, password: site.password })).json();
    const response = await t.app.inject({ method: 'POST', url: authPath(other.path, 'token/refresh'), headers: { authorization: `Bearer ${login.refresh_token}` } });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('rest_post_invalid_id');
  });

  it('lets a read-only user log out', async () => {
    const reader = await addUser(t.db, site.siteId, { role: 'member', readOnly: true });
    const login = (await postToken(t, site.path, { username: reader.username, password: reader.password })).json();
    const deleted = await t.app.inject({ method: 'DELETE', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${login.token}` } });
    expect(deleted.json()).toEqual({ deleted: true });
  });

  it('DELETE without a credential is 401 rest_not_logged_in', async () => {
    const response = await t.app.inject({ method: 'DELETE', url: authPath(site.path, 'token/refresh') });
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('rest_not_logged_in');
  });
});

describe('token/cardvaultuser', () => {
  it('returns only a 15-minute vaulting-app JWT bound to the site', async () => {
    const response = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/cardvaultuser'), payload: { username: site.username, password: site.password } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(Object.keys(body)).toEqual(['token']);
    const claims = decodeJwt(body.token);
    expect(claims).toMatchObject({ kind: 'cardvaultuser', site: site.siteId, sub: String(site.userId) });
    expect(claims.exp! - claims.iat!).toBe(15 * 60);
  });

  it('refuses read-only users with 403: the vaulting app stores cards and records vault transactions', async () => {
    const readOnly = await createSite(t.db, { role: 'member_admin', readOnly: true });
    const response = await t.app.inject({ method: 'POST', url: authPath(readOnly.path, 'token/cardvaultuser'), payload: { username: readOnly.username, password: readOnly.password } });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ code: 'rest_forbidden', data: { status: 403 } });
    expect(response.body).not.toMatch(/eyJ/);
  });

  it('refuses bad credentials like POST token', async () => {
    const response = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/cardvaultuser'), payload: { username: site.username, password: 'nope-nope' } });
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('rest_not_logged_in');
  });
});

describe('a site path no site can have (empty, or over 63 characters)', () => {
  const impossiblePaths = [`a${'b'.repeat(63)}`, ''];

  it('POST token and token/cardvaultuser answer as for an unknown site, not 400', async () => {
    for (const endpoint of ['token', 'token/cardvaultuser']) {
      const unknown = await t.app.inject({ method: 'POST', url: authPath('no-such-site', endpoint), payload: { username: site.username, password: site.password } });
      expect(unknown.statusCode).toBe(401);
      for (const path of impossiblePaths) {
        const answer = await t.app.inject({ method: 'POST', url: authPath(path, endpoint), payload: { username: site.username, password: site.password } });
        expect([path, answer.statusCode, answer.json()]).toEqual([path, unknown.statusCode, unknown.json()]);
      }
    }
  });

  it('token/refresh (POST and DELETE) answer as for an unknown site, not 400', async () => {
    const login = (await postToken(t, site.path, { username: site.username, password: site.password })).json();
    for (const [method, bearer] of [['POST', login.refresh_token], ['DELETE', login.token]] as const) {
      const headers = { authorization: `Bearer ${bearer}` };
      const unknown = await t.app.inject({ method, url: authPath('no-such-site', 'token/refresh'), headers });
      expect(unknown.statusCode).toBe(404);
      for (const path of impossiblePaths) {
        const answer = await t.app.inject({ method, url: authPath(path, 'token/refresh'), headers });
        expect([path, answer.statusCode, answer.json()]).toEqual([path, unknown.statusCode, unknown.json()]);
      }
    }
  });
});
