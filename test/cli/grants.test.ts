import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { cli } from './helpers.js';

let t: TestContext;
let url: string;
let from: SiteFixture;
let to: SiteFixture;
beforeAll(async () => {
  t = await createTestContext();
  url = t.config.databaseUrl!;
  from = await createSite(t.db);
  to = await createSite(t.db);
});
afterAll(async () => t.close());

describe('grant allocate / revoke / list', () => {
  it('grants, lists and revokes an allocation grant between two sites named by path', async () => {
    const granted = await cli(url, ['grant', 'allocate', '--from-site', from.path, '--to-site', to.path]);
    expect(granted.code).toBe(0);
    expect(granted.json).toEqual({ from_site: from.path, to_site: to.path, granted: true, created: true });
    expect((await cli(url, ['grant', 'allocate', '--from-site', from.path, '--to-site', to.path])).json.created).toBe(false);
    const listed = await cli(url, ['grant', 'list']);
    expect(listed.json).toEqual([expect.objectContaining({ from_site: from.path, to_site: to.path })]);
    const revoked = await cli(url, ['grant', 'revoke', '--from-site', from.path, '--to-site', to.path]);
    expect(revoked.json).toEqual({ from_site: from.path, to_site: to.path, revoked: true });
    expect((await cli(url, ['grant', 'list'])).json).toEqual([]);
  });

  it('refuses an unknown site path and a revoke with no grant, changing nothing', async () => {
    for (const args of [['--from-site', 'no-such-site', '--to-site', to.path], ['--from-site', from.path, '--to-site', 'no-such-site']]) {
      const refused = await cli(url, ['grant', 'allocate', ...args]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('no site with path no-such-site');
    }
    const revoke = await cli(url, ['grant', 'revoke', '--from-site', from.path, '--to-site', to.path]);
    expect(revoke.code).not.toBe(0);
    expect(revoke.stderr).toContain(`${from.path} holds no grant to allocate to ${to.path}`);
    expect((await cli(url, ['grant', 'list'])).json).toEqual([]);
  });
});
