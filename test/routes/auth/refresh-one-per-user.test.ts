import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createTestContext, type TestContext } from '../../support/context.js';
import { addUser, createSite, type SiteFixture } from '../../support/fixtures.js';
import { refreshTokenOfLogin, verifyRefreshToken } from '../../../src/domain/users/refresh-tokens.js';
import { authPath, postToken } from './helpers.js';

// The spec ("Authentication" 4, Limits): every authentication response includes the refresh
// token, which "may be kept indefinitely"; DELETE token/refresh rotates it and "a new refresh token
// is then issued at the next authentication". So a user has one refresh token, the same at every
// login until it is rotated (or the password changes), and no number of logins ends it.
let t: TestContext;
let site: SiteFixture;
beforeAll(async () => {
  t = await createTestContext({ poolSize: 8 });
  site = await createSite(t.db);
});
afterAll(async () => t.close());

const logIn = async (username = site.username, password = site.password): Promise<string> => {
  const response = await postToken(t, site.path, { username, password });
  expect(response.statusCode).toBe(200);
  return response.json().refresh_token;
};
const refresh = async (token: string) =>
  (await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${token}` } })).statusCode;

it('returns the same refresh token at every login until DELETE token/refresh rotates it', async () => {
  const first = await logIn();
  expect(await logIn()).toBe(first);
  expect(await logIn()).toBe(first);
  expect(await refresh(first)).toBe(200);
  const login = await postToken(t, site.path, { username: site.username, password: site.password });
  const deleted = await t.app.inject({ method: 'DELETE', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${login.json().token}` } });
  expect(deleted.json()).toEqual({ deleted: true });
  expect(await refresh(first)).toBe(401);
  const rotated = await logIn();
  expect(rotated).not.toBe(first);
  expect(await logIn()).toBe(rotated);
  expect(await refresh(rotated)).toBe(200);
});

it('keeps a refresh token kept and never used valid through any number of logins', async () => {
  const kept = await logIn();
  for (let login = 0; login < 25; login++) await logIn();
  expect(await refresh(kept)).toBe(200);
});

it('gives concurrent first logins of a user one and the same refresh token', async () => {
  const user = await addUser(t.db, site.siteId, { role: 'member' });
  const tokens = await Promise.all(Array.from({ length: 5 }, () => logIn(user.username, user.password)));
  expect(new Set(tokens).size).toBe(1);
  expect(await refresh(tokens[0]!)).toBe(200);
});

it('answers a login after JWT_SECRET was replaced with a refresh token that works under the new secret', async () => {
  const user = await addUser(t.db, site.siteId, { role: 'member' });
  const before = await logIn(user.username, user.password);
  const { password_stamp: passwordStamp } = await t.db.one<{ password_stamp: string }>('SELECT password_changed_at::text AS password_stamp FROM users WHERE id = $1', [user.userId]);
  const replaced = new Uint8Array(randomBytes(32));
  const after = await refreshTokenOfLogin(t.db, { jwtSecret: replaced, userId: user.userId, passwordStamp, now: new Date() });
  expect(after).not.toBe(before);
  expect(await verifyRefreshToken(t.db, { jwtSecret: replaced, token: after, now: new Date() })).toMatchObject({ userId: user.userId });
  expect(await refreshTokenOfLogin(t.db, { jwtSecret: replaced, userId: user.userId, passwordStamp, now: new Date() })).toBe(after);
});
