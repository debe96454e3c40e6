import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { statisticsSayEmpty } from '../support/statistics.js';
import { createSite, insertChannel } from '../emails/support/fixtures.js';
import { countLoginAttempt } from '../../src/domain/users/lockout.js';
import { claimModalAuthSession } from '../../src/domain/hosted/modal-auth-uses.js';
import { limits } from '../../src/limits.js';

// The bounded clean-ups that run on a request's path (src/storage/batches.ts): each removes one
// batch, never the whole backlog, whatever the planner guesses from the table's statistics.
let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t?.close());

const backlog = 150;

describe('clean-ups on the request path take one batch', () => {
  it('a failed login removes limits.loginFailuresPruneBatch of the counts that no longer matter', async () => {
    const now = new Date();
    const old = new Date(now.getTime() - 2 * limits.loginLockoutMinutes * 60_000);
    await t.db.query(`INSERT INTO login_failures (username_key, failures, last_failed_at) SELECT 'old-' || g, 1, $1 FROM generate_series(1, $2) g`, [old, backlog]);
    await statisticsSayEmpty(t.db, 'login_failures');
    expect(await countLoginAttempt(t.db, 'someone@example.com', now)).toBe(1);
    const [left] = await t.db.query<{ count: number }>(`SELECT count(*)::int AS count FROM login_failures WHERE username_key LIKE 'old-%'`);
    expect(left!.count).toBe(backlog - limits.loginFailuresPruneBatch);
  });

  it('a modal session removes limits.modalAuthUsesPruneBatch of the expired auth-string records', async () => {
    const now = new Date();
    const channelId = await insertChannel(t.db, await createSite(t.db));
    await t.db.query(
      `INSERT INTO modal_auth_uses (auth_hash, channel_id, expires_at) SELECT 'expired-' || g, $1, $2 FROM generate_series(1, $3) g`,
      [channelId, new Date(now.getTime() - 60_000), backlog],
    );
    await statisticsSayEmpty(t.db, 'modal_auth_uses');
    const id = await t.db.transaction((tx) => claimModalAuthSession(tx, { auth: 'fresh-auth-string', channelId, signedAt: now, createsDraft: false }, now));
    expect(id).toEqual(expect.any(Number));
    const [left] = await t.db.query<{ count: number }>(`SELECT count(*)::int AS count FROM modal_auth_uses WHERE auth_hash LIKE 'expired-%'`);
    expect(left!.count).toBe(backlog - limits.modalAuthUsesPruneBatch);
  });
});
