import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../support/context.js';
import { createSite, type SiteFixture } from '../../support/fixtures.js';
import { raceOnRow } from '../../support/lock-race.js';
import { authPath, postToken } from './helpers.js';

// A password change deletes the user's refresh tokens. A login that had checked the old password
// and inserted its token just after that delete kept a refresh token for the old password, with
// no expiry. The race is made certain here: the user's row is locked while the login runs (its
// token's insert waits on it), and the change is made, as setPassword makes it, before the lock goes.
let t: TestContext;
let site: SiteFixture;
beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db);
});
afterAll(async () => t.close());

describe('a login racing a password change', () => {
  it('gets a refresh token that never works: it was issued for the old password', async () => {
    // The change as setPassword makes it: the new password's moment, the user's refresh tokens gone.
    const answer = await raceOnRow(t.db, {
      table: 'users', id: site.userId, request: () => postToken(t, site.path, { username: site.username, password: site.password }),
      change: { sql: `WITH changed AS (UPDATE users SET password_changed_at = now() WHERE id = $1) DELETE FROM refresh_tokens WHERE user_id = $1`, values: [site.userId] },
    });
    expect(answer.statusCode).toBe(200);
    const refreshed = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${answer.json().refresh_token}` } });
    expect(refreshed.statusCode).toBe(401);
    expect(refreshed.json()).toMatchObject({ code: 'jwt_auth_invalid_token' });
    // A login after the change gets a refresh token that works.
    const after = await postToken(t, site.path, { username: site.username, password: site.password });
    const renewed = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${after.json().refresh_token}` } });
    expect(renewed.statusCode).toBe(200);
  });
});
