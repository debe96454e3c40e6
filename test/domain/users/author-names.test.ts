// AuthorNameMemory (GET booking's authors' names): a name serves only the epoch it was read at,
// and the memory holds at most its bound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorNameMemory } from '../../../src/domain/users/author-names.js';
import { createTestContext, type TestContext } from '../../support/context.js';
import { createSite } from '../../support/fixtures.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => {
  await t?.close();
});

const epoch = async () => (await t.db.one<{ epoch: string }>('SELECT epoch::text AS epoch FROM credential_epoch')).epoch;

describe('AuthorNameMemory', () => {
  it('serves names read at the epoch asked for, and no other', async () => {
    const site = await createSite(t.db);
    const memory = new AuthorNameMemory();
    const read = await memory.read(t.db, site.userId);
    expect(read).toMatchObject({ author_username: site.username });
    const now = await epoch();
    expect(memory.known(site.userId, now)).toMatchObject({ author_username: site.username });
    expect(memory.known(site.userId, String(BigInt(now) + 1n))).toBeUndefined();
  });

  it('forgets the oldest author past its bound', async () => {
    const sites = await Promise.all([createSite(t.db), createSite(t.db), createSite(t.db)]);
    const memory = new AuthorNameMemory(2);
    for (const site of sites) await memory.read(t.db, site.userId);
    const now = await epoch();
    expect(sites.map((site) => memory.known(site.userId, now) !== undefined)).toEqual([false, true, true]);
  });
});
