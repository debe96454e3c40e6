import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, cardVaultToken, startE2E, type E2E, type Merchant } from '../e2e/support.js';

let e2e: E2E;
let merchant: Merchant;
const logs: string[] = [];

beforeAll(async () => {
  e2e = await startE2E();
  merchant = await createMerchant(e2e);
});
afterAll(async () => e2e?.close());

async function link(): Promise<string> {
  const response = await e2e.t.app.inject({
    method: 'POST', url: `/${merchant.site.path}/site-json/vendor/v2/bookings`, headers: merchant.site.headers,
    payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 45000, currencies: 'USD', countries: 'GB', channels: merchant.channelId, payment_request_url: true },
  });
  return (response.json() as any)._links.self[0].payment_request;
}

describe('card form submitted before/without the page script', () => {
  for (const mode of ['nojs', 'script-blocked'] as const) {
    it(`pay page: ${mode}`, async () => {
      const context = await e2e.browser.newContext({ javaScriptEnabled: mode !== 'nojs' });
      const page = await context.newPage();
      if (mode === 'script-blocked') await page.route('**/hosted/assets/pay.js', (route) => route.abort());
      await page.goto(await link());
      await page.fill('#card_number', '4111 1111 1111 1111');
      await page.fill('#expiry', '12/30');
      await page.fill('#cvv', '123');
      await Promise.all([page.waitForNavigation(), page.press('#cvv', 'Enter')]);
      console.log(mode, 'PAY URL AFTER SUBMIT:', page.url());
      const history = await page.evaluate(() => history.length).catch(() => 'n/a');
      console.log('history length', history);
      await context.close();
      expect(page.url()).toContain('card_number');
    });
  }

  it('vault app: script blocked', async () => {
    const token = await cardVaultToken(e2e, merchant);
    const context = await e2e.browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${e2e.baseUrl}/vault/1.8.0/?auth=${token}&channels=${merchant.channelId}&env=test`);
    await page.fill('#card_number', '4111 1111 1111 1111');
    await page.fill('#expiry', '12/30');
    await page.fill('#cvv', '123');
    await page.fill('#name', 'Ada');
    await Promise.all([page.waitForNavigation(), page.click('#submit')]);
    console.log('VAULT URL AFTER SUBMIT:', page.url());
    console.log('status text', (await page.textContent('body'))?.slice(0, 200));
    await context.close();
  });
});
