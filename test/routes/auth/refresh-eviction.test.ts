import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../support/context.js';
import { createSite, type SiteFixture } from '../../support/fixtures.js';
import { limits } from '../../../src/limits.js';
import { authPath, postToken } from './helpers.js';

// A clock the test moves: each login and refresh a second after the one before.
let clock = new Date('2026-11-21T10:00:00Z');
const tick = () => (clock = new Date(clock.getTime() + 1000));
let t: TestContext;
let site: SiteFixture;
beforeAll(async () => {
  t = await createTestContext({ now: () => clock });
  site = await createSite(t.db);
});
afterAll(async () => t.close());

const logIn = async (): Promise<string> => {
  tick();
  const response = await postToken(t, site.path, { username: site.username, password: site.password });
  expect(response.statusCode).toBe(200);
  return response.json().refresh_token;
};
const refresh = async (token: string) => {
  tick();
  return (await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${token}` } })).statusCode;
};

it('keeps a refresh token in use when logins elsewhere pass the per-user bound: the unused ones go first', async () => {
  // The integration's token, kept and used (spec: "may be kept indefinitely ... valid until rotated").
  const kept = await logIn();
  const unused = await logIn();
  for (let login = 0; login < limits.refreshTokensPerUserMax; login++) {
    await logIn();
    expect(await refresh(kept)).toBe(200);
  }
  expect(await refresh(kept)).toBe(200);
  // The bound still holds: the token issued and never used since was dropped.
  expect(await refresh(unused)).toBe(401);
  const { count } = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM refresh_tokens WHERE user_id = $1', [site.userId]);
  expect(count).toBe(limits.refreshTokensPerUserMax);
});
