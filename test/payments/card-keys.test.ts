import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createAppContext, type AppContext } from '../../src/context.js';
import { createVault, rotateCardKeys } from '../../src/domain/vault/index.js';
import { testEnv, type TestContext } from '../support/context.js';
import { bookingRow, createBooking, createShop, paymentsContext, post, type Shop } from './support.js';

// docs/vault.md "Key rotation": servers restart with the new key first in CARD_KEYS, then
// `keys rotate` runs. Run before a server restarted, the rotation re-wraps cards under a key that
// server does not have; so does dropping an old key while a card is still wrapped under it. Such
// a server's charges of those cards were recorded as failed, "vault the card again" (and mailed
// as failures), though the card is intact: the server's configuration is what is wrong.
const logLines: string[] = [];
let t: TestContext;
let shop: Shop;
let stale: App;
let staleContext: AppContext;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  // A server still running with the keys the suite started with (test1 active, test0).
  const config = loadConfig({ ...testEnv, DATABASE_URL: t.config.databaseUrl!, LOG_LEVEL: 'error' });
  staleContext = createAppContext(config, t.db);
  stale = await buildApp({ context: staleContext, logStream: { write: (line: string) => void logLines.push(line) } });
  await stale.ready();
});
afterAll(async () => {
  await stale?.close();
  await staleContext?.close();
  await t?.close();
});

describe('a charge of a card wrapped under a key this server lacks', () => {
  it('is refused with 500, nothing written and the missing key logged; the server with the key charges it', async () => {
    const vault = await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: 'USD', total: 0, token: 'tok_visa' });
    expect(vault.json().status).toBe('complete');
    const rotated = loadConfig({ ...testEnv, DATABASE_URL: t.config.databaseUrl!, CARD_KEYS: `rot2:${randomBytes(32).toString('base64')},${testEnv.CARD_KEYS}` });
    expect(await rotateCardKeys(t.db, createVault(rotated.secrets, () => new Date()).keys)).toMatchObject({ activeKeyId: 'rot2', failed: [] });

    const booking = await createBooking(t, shop, { total: 1000 });
    const body = { transaction_types: 'retained_purchase', channels: shop.channelId, currencies: 'USD', total: 1000, linked_id: vault.json().id, bookings: [{ id: booking, currencies: 'USD', total: 1000 }] };
    const refused = await stale.inject({ method: 'POST', url: `${shop.base}/transactions`, headers: shop.site.headers, payload: body });
    expect(refused.statusCode).toBe(500);
    expect(refused.json()).toMatchObject({ code: 'rest_internal_error', data: { status: 500 } });
    expect(refused.body).not.toContain('rot2');
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', transaction_ids: [] });
    expect((await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM transactions WHERE site_id = $1', [shop.site.siteId])).count).toBe(1);
    expect(logLines.join('\n')).toContain('rot2');

    // The server restarted with the rotated keys charges it.
    const restartedContext = createAppContext(rotated, t.db);
    const restarted = await buildApp({ context: restartedContext, logger: false });
    try {
      const paid = await restarted.inject({ method: 'POST', url: `${shop.base}/transactions`, headers: shop.site.headers, payload: body });
      expect(paid.statusCode).toBe(201);
      expect(paid.json().status).toBe('complete');
    } finally {
      await restarted.close();
      await restartedContext.close();
    }
  });
});
