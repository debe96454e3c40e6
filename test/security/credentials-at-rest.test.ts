import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';

/**
 * Credentials are shown once and stored only as hashes (decisions.md): no API token, user JWT,
 * refresh token or vaulting-app JWT may appear in clear in any table after the flows that issue
 * and use them.
 */
let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

async function everyRowAsText(): Promise<string[]> {
  const tables = await t.db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
  const rows: string[] = [];
  for (const { table_name: table } of tables) {
    for (const row of await t.db.query<{ row: string }>(`SELECT to_jsonb(x)::text AS row FROM "${table}" x`)) rows.push(`${table}: ${row.row}`);
  }
  return rows;
}

async function issueAndUseCredentials(headers: Record<string, string>): Promise<string[]> {
  const site: SiteFixture = await createSite(t.db);
  const auth = (endpoint: string) => `/${site.path}/site-json/jwt-auth/v1/${endpoint}`;
  const created = await t.app.inject({ method: 'POST', url: `/${site.path}/api-tokens`, headers: { ...site.headers, ...headers }, payload: { name: 'ci' } });
  expect(created.statusCode).toBe(201);
  const apiToken: string = created.json().token;
  expect((await t.app.inject({ url: `/${site.path}/api-tokens`, headers: { authorization: `Bearer ${apiToken}` } })).statusCode).toBe(200);
  const login = await t.app.inject({ method: 'POST', url: auth('token'), headers, payload: { username: site.username, password: site.password } });
  expect(login.statusCode).toBe(200);
  const { token, refresh_token: refreshToken } = login.json();
  expect((await t.app.inject({ method: 'POST', url: auth('token/refresh'), headers: { ...headers, authorization: `Bearer ${refreshToken}` } })).statusCode).toBe(200);
  const vault = await t.app.inject({ method: 'POST', url: auth('token/cardvaultuser'), headers, payload: { username: site.username, password: site.password } });
  expect(vault.statusCode).toBe(200);
  return [apiToken, token, refreshToken, vault.json().token, site.password];
}

describe('credentials at rest', () => {
  it('no token or password in clear in any table', async () => {
    const secrets = await issueAndUseCredentials({});
    const rows = await everyRowAsText();
    expect(rows.length).toBeGreaterThan(3);
    for (const secret of secrets) expect(rows.filter((row) => row.includes(secret))).toEqual([]);
  });

  // POST api-tokens opts out of idempotency (config.idempotencyExempt): its answer, the new
  // token, is never stored; the token endpoints have no site, so they ignore the header too.
  it('no API token in clear when it was created with an Idempotency-Key', async () => {
    const secrets = await issueAndUseCredentials({ 'idempotency-key': 'create-ci-token-1' });
    const rows = await everyRowAsText();
    for (const secret of secrets) expect(rows.filter((row) => row.includes(secret))).toEqual([]);
  });

  it('POST api-tokens with an Idempotency-Key simply runs: no key kept, a retry runs again', async () => {
    const site: SiteFixture = await createSite(t.db);
    const headers = { ...site.headers, 'idempotency-key': 'create-ci-token-2' };
    const post = () => t.app.inject({ method: 'POST', url: `/${site.path}/api-tokens`, headers, payload: { name: 'ci' } });
    const first = await post();
    const second = await post();
    expect(first.statusCode).toBe(201);
    // Not a replay of the first answer: the route ran again (here it meets the per-user limit of
    // tokens, since the fixture holds one already).
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.body).not.toContain(first.json().token);
    expect(await t.db.query('SELECT id FROM api_tokens WHERE site_id = $1', [site.siteId])).toHaveLength(2);
    expect(await t.db.query('SELECT key FROM idempotency_keys WHERE site_id = $1', [site.siteId])).toEqual([]);
  });
});
