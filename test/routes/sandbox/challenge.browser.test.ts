import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { buildApp, type App } from '../../../src/app.js';
import { createAppContext } from '../../../src/context.js';
import { createTestContext, type TestContext } from '../../support/context.js';
import { chromiumPath } from '../../../scripts/chromium.mjs';

let t: TestContext;
let app: App;
let origin: string;
let browser: Browser;
beforeAll(async () => {
  t = await createTestContext();
  // A listening server whose BASE_URL is its own address, so challenge URLs work in a browser.
  app = await buildApp({ context: t.context, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await t.close();
});

describe('sandbox 3DS challenge in Chromium', () => {
  it('renders with its CSP (no violations), and "Authenticate" lands on the return URL with the payment approved', async () => {
    const connector = createAppContext({ ...t.config, baseUrl: origin }, t.db).connector;
    const reference = randomUUID();
    const returnUrl = `${origin}/healthz?from=3ds`;
    const outcome = await connector.authorise({
      reference, amount: 4_200, currency: 'GBP', capture: true, mode: 'test', threeDs: { returnUrl, merchantName: 'Sunny Tours' }, merchantInitiated: false,
      card: { pan: '4200000000000042', expiryMonth: 12, expiryYear: 2040, cvv: '123' },
    });
    if (outcome.kind !== 'challenge') throw new Error('expected a challenge');
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(outcome.challengeUrl);
    await expect(page.getByRole('button', { name: 'Authenticate' }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Fail' }).isVisible()).resolves.toBe(true);
    expect(await page.textContent('main')).toContain('£42.00');
    // The nonce'd stylesheet applied: the Authenticate button is green.
    expect(await page.getByRole('button', { name: 'Authenticate' }).evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(26, 127, 55)');
    await Promise.all([page.waitForURL(returnUrl), page.getByRole('button', { name: 'Authenticate' }).click()]);
    expect(violations).toEqual([]);
    expect(await connector.lookup(reference)).toMatchObject({ kind: 'approved' });
    await page.close();
  });
});
