import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../support/context.js';
import { createSite, type SiteFixture } from '../../support/fixtures.js';
import { signJwt } from '../../../src/domain/credentials.js';
import { setPassword } from '../../../src/domain/users/accounts.js';
import { authPath, postToken } from './helpers.js';

let t: TestContext;
let site: SiteFixture;
let login: { token: string; refresh_token: string };
let cardVaultToken: string;
beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db);
  login = (await postToken(t, site.path, { username: site.username, password: site.password })).json();
  cardVaultToken = (await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/cardvaultuser'), payload: { username: site.username, password: site.password } })).json().token;
});
afterAll(async () => t.close());

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

async function callApi(token: string) {
  return t.app.inject({ url: `/${site.path}/api-tokens`, headers: { authorization: `Bearer ${token}` } });
}

function expectInvalidToken(response: Awaited<ReturnType<typeof callApi>>) {
  expect(response.statusCode).toBe(401);
  expect(response.json()).toMatchObject({ code: 'jwt_auth_invalid_token', data: { status: 401 } });
}

describe('JWTs that must not work', () => {
  it('the genuine user token works (control)', async () => {
    expect((await callApi(login.token)).statusCode).toBe(200);
  });

  it('a token with a tampered payload', async () => {
    const [header, payload, signature] = login.token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const forged = [header, base64url({ ...claims, sub: String(Number(claims.sub) + 1) }), signature].join('.');
    expectInvalidToken(await callApi(forged));
  });

  it('an unsigned token (alg none)', async () => {
    const claims = JSON.parse(Buffer.from(login.token.split('.')[1]!, 'base64url').toString());
    expectInvalidToken(await callApi(`${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`));
  });

  it('a token signed with another secret', async () => {
    const other = await signJwt(new Uint8Array(32).fill(7), { userId: site.userId, kind: 'user' });
    expectInvalidToken(await callApi(other));
  });

  it('an expired user token', async () => {
    const old = await signJwt(t.config.secrets.jwtSecret, { userId: site.userId, kind: 'user' }, new Date(Date.now() - 16 * 60 * 1000));
    expectInvalidToken(await callApi(old));
  });

  it('a user token issued before the last password change', async () => {
    const member = await createSite(t.db);
    await t.db.query("UPDATE users SET password_changed_at = now() - interval '1 hour' WHERE id = $1", [member.userId]);
    const call = (token: string) => t.app.inject({ url: `/${member.path}/api-tokens`, headers: { authorization: `Bearer ${token}` } });
    const earlier = await signJwt(t.config.secrets.jwtSecret, { userId: member.userId, kind: 'user' }, new Date(Date.now() - 60_000));
    expect((await call(earlier)).statusCode).toBe(200);
    await setPassword(t.db, member.userId, 'a-completely-new-password');
    expectInvalidToken(await call(earlier));
    const later = await signJwt(t.config.secrets.jwtSecret, { userId: member.userId, kind: 'user' }, new Date(Date.now() + 2_000));
    expect((await call(later)).statusCode).toBe(200);
  });

  it('a token without pwd_at (issued before session 29) is refused from the second before the change, kept from its second', async () => {
    const member = await createSite(t.db);
    const call = (token: string) => t.app.inject({ url: `/${member.path}/api-tokens`, headers: { authorization: `Bearer ${token}` } });
    // The change half-way through a second: tokens carry whole seconds, and the rule is to the second.
    const changedAt = Math.floor(Date.now() / 1000) - 120;
    await t.db.query('UPDATE users SET password_changed_at = to_timestamp($2) WHERE id = $1', [member.userId, changedAt + 0.5]);
    const signedAt = (second: number) => signJwt(t.config.secrets.jwtSecret, { userId: member.userId, kind: 'user' }, new Date(second * 1000));
    expectInvalidToken(await call(await signedAt(changedAt - 1)));
    expect((await call(await signedAt(changedAt))).statusCode).toBe(200);
  });

  it('a refresh token used on the REST API', async () => {
    expectInvalidToken(await callApi(login.refresh_token));
  });

  it('a vaulting-app token used on the REST API', async () => {
    expectInvalidToken(await callApi(cardVaultToken));
  });

  it('a user token or vaulting-app token used as a refresh token', async () => {
    for (const token of [login.token, cardVaultToken]) {
      const response = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${token}` } });
      expectInvalidToken(response);
    }
  });

  it('a refresh token used to revoke refresh tokens', async () => {
    const response = await t.app.inject({ method: 'DELETE', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${login.refresh_token}` } });
    expectInvalidToken(response);
  });

  it('a forged refresh token signed correctly but never issued', async () => {
    const forged = await signJwt(t.config.secrets.jwtSecret, { userId: site.userId, kind: 'refresh' });
    const response = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${forged}` } });
    expectInvalidToken(response);
  });

  it('a user token for a site the user is not a member of is 404, not 403', async () => {
    const other = await createSite(t.db);
    const response = await t.app.inject({ url: `/${other.path}/api-tokens`, headers: { authorization: `Bearer ${login.token}` } });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('rest_post_invalid_id');
  });

  it("a deleted user's unexpired token, on its own site, another site and no site", async () => {
    const member = await createSite(t.db);
    const other = await createSite(t.db);
    const token = await signJwt(t.config.secrets.jwtSecret, { userId: member.userId, kind: 'user' }, new Date(Date.now() + 2_000));
    const call = (path: string, method: 'GET' | 'POST' = 'GET') =>
      t.app.inject({ method, url: `/${path}/site-json/vendor/v2/bookings`, headers: { authorization: `Bearer ${token}` }, ...(method === 'POST' ? { payload: {} } : {}) });
    expect((await call(member.path)).statusCode).toBe(200);
    await t.db.query('DELETE FROM users WHERE id = $1', [member.userId]);
    for (const path of [member.path, other.path, 'no-such-site']) {
      expectInvalidToken(await call(path));
      expectInvalidToken(await call(path, 'POST'));
    }
  });

  it("a token issued before the user's password change is 401 on a site that is not the user's too", async () => {
    const member = await createSite(t.db);
    const other = await createSite(t.db);
    await t.db.query("UPDATE users SET password_changed_at = now() - interval '1 hour' WHERE id = $1", [member.userId]);
    const earlier = await signJwt(t.config.secrets.jwtSecret, { userId: member.userId, kind: 'user' }, new Date(Date.now() - 60_000));
    await setPassword(t.db, member.userId, 'a-completely-new-password');
    for (const path of [other.path, 'no-such-site']) {
      expectInvalidToken(await t.app.inject({ url: `/${path}/api-tokens`, headers: { authorization: `Bearer ${earlier}` } }));
    }
  });

  it("a live user's token tells another site that exists from one that does not by nothing", async () => {
    const other = await createSite(t.db);
    const answers = await Promise.all(
      [other.path, 'no-such-site', 'de\u0000mo'].map((path) => t.app.inject({ url: `/${encodeURIComponent(path)}/site-json/vendor/v2/bookings`, headers: { authorization: `Bearer ${login.token}` } })),
    );
    for (const answer of answers) {
      expect(answer.statusCode).toBe(404);
      expect(answer.json()).toEqual({ code: 'rest_post_invalid_id', message: 'Invalid site: the site path at the start of the URL is not one this credential belongs to.', data: { status: 404 } });
    }
  });
});
