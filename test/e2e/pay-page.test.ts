import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { signPaymentRequestToken } from '../../src/domain/payment-request-link.js';
import { createMerchant, fillCard, screenshots, startE2E, testCards, type E2E, type Merchant } from './support.js';

let e2e: E2E;
let merchant: Merchant;
let page: Page;

beforeAll(async () => {
  e2e = await startE2E();
  merchant = await createMerchant(e2e);
  page = await e2e.browser.newPage({ viewport: { width: 1280, height: 900 } });
});
afterAll(async () => e2e?.close());

async function bookingWithLink(total: number): Promise<{ id: number; link: string }> {
  const response = await e2e.t.app.inject({
    method: 'POST', url: `/${merchant.site.path}/site-json/vendor/v2/bookings`, headers: merchant.site.headers,
    payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', date_start: '2031-05-10', total, currencies: 'USD', countries: 'GB', channels: merchant.channelId, reference: 'LAKE-7', payment_request_url: true, language: 'frFR' },
  });
  const booking = response.json() as { id: number; _links: { self: { payment_request?: string }[] } };
  return { id: booking.id, link: booking._links.self[0]!.payment_request! };
}

describe('payment request page in Chromium', () => {
  it('shows the booking and amount due, pays it with 3DS and shows a receipt', async () => {
    const { id, link } = await bookingWithLink(45_000);
    const response = await page.goto(link);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    // The booking's language (frFR) chooses the page language.
    expect(await page.getAttribute('html', 'lang')).toBe('fr-FR');
    expect(await page.textContent('main')).toContain('LAKE-7');
    expect(await page.textContent('#amount-due')).toContain('450,00');
    await screenshots(page, 'pay-form');
    await fillCard(page, { number: testCards.visaChallenge });
    await page.click('#submit');
    const challenge = page.frameLocator('#challenge-frame');
    await challenge.getByRole('button', { name: 'Authenticate' }).click();
    await page.waitForSelector('#outcome.success');
    expect(await page.textContent('#outcome')).toContain('Paiement effectué');
    await screenshots(page, 'pay-receipt');
    const booking = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/bookings/${id}`, headers: merchant.site.headers });
    expect(booking.json()).toMatchObject({ status: 'paid', total_unpaid: 0 });
    // Paid: the link now says so instead of offering the form again.
    await page.goto(link);
    expect(await page.locator('#card_number').count()).toBe(0);
    expect(await page.textContent('main')).toContain('entièrement payée');
  });

  it('refuses an expired or tampered link without showing a form', async () => {
    const { id } = await bookingWithLink(10_000);
    const expired = signPaymentRequestToken(e2e.t.config.secrets.signingSecret, { siteId: merchant.site.siteId, bookingId: id, expiresAt: new Date(Date.now() - 60_000) });
    const response = await page.goto(`${e2e.baseUrl}/pay/${expired}`);
    expect(response?.status()).toBe(404);
    expect(await page.locator('#card_number').count()).toBe(0);
    await screenshots(page, 'pay-expired');
    const tampered = signPaymentRequestToken(e2e.t.config.secrets.signingSecret, { siteId: merchant.site.siteId, bookingId: id, expiresAt: new Date(Date.now() + 60_000) }).replace(`.${id}.`, `.${id + 1}.`);
    expect((await page.goto(`${e2e.baseUrl}/pay/${tampered}`))?.status()).toBe(404);
  });
});
