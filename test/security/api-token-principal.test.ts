// API token authentication reads the principal stored on the token row (migration 014), kept
// equal to its site, user and membership by triggers: every change must show on the next request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { addUser, type SiteFixture } from '../support/fixtures.js';
import { api, expectError, expectStatus, newSite, type Site } from '../conformance/support.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t?.close());

const joinedPrincipalSql = `SELECT t.id, s.path AS site_path, s.name AS site_name, u.username, u.is_platform_admin, m.role, m.read_only
  FROM api_tokens t JOIN sites s ON s.id = t.site_id JOIN users u ON u.id = t.user_id
  LEFT JOIN memberships m ON m.site_id = t.site_id AND m.user_id = t.user_id ORDER BY t.id`;
const storedPrincipalSql = 'SELECT id, site_path, site_name, username, is_platform_admin, role, read_only FROM api_tokens ORDER BY id';

async function expectStoredEqualsJoined(): Promise<void> {
  expect(await t.db.query(storedPrincipalSql)).toEqual(await t.db.query(joinedPrincipalSql));
}

const listChannels = (site: Site) => api(t, site, 'GET', 'channels');
const createChannel = (site: Site) => api(t, site, 'POST', 'channels', { name: 'Principal channel', currencies: 'USD' });

describe('API token principal (stored on the token row)', () => {
  let site: SiteFixture;
  beforeAll(async () => {
    site = await newSite(t);
  });

  it('a removed membership revokes the token at once (401), and a new membership does not bring it back', async () => {
    const leaver = await addUser(t.db, site.siteId, { role: 'member_admin' });
    const asLeaver = { ...site, headers: leaver.headers };
    expectStatus(await listChannels(asLeaver), 200);
    await t.db.query('DELETE FROM memberships WHERE site_id = $1 AND user_id = $2', [site.siteId, leaver.userId]);
    expectError(await listChannels(asLeaver), 401);
    await t.db.query("INSERT INTO memberships (site_id, user_id, role, read_only) VALUES ($1, $2, 'member_admin', false)", [site.siteId, leaver.userId]);
    expectError(await listChannels(asLeaver), 401);
    await expectStoredEqualsJoined();
  });

  it('read-only and role changes apply to the next request', async () => {
    await t.db.query('UPDATE memberships SET read_only = true WHERE site_id = $1 AND user_id = $2', [site.siteId, site.userId]);
    expectError(await createChannel(site), 403);
    expectStatus(await listChannels(site), 200);
    await t.db.query("UPDATE memberships SET read_only = false, role = 'member' WHERE site_id = $1 AND user_id = $2", [site.siteId, site.userId]);
    expectError(await createChannel(site), 403);
    await t.db.query("UPDATE memberships SET role = 'member_admin' WHERE site_id = $1 AND user_id = $2", [site.siteId, site.userId]);
    expectStatus(await createChannel(site), 201);
    await expectStoredEqualsJoined();
  });

  it('a renamed site answers under its new path only', async () => {
    const newPath = `${site.path}-renamed`;
    await t.db.query("UPDATE sites SET path = $2, name = 'Renamed' WHERE id = $1", [site.siteId, newPath]);
    expectError(await listChannels(site), 404);
    expectStatus(await listChannels({ ...site, path: newPath }), 200);
    await expectStoredEqualsJoined();
    await t.db.query('UPDATE sites SET path = $2 WHERE id = $1', [site.siteId, site.path]);
    expectStatus(await listChannels(site), 200);
  });

  it('a token created after its membership, and user changes, are copied', async () => {
    const other = await newSite(t);
    // A second member: the fixture inserts the membership, then the token.
    const member = await addUser(t.db, other.siteId, { role: 'member' });
    expectStatus(await listChannels({ path: other.path, headers: member.headers }), 200);
    expectError(await createChannel({ path: other.path, headers: member.headers }), 403);
    await t.db.query("UPDATE users SET username = username || '-renamed', is_platform_admin = true WHERE id = $1", [member.userId]);
    await expectStoredEqualsJoined();
    // A token whose membership does not exist yet (inserted first) starts without a role.
    const user = await t.db.one<{ id: number }>("INSERT INTO users (username, email, display_name, password_hash) VALUES ('principal-late', 'late@example.com', 'Late', 'x') RETURNING id");
    await t.db.query("INSERT INTO api_tokens (site_id, user_id, name, token_hash) VALUES ($1, $2, 'late', 'principal-late-hash')", [other.siteId, user.id]);
    expect(await t.db.one('SELECT role FROM api_tokens WHERE token_hash = $1', ['principal-late-hash'])).toEqual({ role: null });
    await t.db.query("INSERT INTO memberships (site_id, user_id, role) VALUES ($1, $2, 'member')", [other.siteId, user.id]);
    await expectStoredEqualsJoined();
    // Deleting the user deletes its memberships and tokens (cascades) without a trigger error.
    await t.db.query('DELETE FROM users WHERE id = $1', [user.id]);
    await expectStoredEqualsJoined();
  });
});
