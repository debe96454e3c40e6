import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestContext } from '../support/context.js';
import { post, shopContext, type Shop } from '../payments/support.js';

// A remembered principal is confirmed by the payment's own look-up. A batch of payments rolled
// back after that look-up (a database error, a batch-mate refused under locks) is retried member
// by member; a member confirmed in the failed batch was no longer pending at its retry, so a
// credential revoked in between went unchecked and the payment was made. Here the batch fails
// right after its look-up, once the token has been deleted (as DELETE api-tokens commits it).
const hooks = vi.hoisted(() => ({ beforeInsert: null as null | ((members: readonly { actor: { idempotency?: { key: string } } }[]) => Promise<void>) }));
vi.mock('../../src/domain/transactions/attempt.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/domain/transactions/attempt.js')>();
  return {
    ...actual,
    insertAttempts: async (...args: Parameters<typeof actual.insertAttempts>) => {
      await hooks.beforeInsert?.(args[2]);
      return actual.insertAttempts(...args);
    },
  };
});

let t: TestContext;
let shop: Shop;
beforeAll(async () => {
  ({ t, shop } = await shopContext());
});
afterAll(async () => t.close());

const vault = (key: string) => post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: shop.currency, total: 0, token: 'tok_visa' }, { 'idempotency-key': key });

describe('a credential revoked while its payment batch is rolled back and retried alone', () => {
  it('refuses the retried members (401) and writes nothing for them', async () => {
    expect((await vault('remembered')).statusCode).toBe(201);
    const failedBatch: string[] = [];
    hooks.beforeInsert = async (members) => {
      if (failedBatch.length > 0 || members.length < 2) return;
      failedBatch.push(...members.map((member) => member.actor.idempotency!.key));
      await t.db.query('DELETE FROM api_tokens WHERE user_id = $1', [shop.site.userId]);
      throw new Error('connection lost (test)');
    };
    try {
      const keys = Array.from({ length: 12 }, (_, index) => `concurrent-${index}`);
      const answers = new Map((await Promise.all(keys.map(async (key) => [key, (await vault(key)).statusCode] as const))));
      expect(failedBatch.length).toBeGreaterThanOrEqual(2);
      expect(failedBatch.map((key) => answers.get(key))).toEqual(failedBatch.map(() => 401));
      const written = await t.db.query('SELECT 1 FROM idempotency_keys WHERE site_id = $1 AND key = ANY($2) AND transaction_id IS NOT NULL', [shop.site.siteId, failedBatch]);
      expect(written).toEqual([]);
    } finally {
      hooks.beforeInsert = null;
    }
  });
});
