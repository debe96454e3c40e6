import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestContext, type TestContext } from '../support/context.js';
import { freePort } from '../../src/net.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { webEntries } from '../../web/entries.mjs';
import { chromiumPath } from '../../scripts/chromium.mjs';

/**
 * Browser tests: the app on a real port (BASE_URL is that origin, so 3DS challenge and redirect
 * URLs work), Debian's Chromium through playwright-core (one browser per test file), and a tiny
 * "integrator" server on another port for redirects and the modal's host page.
 */
export interface E2E {
  t: TestContext;
  baseUrl: string;
  browser: Browser;
  host: HostServer;
  close(): Promise<void>;
}

export interface HostServer {
  origin: string;
  /** Pages the integrator serves, by path. */
  pages: Map<string, string>;
  server: Server;
}

export async function buildWebBundles(): Promise<void> {
  await build({ bundle: true, platform: 'browser', format: 'iife', target: 'es2020', minify: true, logLevel: 'warning', entryPoints: webEntries, outdir: 'dist/web' });
}

async function startHost(): Promise<HostServer> {
  const pages = new Map<string, string>();
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://host');
    const body = pages.get(url.pathname) ?? `<!doctype html><title>integrator</title><p id="landed">${url.pathname}</p>`;
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  // (playwright gives each launch a new, empty profile directory of its own.)
  // "localhost" for the integrator: a different origin from the service's 127.0.0.1.
  return { origin: `http://localhost:${port}`, pages, server };
}

export async function startE2E(env: Record<string, string> = {}): Promise<E2E> {
  await buildWebBundles();
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const t = await createTestContext({ env: { BASE_URL: baseUrl, ...env } });
  await t.app.listen({ host: '127.0.0.1', port });
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const host = await startHost();
  return {
    t, baseUrl, browser, host,
    async close() {
      await browser.close();
      await new Promise<void>((resolve) => host.server.close(() => resolve()));
      await t.close();
    },
  };
}

export interface Merchant {
  site: SiteFixture;
  channelId: number;
  channelSecret: string;
  currency: string;
}

/** A site with a test channel created through the REST API (so it has a channel_secret). */
export async function createMerchant(e2e: E2E, options: { currency?: string; accountMode?: string } = {}): Promise<Merchant> {
  const site = await createSite(e2e.t.db);
  const currency = options.currency ?? 'USD';
  const response = await e2e.t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Tours', currencies: currency } });
  if (response.statusCode !== 201 && response.statusCode !== 200) throw new Error(`channel create failed: ${response.body}`);
  const channel = response.json() as { id: number; channel_secret: string };
  if (options.accountMode) await e2e.t.db.query('UPDATE channels SET account_mode = $2 WHERE id = $1', [channel.id, options.accountMode]);
  return { site, channelId: channel.id, channelSecret: channel.channel_secret, currency };
}

export async function cardVaultToken(e2e: E2E, merchant: Merchant): Promise<string> {
  const response = await e2e.t.app.inject({
    method: 'POST',
    url: `/${merchant.site.path}/site-json/jwt-auth/v1/token/cardvaultuser`,
    payload: { username: merchant.site.username, password: merchant.site.password },
  });
  if (response.statusCode !== 200) throw new Error(`cardvaultuser token failed: ${response.body}`);
  return (response.json() as { token: string }).token;
}

/** Types a card into the hosted card form (the fields every hosted page shares). */
export async function fillCard(page: Page, card: { number: string; expiry?: string; cvv?: string; name?: string }): Promise<void> {
  await page.fill('#card_number', card.number);
  await page.fill('#expiry', card.expiry ?? '12/30');
  await page.fill('#cvv', card.cvv ?? '123');
  if ((await page.locator('#name').count()) > 0 && (card.name !== undefined || (await page.inputValue('#name')) === '')) await page.fill('#name', card.name ?? 'Ada Lovelace');
}

/**
 * The page's first payment (`POST /hosted/payments`, a frame's too) reaches the service and is
 * made; its answer is lost on the way back, as when the connection drops. Later ones go through.
 */
export async function loseFirstPaymentAnswer(page: Page): Promise<void> {
  let lost = false;
  await page.route('**/hosted/payments', async (route) => {
    if (lost) return route.continue();
    lost = true;
    await route.fetch();
    await route.abort('internetdisconnected');
  });
}

/** The page at `pagePattern` gives up waiting for an answer after 1.5 s (its data says 45 s, the HTML is rewritten). */
export async function giveUpSooner(page: Page, pagePattern: string): Promise<void> {
  await page.route(pagePattern, async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, body: (await response.text()).replace(/"timeoutMs":\d+/, '"timeoutMs":1500') });
  });
}

/**
 * The page gives up waiting for its payment's answer after 1.5 s (its data says 45 s, the HTML at
 * `pagePattern` is rewritten), and the answer of `POST /hosted/payments` arrives after 2.5 s, the
 * payment itself made at once. Any look-up of what the payment came to (`GET
 * /hosted/payments/current`) waits until the service has answered it, however slow the machine.
 */
export async function answerAfterPageGaveUp(page: Page, pagePattern: string): Promise<void> {
  await giveUpSooner(page, pagePattern);
  let answered: () => void = () => undefined;
  const paid = new Promise<void>((resolve) => (answered = resolve));
  await page.route('**/hosted/payments/current', async (route) => {
    await paid;
    await route.continue();
  });
  await page.route('**/hosted/payments', async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    const response = await route.fetch();
    answered();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await route.fulfill({ response }).catch(() => undefined);
  });
}

export const screenshotDir = path.resolve('test-results/screenshots');

/**
 * Saves the page at phone (375 px) and desktop (1280 px) widths, and fails if at either width
 * anything runs past the window's right edge (a payer on a phone would have to scroll sideways).
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  const original = page.viewportSize() ?? { width: 1280, height: 900 };
  for (const width of [375, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(screenshotDir, `${name}-${width}.png`), fullPage: true });
    const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    if (pageWidth > width) throw new Error(`${name}: the page is ${pageWidth} px wide in a ${width} px window`);
  }
  await page.setViewportSize(original);
}

export const testCards = {
  visa: '4111 1111 1111 1111',
  visaDeclined: '4000 0000 0000 0002',
  mastercard: '5555 5555 5555 4444',
  visaChallenge: '4200 0000 0000 0042',
  visaFrictionless: '4000 0000 0000 1000',
  noAnswer: '4000 0000 0000 0093',
} as const;
