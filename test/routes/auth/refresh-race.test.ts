import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../support/context.js';
import { createSite, type SiteFixture } from '../../support/fixtures.js';
import { raceOnRow } from '../../support/lock-race.js';
import { checkCardVaultUser } from '../../../src/domain/hosted/card-vault-user.js';
import { authPath, postToken } from './helpers.js';

// A password change deletes the user's refresh tokens. A login that had checked the old password
// and inserted its token just after that delete kept a refresh token for the old password, with
// no expiry; its user JWT (and a cardvaultuser token issued the same way), issued after the
// change, worked for its 15 minutes, since the rule compared its iat with the change. The race is
// made certain here: the user's row is locked while the login runs (its
// token's insert waits on it), and the change is made, as setPassword makes it, before the lock goes.
let t: TestContext;
let site: SiteFixture;
beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db);
});
afterAll(async () => t.close());

/** The change as setPassword makes it: the new password's moment, the user's refresh tokens gone. */
const passwordChange = { sql: `WITH changed AS (UPDATE users SET password_changed_at = now() WHERE id = $1) DELETE FROM refresh_tokens WHERE user_id = $1`, values: [] as unknown[] };
const channelsWith = (token: string) => t.app.inject({ method: 'GET', url: `/${site.path}/site-json/vendor/v2/channels`, headers: { authorization: `Bearer ${token}` } });

/**
 * A login that reaches the user's row while the change holds it. The user has no refresh token
 * yet, as at a first login or after a rotation: the login inserts one, and its insert waits on the
 * row (a user with a token has it re-signed, and would finish before the change).
 */
async function loginRacingPasswordChange() {
  await t.db.query('DELETE FROM refresh_tokens WHERE user_id = $1', [site.userId]);
  return raceOnRow(t.db, {
    table: 'users', id: site.userId, request: () => postToken(t, site.path, { username: site.username, password: site.password }),
    change: { ...passwordChange, values: [site.userId] },
  });
}

describe('a login racing a password change', () => {
  it('gets a refresh token that never works: it was issued for the old password', async () => {
    const answer = await loginRacingPasswordChange();
    expect(answer.statusCode).toBe(200);
    const refreshed = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${answer.json().refresh_token}` } });
    expect(refreshed.statusCode).toBe(401);
    expect(refreshed.json()).toMatchObject({ code: 'jwt_auth_invalid_token' });
    // A login after the change gets a refresh token that works.
    const after = await postToken(t, site.path, { username: site.username, password: site.password });
    const renewed = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${after.json().refresh_token}` } });
    expect(renewed.statusCode).toBe(200);
  });

  it('gets a user JWT that the API refuses from the start, though it was issued after the change', async () => {
    const answer = await loginRacingPasswordChange();
    expect(answer.statusCode).toBe(200);
    const refused = await channelsWith(answer.json().token);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ code: 'jwt_auth_invalid_token' });
    // A login after the change gets one that works, and so does a JWT from its refresh token.
    const after = await postToken(t, site.path, { username: site.username, password: site.password });
    expect((await channelsWith(after.json().token)).statusCode).toBe(200);
    const refreshed = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${after.json().refresh_token}` } });
    expect((await channelsWith(refreshed.json().token)).statusCode).toBe(200);
  });

  it('a cardvaultuser token issued for the old password is refused once it changes, within the same second too', async () => {
    const answer = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/cardvaultuser'), payload: { username: site.username, password: site.password } });
    expect(answer.statusCode).toBe(200);
    const check = () => checkCardVaultUser(t.db, { jwtSecret: t.config.secrets.jwtSecret, token: answer.json().token, now: new Date() });
    expect(await check()).toMatchObject({ ok: true });
    // Right after the token: its iat and the change's second are (nearly always) the same.
    await t.db.query(passwordChange.sql, [site.userId]);
    expect(await check()).toEqual({ ok: false, reason: 'revoked' });
  });
});
