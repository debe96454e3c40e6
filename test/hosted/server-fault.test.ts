import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createAppContext, type AppContext } from '../../src/context.js';
import { createTestContext, testEnv, type TestContext } from '../support/context.js';
import { createSite, pageSessionOf, type SiteFixture } from '../support/fixtures.js';
import { buildWebBundles } from '../e2e/support.js';

// A server fault is not the payer's attempt: a payment request page paying through a server whose
// CARD_KEYS lacks the key its card was wrapped under is refused with 500 before the bank is asked
// (docs/vault.md "Key rotation"). Each such refusal used one of the page's three attempts, so after
// three the payer was told no further attempts are possible, though no bank ever saw the card.
let t: TestContext;
let site: SiteFixture;
let channel: number;
let stale: App;
let staleContext: AppContext;
const year = new Date().getUTCFullYear() + 3;

beforeAll(async () => {
  await buildWebBundles();
  t = await createTestContext();
  site = await createSite(t.db);
  channel = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Tours', currencies: 'USD' } })).json().id;
  // A server started without the key the suite's server wraps cards under (test1).
  const keys = `rot9:${randomBytes(32).toString('base64')}`;
  staleContext = createAppContext(loadConfig({ ...testEnv, DATABASE_URL: t.config.databaseUrl!, CARD_KEYS: keys }), t.db);
  stale = await buildApp({ context: staleContext, logger: false });
  await stale.ready();
});
afterAll(async () => {
  await stale?.close();
  await staleContext?.close();
  await t?.close();
});

/** A new booking's payment request page: its session headers and a capture of `number` on it. */
async function openPayPage(total: number) {
  const booking = (await t.app.inject({
    method: 'POST', url: `/${site.path}/site-json/vendor/v2/bookings`, headers: site.headers,
    payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total, currencies: 'USD', countries: 'GB', channels: channel, payment_request_url: true },
  })).json();
  const session = pageSessionOf((await t.app.inject({ url: new URL(booking._links.self[0].payment_request).pathname })).body)!;
  const headers = { authorization: `Bearer ${session}` };
  const capture = async (number = '4111111111111111') => (await t.app.inject({
    method: 'POST', url: `/${site.path}/site-json/vendor/v2/cards`, headers,
    payload: { channels: channel, card_number: number, expiry_month: '04', expiry_year: year, cvv: '123' },
  })).json().token as string;
  return { headers, capture };
}

describe('a payment request page answered with a server fault', () => {
  it('keeps all its attempts: the fault used none, and the payment goes through once a server has the key', async () => {
    const { headers, capture } = await openPayPage(4_200);
    for (let fault = 0; fault < 3; fault++) {
      const refused = await stale.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: await capture() } });
      expect(refused.statusCode).toBe(500);
      expect(refused.json()).toMatchObject({ code: 'rest_internal_error', data: { status: 500 } });
    }
    // The payer tries again on a server with the key: three attempts are still theirs.
    const paid = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: await capture() } });
    expect(paid.statusCode).toBe(201);
    expect(paid.json()).toMatchObject({ outcome: 'complete', transaction: { status: 'complete', total: 4_200 } });
  });

  it('after a fault, a decline says the page has two attempts left, not one', async () => {
    const { headers, capture } = await openPayPage(4_300);
    expect((await stale.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: await capture() } })).statusCode).toBe(500);
    const declined = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers, payload: { card_token: await capture('4000000000000002') } });
    expect(declined.json()).toMatchObject({ outcome: 'failed', attempts_left: 2 });
  });
});
