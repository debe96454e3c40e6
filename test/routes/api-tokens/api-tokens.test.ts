import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../support/context.js';
import { addUser, createSite, type SiteFixture } from '../../support/fixtures.js';
import { limits } from '../../../src/limits.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

const recordKeys = ['abilities', 'created_at', 'expires_at', 'id', 'last_used_at', 'name', 'tokenable_id', 'tokenable_type', 'updated_at'];
const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function tokens(site: SiteFixture, method: 'GET' | 'POST' | 'DELETE' = 'GET', payload?: object, suffix = '', headers = site.headers) {
  return t.app.inject({ method, url: `/${site.path}/api-tokens${suffix}`, headers, ...(payload ? { payload } : {}) });
}

function dayOffset(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

describe('GET api-tokens', () => {
  it('lists the caller’s tokens as API token records, never the token or its hash', async () => {
    const site = await createSite(t.db);
    const response = await tokens(site);
    expect(response.statusCode).toBe(200);
    const [record] = response.json();
    expect(Object.keys(record).sort()).toEqual(recordKeys);
    expect(record).toMatchObject({ tokenable_type: 'user', tokenable_id: site.userId, name: 'fixture', abilities: ['*'], expires_at: null });
    expect(record.created_at).toMatch(isoUtc);
    expect(record.updated_at).toMatch(isoUtc);
    const { token_hash } = await t.db.one<{ token_hash: string }>('SELECT token_hash FROM api_tokens WHERE id = $1', [record.id]);
    expect(response.body).not.toContain(site.token);
    expect(response.body).not.toContain(token_hash);
  });

  it('records last_used_at in ISO 8601 UTC once a token is used', async () => {
    const site = await createSite(t.db);
    await tokens(site);
    let lastUsed: string | null = null;
    // The stamp is written after the answer (off the hot path): wait for it, boundedly.
    for (let attempt = 0; attempt < 50 && !lastUsed; attempt++) {
      lastUsed = (await tokens(site)).json()[0].last_used_at;
      if (!lastUsed) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(lastUsed).toMatch(isoUtc);
  });

  it('shows only the caller’s own tokens', async () => {
    const site = await createSite(t.db);
    const colleague = await addUser(t.db, site.siteId, { role: 'member_admin' });
    const mine = (await tokens(site)).json();
    const theirs = (await tokens(site, 'GET', undefined, '', colleague.headers)).json();
    expect(mine).toHaveLength(1);
    expect(theirs).toHaveLength(1);
    expect(mine[0].id).not.toBe(theirs[0].id);
  });
});

describe('API tokens of a user in two sites', () => {
  it('are listed and deleted only in the site of the URL', async () => {
    const home = await createSite(t.db);
    const other = await createSite(t.db);
    await t.db.query("INSERT INTO memberships (site_id, user_id, role, read_only) VALUES ($1, $2, 'member_admin', false)", [other.siteId, home.userId]);
    const login = (await t.app.inject({ method: 'POST', url: `/${other.path}/site-json/jwt-auth/v1/token`, payload: { username: home.username, password: home.password } })).json();
    const inOther = { authorization: `Bearer ${login.token}` };
    const created = await tokens(other, 'POST', { name: 'other-site token' }, '', inOther);
    expect(created.statusCode).toBe(201);
    // Listed in its own site only: the home site's list (with the home token or the login) shows the home token alone.
    const names = async (site: SiteFixture, headers: { authorization: string }) => (await tokens(site, 'GET', undefined, '', headers)).json().map((record: { name: string }) => record.name);
    expect(await names(home, home.headers)).toEqual(['fixture']);
    expect(await names(home, inOther)).toEqual(['fixture']);
    expect(await names(other, inOther)).toEqual(['other-site token']);
    // Deleting every token in the home site leaves the other site's working.
    expect((await tokens(home, 'DELETE')).statusCode).toBe(200);
    expect((await tokens(other, 'GET', undefined, '', { authorization: `Bearer ${created.json().token}` })).statusCode).toBe(200);
  });
});

describe('POST api-tokens', () => {
  it('creates a token shown once that authenticates, up to the limit (expired ones count)', async () => {
    const site = await createSite(t.db);
    const created = await tokens(site, 'POST', { name: 'ci', expires_at: dayOffset(30) });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(Object.keys(body).sort()).toEqual(['expires_at', 'token']);
    expect(body.token).toMatch(/^tfat_[A-Za-z0-9_-]{43}$/);
    expect(body.expires_at).toBe(dayOffset(30));
    const withNew = await tokens(site, 'GET', undefined, '', { authorization: `Bearer ${body.token}` });
    expect(withNew.statusCode).toBe(200);
    expect(withNew.json().map((record: { name: string }) => record.name)).toEqual(['fixture', 'ci']);

    // Expire the first token: it still counts.
    await t.db.query("UPDATE api_tokens SET expires_at = current_date - 1 WHERE user_id = $1 AND name = 'fixture'", [site.userId]);
    const third = await tokens(site, 'POST', { name: 'one too many' }, '', { authorization: `Bearer ${body.token}` });
    expect(third.statusCode).toBe(400);
    expect(third.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { api_tokens: expect.any(String) } } });
    expect(third.json().message).toContain(`at most ${limits.apiTokensPerUserMax}`);
    expect((await t.db.query('SELECT 1 FROM api_tokens WHERE user_id = $1', [site.userId])).length).toBe(2);
  });

  it('refuses expires_at that is malformed, not a date or in the past; accepts today', async () => {
    const site = await createSite(t.db);
    for (const expires_at of ['2030/01/01', '2030-02-30', dayOffset(-1), '20300101', dayOffset(limits.apiTokenExpiryDaysMax + 2)]) {
      const response = await tokens(site, 'POST', { name: 'x', expires_at });
      expect(response.statusCode, expires_at).toBe(400);
      expect(response.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { expires_at: expect.any(String) } } });
    }
    // A date-time is told the format it needs, not the schema's length.
    const dateTime = await tokens(site, 'POST', { name: 'x', expires_at: `${dayOffset(1)}T00:00:00Z` });
    expect(dateTime.json().data.params).toEqual({ expires_at: 'must be a date formatted Y-m-d' });
    // A well-formed date naming no day was told the format it already had: now the day is named.
    const feb30 = await tokens(site, 'POST', { name: 'x', expires_at: '2027-02-30' });
    expect(feb30.json().data.params).toEqual({ expires_at: 'names a day that does not exist (2027-02 has 28 days)' });
    const today = await tokens(site, 'POST', { name: 'today', expires_at: dayOffset(0) });
    expect(today.statusCode).toBe(201);
    expect((await tokens(site, 'GET', undefined, '', { authorization: `Bearer ${today.json().token}` })).statusCode).toBe(200);
  });

  it('a token past its expires_at day no longer authenticates', async () => {
    const site = await createSite(t.db);
    await t.db.query('UPDATE api_tokens SET expires_at = current_date - 1 WHERE user_id = $1', [site.userId]);
    const response = await tokens(site);
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('jwt_auth_invalid_token');
  });

  it('requires a name', async () => {
    const site = await createSite(t.db);
    const response = await tokens(site, 'POST', {});
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'rest_missing_callback_param', data: { params: ['name'] } });
  });

  it('an API token that expires creates none that outlives it; a login creates any', async () => {
    const site = await createSite(t.db);
    await t.db.query('UPDATE api_tokens SET expires_at = $2::date WHERE user_id = $1', [site.userId, dayOffset(1)]);
    for (const body of [{ name: 'forever' }, { name: 'forever', expires_at: null }, { name: 'later', expires_at: dayOffset(2) }]) {
      const refused = await tokens(site, 'POST', body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(refused.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { expires_at: expect.stringContaining(dayOffset(1)) } } });
    }
    expect((await t.db.query('SELECT 1 FROM api_tokens WHERE user_id = $1', [site.userId])).length).toBe(1);
    const bounded = await tokens(site, 'POST', { name: 'bounded', expires_at: dayOffset(1) });
    expect(bounded.statusCode).toBe(201);
    expect(bounded.json().expires_at).toBe(dayOffset(1));
    await t.db.query("DELETE FROM api_tokens WHERE user_id = $1 AND name = 'bounded'", [site.userId]);
    // The user, logged in, may create a token without expiry, as ever.
    const login = await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token`, payload: { username: site.username, password: site.password } });
    const forever = await tokens(site, 'POST', { name: 'forever' }, '', { authorization: `Bearer ${login.json().token}` });
    expect(forever.statusCode).toBe(201);
    expect(forever.json().expires_at).toBeNull();
  });

  it('serialises concurrent creations so the limit holds', async () => {
    const site = await createSite(t.db);
    const answers = await Promise.all([1, 2, 3, 4].map((n) => tokens(site, 'POST', { name: `race ${n}` })));
    expect(answers.filter((answer) => answer.statusCode === 201)).toHaveLength(limits.apiTokensPerUserMax - 1);
    expect((await t.db.query('SELECT 1 FROM api_tokens WHERE user_id = $1', [site.userId])).length).toBe(limits.apiTokensPerUserMax);
  });
});

describe('DELETE api-tokens', () => {
  it('deletes one token of the caller', async () => {
    const site = await createSite(t.db);
    const created = (await tokens(site, 'POST', { name: 'temp' })).json();
    const id = (await tokens(site)).json().find((record: { name: string }) => record.name === 'temp').id;
    const response = await tokens(site, 'DELETE', undefined, `/${id}`);
    expect(response.statusCode).toBe(200);
    expect(Object.keys(response.json())).toEqual(['message']);
    expect((await tokens(site, 'GET', undefined, '', { authorization: `Bearer ${created.token}` })).statusCode).toBe(401);
    expect((await tokens(site, 'DELETE', undefined, `/${id}`)).statusCode).toBe(404);
  });

  it('cannot delete another user’s token (404)', async () => {
    const site = await createSite(t.db);
    const colleague = await addUser(t.db, site.siteId, { role: 'member_admin' });
    const theirId = (await tokens(site, 'GET', undefined, '', colleague.headers)).json()[0].id;
    const response = await tokens(site, 'DELETE', undefined, `/${theirId}`);
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('rest_post_invalid_id');
    expect((await tokens(site, 'GET', undefined, '', colleague.headers)).statusCode).toBe(200);
  });

  it('deletes all of the caller’s tokens and only theirs', async () => {
    const site = await createSite(t.db);
    const colleague = await addUser(t.db, site.siteId, { role: 'member_admin' });
    await tokens(site, 'POST', { name: 'second' });
    const response = await tokens(site, 'DELETE');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ message: expect.any(String) });
    expect((await t.db.query('SELECT 1 FROM api_tokens WHERE user_id = $1', [site.userId])).length).toBe(0);
    expect((await tokens(site)).statusCode).toBe(401);
    expect((await tokens(site, 'GET', undefined, '', colleague.headers)).json()).toHaveLength(1);
  });

  it('answers a malformed id as an unknown one (404 rest_post_invalid_id), as every item route does', async () => {
    const site = await createSite(t.db);
    for (const id of ['abc', '0', '-1', '9223372036854775808']) {
      expect((await tokens(site, 'DELETE', undefined, `/${id}`)).json(), id).toMatchObject({ code: 'rest_post_invalid_id', data: { status: 404 } });
    }
  });
});

describe('access rules', () => {
  it('needs a credential', async () => {
    const site = await createSite(t.db);
    const response = await tokens(site, 'GET', undefined, '', {} as never);
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('rest_not_logged_in');
    // Checked before the body and the parameters: a caller without one learns nothing of their rules.
    expect((await tokens(site, 'POST', {}, '', {} as never)).json()).toMatchObject({ code: 'rest_not_logged_in', data: { status: 401 } });
    expect((await tokens(site, 'POST', { name: 'x'.repeat(300) }, '', { authorization: 'Bearer tfat_revoked' } as never)).json()).toMatchObject({ code: 'jwt_auth_invalid_token', data: { status: 401 } });
    expect((await tokens(site, 'DELETE', undefined, `/${'9'.repeat(70)}`, {} as never)).json()).toMatchObject({ code: 'rest_not_logged_in', data: { status: 401 } });
  });

  it('is for member_admins: members get 403', async () => {
    const site = await createSite(t.db, { role: 'member' });
    expect((await tokens(site)).statusCode).toBe(403);
    const post = await tokens(site, 'POST', { name: 'x' });
    expect(post.statusCode).toBe(403);
    expect(post.json().code).toBe('rest_forbidden');
    // Before the body's rules too.
    expect((await tokens(site, 'POST', {})).json()).toMatchObject({ code: 'rest_forbidden', data: { status: 403 } });
  });

  it('read-only member_admins may list but not create or delete', async () => {
    const site = await createSite(t.db, { role: 'member_admin', readOnly: true });
    expect((await tokens(site)).statusCode).toBe(200);
    expect((await tokens(site, 'POST', { name: 'x' })).statusCode).toBe(403);
    expect((await tokens(site, 'DELETE')).statusCode).toBe(403);
    expect((await t.db.query('SELECT 1 FROM api_tokens WHERE user_id = $1', [site.userId])).length).toBe(1);
  });

  it('another site’s path is 404 rest_post_invalid_id', async () => {
    const site = await createSite(t.db);
    const other = await createSite(t.db);
    const response = await t.app.inject({ url: `/${other.path}/api-tokens`, headers: site.headers });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('rest_post_invalid_id');
  });
});
