import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { insertQuotes } from '../../src/domain/forex/index.js';
import { signPaymentRequestToken } from '../../src/domain/payment-request-link.js';
import { messages as frenchPages } from '../../src/i18n/pages/frFR.js';
import { messages as frenchSandbox } from '../../src/i18n/sandbox/frFR.js';
import { limits } from '../../src/limits.js';
import { createMerchant, fillCard, answerAfterPageGaveUp, loseFirstPaymentAnswer, screenshots, startE2E, testCards, type E2E, type Merchant } from './support.js';

let e2e: E2E;
let merchant: Merchant;
let page: Page;

beforeAll(async () => {
  e2e = await startE2E();
  merchant = await createMerchant(e2e);
  page = await e2e.browser.newPage({ viewport: { width: 1280, height: 900 } });
});
afterAll(async () => e2e?.close());

async function bookingWithLink(total: number, language = 'frFR'): Promise<{ id: number; link: string }> {
  const response = await e2e.t.app.inject({
    method: 'POST', url: `/${merchant.site.path}/site-json/vendor/v2/bookings`, headers: merchant.site.headers,
    payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', date_start: '2031-05-10', total, currencies: 'USD', countries: 'GB', channels: merchant.channelId, reference: 'LAKE-7', payment_request_url: true, language },
  });
  const booking = response.json() as { id: number; _links: { self: { payment_request?: string }[] } };
  return { id: booking.id, link: booking._links.self[0]!.payment_request! };
}

describe('payment request page before its script runs', () => {
  it.each([
    ['with JavaScript off', { javaScriptEnabled: false }, false],
    ['while its bundle has not loaded', {}, true],
  ] as const)('%s: card details typed and Enter pressed go nowhere (not into the URL)', async (_when, options, blockBundle) => {
    const { link } = await bookingWithLink(12_300, 'enGB');
    const context = await e2e.browser.newContext(options);
    try {
      const early = await context.newPage();
      if (blockBundle) await early.route('**/hosted/assets/**', (route) => route.abort());
      await early.goto(link);
      expect(await early.isDisabled('#submit')).toBe(true);
      await early.fill('#card_number', '4111 1111 1111 1111');
      await early.fill('#expiry', '12/30');
      await early.fill('#cvv', '123');
      await early.press('#cvv', 'Enter');
      await early.waitForTimeout(300);
      expect(early.url()).toBe(link);
      expect(early.url()).not.toContain('4111');
    } finally {
      await context.close();
    }
  });

  it('says there is nothing to pay on a zero-total booking, neutrally: the API calls it unpaid, not paid', async () => {
    const { id, link } = await bookingWithLink(0, 'enGB');
    const api = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/bookings/${id}`, headers: merchant.site.headers });
    expect(api.json()).toMatchObject({ status: 'unpaid', total_unpaid: 0 });
    const url = new URL(link);
    const body = (await e2e.t.app.inject({ url: `${url.pathname}${url.search}` })).body;
    expect(body).toContain('class="outcome info"');
    expect(body).toContain('There is nothing to pay on this booking.');
    expect(body).not.toContain('fully paid');
  });

  it('starts the cardholder name empty when the traveller\'s names together are longer than the field takes', async () => {
    const response = await e2e.t.app.inject({
      method: 'POST', url: `/${merchant.site.path}/site-json/vendor/v2/bookings`, headers: merchant.site.headers,
      payload: { firstname: 'A'.repeat(150), surname: 'B'.repeat(150), email: 'long@example.com', date: '2031-05-20', total: 1000, currencies: 'USD', countries: 'GB', channels: merchant.channelId, payment_request_url: true },
    });
    const link = new URL(response.json()._links.self[0].payment_request as string);
    const form = (await e2e.t.app.inject({ url: `${link.pathname}${link.search}` })).body;
    expect(form).toMatch(/<input id="name" name="name"[^>]* value=""/);
  });
});

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
    // The travel dates and the no-script note in the page language too.
    expect(await page.textContent('main')).toContain('10 mai 2031 – 20 mai 2031');
    expect(await page.content()).toContain(frenchPages.noScript);
    await screenshots(page, 'pay-form');
    await fillCard(page, { number: testCards.visaChallenge });
    await page.click('#submit');
    // The bank's challenge speaks the page language too (it was English in every page).
    const challenge = page.frameLocator('#challenge-frame');
    await challenge.getByRole('button', { name: frenchSandbox.authenticate }).click();
    await page.waitForSelector('#outcome.success');
    expect(await page.textContent('#outcome')).toContain('Paiement effectué');
    // Its date in French, on a 24-hour clock, as the receipt mail writes it (was the API's raw text).
    expect(await page.textContent('#outcome')).toMatch(/\d{1,2} [a-zéû]+ \d{4}(,| à) \d{2}:\d{2} UTC/);
    await screenshots(page, 'pay-receipt');
    const booking = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/bookings/${id}`, headers: merchant.site.headers });
    expect(booking.json()).toMatchObject({ status: 'paid', total_unpaid: 0 });
    // Paid: the link now says so instead of offering the form again.
    await page.goto(link);
    expect(await page.locator('#card_number').count()).toBe(0);
    expect(await page.textContent('main')).toContain('entièrement payée');
  });

  it('keeps a second 3DS challenge usable when the payer presses Back during it (the first challenge left nothing to go back to)', async () => {
    const { id, link } = await bookingWithLink(46_000, 'enGB');
    await page.goto(`${e2e.baseUrl}/docs`);
    await page.goto(link);
    // A first challenge failed, then a second one, on the same page.
    await fillCard(page, { number: testCards.visaChallenge });
    await page.click('#submit');
    await page.frameLocator('#challenge-frame').getByRole('button', { name: 'Fail' }).click();
    await page.waitForSelector('#outcome.failed');
    await fillCard(page, { number: testCards.visaChallenge });
    await page.click('#submit');
    const challenge = page.frameLocator('#challenge-frame');
    await challenge.getByRole('button', { name: 'Authenticate' }).waitFor();
    // Back went to the first challenge's pages in the one lasting iframe, leaving this one on a
    // blank page, the payer before an empty frame, and the payment pending for good.
    await page.goBack();
    await challenge.getByRole('button', { name: 'Authenticate' }).click({ timeout: 5_000 });
    await page.waitForSelector('#outcome.success', { timeout: 10_000 });
    const booking = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/bookings/${id}`, headers: merchant.site.headers });
    expect(booking.json()).toMatchObject({ status: 'paid' });
  });

  it('asks before Back leaves the page during a 3DS challenge; staying, the payer completes it (leaving left the booking unpayable for 30 minutes)', async () => {
    const { id, link } = await bookingWithLink(45_500, 'enGB');
    await page.goto(`${e2e.host.origin}/mail`);
    await page.goto(link);
    await fillCard(page, { number: testCards.visaChallenge });
    await page.click('#submit');
    const challenge = page.frameLocator('#challenge-frame');
    await challenge.getByRole('button', { name: 'Authenticate' }).waitFor();
    const asked = Promise.race([page.waitForEvent('dialog'), page.waitForEvent('framenavigated', (frame) => frame === page.mainFrame()).then(() => null)]);
    void page.goBack().catch(() => undefined);
    const dialog = await asked;
    expect(dialog?.type()).toBe('beforeunload');
    await dialog!.dismiss();
    expect(page.url()).toBe(link);
    await challenge.getByRole('button', { name: 'Authenticate' }).click();
    await page.waitForSelector('#outcome.success');
    expect((await bookingAndLastTransaction(id)).booking).toMatchObject({ status: 'paid' });
  });

  it('shows the pending 3DS challenge again after a reload, and the one payment completes (the link said "still being processed" for 30 minutes)', async () => {
    const { id, link } = await bookingWithLink(45_700, 'enGB');
    const own = await e2e.browser.newContext();
    const payer = await own.newPage();
    await payer.goto(link);
    await fillCard(payer, { number: testCards.visaChallenge });
    await payer.click('#submit');
    await payer.frameLocator('#challenge-frame').getByRole('button', { name: 'Authenticate' }).waitFor();
    payer.once('dialog', (dialog) => void dialog.accept());
    await payer.reload();
    // Another browser holding the link is not shown this payer's challenge (card, amount), but is
    // told what holds the booking and for how long (it said "reload in a few minutes", for 35).
    const other = await e2e.browser.newContext();
    const stranger = await other.newPage();
    await stranger.goto(link);
    expect(await stranger.locator('#card_number').count()).toBe(0);
    expect(await stranger.textContent('main')).toMatch(/waiting for the cardholder to confirm it with their bank .* Minutes until then: 3[56]\./);
    await payer.frameLocator('#challenge-frame').getByRole('button', { name: 'Authenticate' }).click();
    await payer.waitForSelector('#outcome.success');
    const { booking } = await bookingAndLastTransaction(id);
    expect(booking).toMatchObject({ status: 'paid', total_unpaid: 0 });
    expect(booking.transaction_ids).toHaveLength(1);
    // The challenge is over: the browser keeps nothing of it.
    expect((await own.cookies()).filter((cookie) => cookie.name.startsWith('tf_pay_'))).toEqual([]);
    await Promise.all([own.close(), other.close()]);
  });

  it('says the outcome is not known yet, not a decline, when the payment is still pending after the challenge (the look-up did not settle it)', async () => {
    const { id, link } = await bookingWithLink(46_500, 'enGB');
    await page.goto(link);
    await fillCard(page, { number: testCards.visaChallenge });
    await page.click('#submit');
    const challenge = page.frameLocator('#challenge-frame');
    await challenge.getByRole('button', { name: 'Authenticate' }).waitFor();
    const sandbox = e2e.t.context.connector;
    // The processor's look-up at the 3DS return fails in transit: the payment stays pending and may still complete.
    e2e.t.context.connector = { ...sandbox, name: 'lossy', lookup: async () => Promise.reject(new Error('connection reset')) };
    try {
      await challenge.getByRole('button', { name: 'Authenticate' }).click();
      await page.waitForSelector('#outcome.failed');
    } finally {
      e2e.t.context.connector = sandbox;
    }
    const text = await page.textContent('#outcome');
    expect(text).toContain(`The request timed out. Your booking ID is ${id}.`);
    expect(text).not.toContain('Attempts left');
    expect(await page.isVisible('#card-form')).toBe(false);
  });

  /** Pays `card` on a new booking's page that gives up waiting before the answer comes: the outcome box's text. */
  async function payAfterPageGaveUp(total: number, card: string): Promise<{ id: number; text: string }> {
    const { id, link } = await bookingWithLink(total, 'enGB');
    await answerAfterPageGaveUp(page, '**/pay/*');
    try {
      await page.goto(link);
      await fillCard(page, { number: card });
      await page.click('#submit');
      await page.waitForSelector('#outcome:not([hidden])', { timeout: 15_000 });
      return { id, text: (await page.textContent('#outcome'))! };
    } finally {
      await page.unrouteAll();
    }
  }

  it('shows the receipt when the page gave up waiting for the answer but the payment went through meanwhile', async () => {
    const { id, text } = await payAfterPageGaveUp(46_700, testCards.visa);
    expect(text).not.toContain('timed out');
    const { transaction } = await bookingAndLastTransaction(id);
    expect(transaction).toMatchObject({ status: 'complete' });
    expect(text).toContain(`Transaction ID${transaction.id}`);
    expect(await page.getAttribute('#outcome', 'class')).toContain('success');
    expect(await page.isVisible('#card-form')).toBe(false);
  });

  it('shows the decline when the page gave up waiting for the answer and the card was declined meanwhile, and lets the payer try again', async () => {
    const { text } = await payAfterPageGaveUp(46_800, testCards.visaDeclined);
    expect(text).not.toContain('timed out');
    expect(text).toContain('Attempts left: 2');
    expect(await page.getAttribute('#outcome', 'class')).toContain('failed');
    expect(await page.isVisible('#card-form')).toBe(true);
  });

  it("says in the page language that nothing was taken when the service refuses something no field shows (not the core's English)", async () => {
    const { link } = await bookingWithLink(47_500);
    await page.goto(link);
    await page.route('**/hosted/payments', (route) => route.fulfill({
      status: 400, contentType: 'application/json',
      body: JSON.stringify({ code: 'rest_invalid_param', message: 'Invalid parameter(s): token', data: { status: 400, params: { token: 'Unknown or expired card token.' } } }),
    }));
    try {
      await fillCard(page, { number: testCards.visa });
      await page.click('#submit');
      await page.waitForSelector('#outcome.failed');
      expect(await page.textContent('#outcome')).toBe(frenchPages.unexpectedError);
      expect(await page.isVisible('#card-form')).toBe(true);
    } finally {
      await page.unrouteAll();
    }
  });

  it('says the session expired, without the form, when the page was left open past its session', async () => {
    const { id, link } = await bookingWithLink(47_000, 'esES');
    await page.goto(link);
    await e2e.t.db.query(`UPDATE hosted_sessions SET expires_at = now() - interval '1 minute' WHERE booking_id = $1`, [id]);
    await fillCard(page, { number: testCards.visa });
    await page.click('#submit');
    await page.waitForSelector('#outcome.failed');
    expect(await page.textContent('#outcome')).toBe('Su sesión ha caducado. Vuelva a abrir esta página para empezar de nuevo.');
    expect(await page.isVisible('#card-form')).toBe(false);
  });

  // No attempt failed: the page's own cards ran out (docs/hosted-pages.md "Card captures per page").
  it('says no more cards can be entered, not "three failed attempts", when the page took all the cards it may', async () => {
    const { id, link } = await bookingWithLink(47_100, 'enGB');
    await page.goto(link);
    await e2e.t.db.query(`UPDATE hosted_sessions SET captures = $2 WHERE booking_id = $1`, [id, limits.hostedCardCapturesPerSessionMax]);
    await fillCard(page, { number: testCards.visa });
    await page.click('#submit');
    await page.waitForSelector('#outcome.failed');
    const text = await page.textContent('#outcome');
    expect(text).toContain('No more cards can be entered on this page. Please contact');
    expect(text).not.toContain('Three failed attempts');
    expect(await page.isVisible('#card-form')).toBe(false);
  });

  it('shows a declined card on a frFR page with the French reason', async () => {
    const { link } = await bookingWithLink(30_000);
    await page.goto(link);
    expect(await page.getAttribute('html', 'lang')).toBe('fr-FR');
    await fillCard(page, { number: testCards.visaDeclined });
    await page.click('#submit');
    await page.waitForSelector('#outcome.failed');
    const text = await page.textContent('#outcome');
    expect(text).toContain('Votre banque a refusé le paiement : 800.100.100 refusée (transaction refusée pour une raison inconnue).');
    // Not the gateway's English message.
    expect(text).not.toContain('declined');
    await screenshots(page, 'pay-declined-fr');
  });

  it('shows a phone payer the decline: the reason and attempts left are on screen, and Tab goes on to the card number', async () => {
    const { link } = await bookingWithLink(30_100, 'deDE');
    const phone = await e2e.browser.newPage({ viewport: { width: 320, height: 640 } });
    try {
      await phone.goto(link);
      await fillCard(phone, { number: testCards.visaDeclined });
      await phone.click('#submit');
      await phone.waitForSelector('#outcome.failed');
      // The cleared card number took the focus, and the page scrolled to it: the reason stayed
      // below the Pay button, off the screen, and the form just looked emptied.
      const onScreen = await phone.$eval('#outcome', (outcome) => {
        const box = outcome.getBoundingClientRect();
        // Whole pixels: scrolled into view, its top may sit a fraction above the edge.
        return Math.round(box.top) >= 0 && Math.round(box.bottom) <= window.innerHeight;
      });
      expect(onScreen).toBe(true);
      expect(await phone.inputValue('#card_number')).toBe('');
      await phone.keyboard.press('Tab');
      expect(await phone.evaluate(() => document.activeElement?.id)).toBe('card_number');
    } finally {
      await phone.close();
    }
  });

  it('puts a refusal of the card by the service next to the card number, in the page language', async () => {
    const { id, link } = await bookingWithLink(12_000);
    await page.goto(link);
    // A real (Luhn-valid, non-sandbox) card on a test channel: the browser lets it through, the
    // capture endpoint refuses it, keyed by card_number.
    await fillCard(page, { number: '4242 4242 4242 4242' });
    await page.click('#submit');
    await expect.poll(() => page.getAttribute('#card_number', 'aria-invalid'), { timeout: 15_000 }).toBe('true');
    expect(await page.textContent('#card_number-error')).toBe('Ceci est une page de test : saisissez l’une des cartes de test du bac à sable. Les vraies cartes n’y sont pas acceptées.');
    expect(await page.isVisible('#card_number-error')).toBe(true);
    expect(await page.textContent('#error-summary')).toContain('Ceci est une page de test');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('error-summary');
    expect(await page.isVisible('#outcome')).toBe(false);
    expect(await page.textContent('body')).not.toContain('Test channels accept only');
    // Corrected, the card pays and the field is no longer marked.
    await fillCard(page, { number: testCards.visa });
    await page.click('#submit');
    await page.waitForSelector('#outcome.success');
    expect(await page.getAttribute('#card_number', 'aria-invalid')).toBeNull();
    const booking = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/bookings/${id}`, headers: merchant.site.headers });
    expect(booking.json()).toMatchObject({ status: 'paid' });
  });

  /** Pays the open page in `currency` and returns the booking and its transaction (REST reads). */
  async function payIn(currency: string, link: string, expectedAmount: string) {
    await page.goto(link);
    await page.selectOption('#currency', currency);
    expect(await page.textContent('#amount-due')).toBe(expectedAmount);
    expect(await page.textContent('#submit')).toContain(expectedAmount);
    await fillCard(page, { number: testCards.visa });
    await page.click('#submit');
    await page.waitForSelector('#outcome.success');
    expect(await page.textContent('#outcome')).toContain(expectedAmount);
  }

  async function bookingAndLastTransaction(id: number) {
    const booking = (await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/bookings/${id}`, headers: merchant.site.headers })).json();
    const transactionId = booking.transaction_ids.at(-1);
    const transaction = (await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/transactions/${transactionId}`, headers: merchant.site.headers })).json();
    return { booking, transaction };
  }

  it('pays a USD booking in EUR at the sandbox rate: the amount shown is the amount charged', async () => {
    // 99.99 USD at 0.92 = 91.9908 EUR -> 91.99 EUR.
    const { id, link } = await bookingWithLink(9_999, 'enGB');
    await page.goto(link);
    const labels = await page.locator('#currency option').allTextContents();
    expect(labels).toEqual(expect.arrayContaining(['USD · US$99.99', 'EUR · €91.99', 'JPY · JP¥14,999']));
    await page.selectOption('#currency', 'EUR');
    expect(await page.textContent('#converted')).toContain('1 USD = 0.92 EUR');
    await screenshots(page, 'pay-form-eur');
    await payIn('EUR', link, '€91.99');
    await screenshots(page, 'pay-receipt-eur');
    const { booking, transaction } = await bookingAndLastTransaction(id);
    expect(booking).toMatchObject({ status: 'paid', total_unpaid: 0, currencies: 'USD' });
    expect(transaction).toMatchObject({
      status: 'complete', currencies: 'EUR', total: 9_199, forex_rate: '0.92', forex_id: expect.any(Number),
      forex: [expect.objectContaining({ currencies: 'USD', total: 9_999 })],
      bookings: [expect.objectContaining({ id, currencies: 'USD', total: 9_999 })],
    });
  });

  it('gives the receipt of the payment whose answer was lost, in the currency it was paid in, when the payer pays again in another', async () => {
    const { id, link } = await bookingWithLink(9_997, 'enGB');
    await page.goto(link);
    await page.selectOption('#currency', 'EUR');
    const paidInEuros = (await page.textContent('#amount-due'))!;
    // The payment reaches the service and is charged; its answer is lost on the way back.
    await loseFirstPaymentAnswer(page);
    await fillCard(page, { number: testCards.visa });
    await page.click('#submit');
    await page.waitForSelector('#outcome.failed');
    await page.selectOption('#currency', 'USD');
    await fillCard(page, { number: testCards.visa });
    await page.click('#submit');
    await page.waitForSelector('#outcome.success');
    const receipt = (await page.textContent('#outcome'))!;
    expect(receipt).toContain(`Amount paid${paidInEuros}`);
    expect(receipt).toContain('US$99.97 at a rate of 1 USD = 0.92 EUR');
    await page.unrouteAll();
    const { booking, transaction } = await bookingAndLastTransaction(id);
    expect(booking.transaction_ids).toHaveLength(1);
    expect(transaction).toMatchObject({ status: 'complete', currencies: 'EUR' });
  });

  it('writes the rate in the page language\'s style, as the amounts: 0,92 on a German page', async () => {
    const { link } = await bookingWithLink(9_998, 'deDE');
    await page.goto(link);
    await page.selectOption('#currency', 'EUR');
    expect(await page.textContent('#converted')).toContain('1 USD = 0,92 EUR');
  });

  it('pays in JPY (no minor units), rounding half-up', async () => {
    // 123.45 USD at 150 = 18517.5 JPY -> 18518 JPY.
    const { id, link } = await bookingWithLink(12_345, 'enGB');
    await payIn('JPY', link, 'JP¥18,518');
    const { booking, transaction } = await bookingAndLastTransaction(id);
    expect(booking).toMatchObject({ status: 'paid', total_unpaid: 0 });
    expect(transaction).toMatchObject({ status: 'complete', currencies: 'JPY', total: 18_518, forex_rate: '150', forex_id: expect.any(Number), forex: [expect.objectContaining({ currencies: 'USD', total: 12_345 })] });
  });

  it('never charges an amount it did not show: a rate changed after the page opened is shown again first', async () => {
    const { id, link } = await bookingWithLink(10_000, 'enGB');
    await page.goto(link);
    await page.selectOption('#currency', 'EUR');
    expect(await page.textContent('#amount-due')).toBe('€92.00');
    // The operator loads a new USD→EUR rate while the payer types the card.
    await insertQuotes(e2e.t.db, { provider: 'file', quotes: [{ base: 'USD', currency: 'EUR', rate: '0.95', expiresAt: new Date(Date.now() + 3_600_000) }], now: new Date() });
    await fillCard(page, { number: testCards.visa });
    await page.click('#submit');
    await page.waitForSelector('#outcome.info');
    expect(await page.textContent('#outcome')).toContain('€95.00');
    expect(await page.textContent('#amount-due')).toBe('€95.00');
    expect((await bookingAndLastTransaction(id)).booking.transaction_ids).toEqual([]);
    await fillCard(page, { number: testCards.visa });
    await page.click('#submit');
    await page.waitForSelector('#outcome.success');
    const { transaction } = await bookingAndLastTransaction(id);
    expect(transaction).toMatchObject({ status: 'complete', currencies: 'EUR', total: 9_500, forex_rate: '0.95' });
  });

  it('says the session expired, without the form, when it expired as the page went to show a changed rate (not "something went wrong, try again")', async () => {
    const { id, link } = await bookingWithLink(10_100, 'esES');
    await page.goto(link);
    await page.selectOption('#currency', 'EUR');
    await insertQuotes(e2e.t.db, { provider: 'file', quotes: [{ base: 'USD', currency: 'EUR', rate: '0.96', expiresAt: new Date(Date.now() + 3_600_000) }], now: new Date() });
    // The payments core refuses the total the page showed; the session runs out before the page reads the new amounts.
    await page.route('**/hosted/payments', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      const response = await route.fetch();
      await e2e.t.db.query(`UPDATE hosted_sessions SET expires_at = now() - interval '1 minute' WHERE booking_id = $1`, [id]);
      await route.fulfill({ response });
    });
    try {
      await fillCard(page, { number: testCards.visa });
      await page.click('#submit');
      await page.waitForSelector('#outcome.failed');
      expect(await page.textContent('#outcome')).toBe('Su sesión ha caducado. Vuelva a abrir esta página para empezar de nuevo.');
      expect(await page.isVisible('#card-form')).toBe(false);
      expect((await bookingAndLastTransaction(id)).booking.transaction_ids).toEqual([]);
    } finally {
      await page.unrouteAll();
    }
  });

  it('says in the page language, not in the payments core\'s English, when another payment took the amount after the page opened', async () => {
    const { id, link } = await bookingWithLink(20_000, 'deDE');
    await page.goto(link);
    expect(await page.textContent('#amount-due')).toContain('200,00');
    // The merchant takes part of the payment through the API while the payer types the card.
    const taken = await e2e.t.app.inject({
      method: 'POST', url: `/${merchant.site.path}/site-json/vendor/v2/transactions`, headers: merchant.site.headers,
      payload: { transaction_types: 'purchase', channels: merchant.channelId, currencies: 'USD', total: 5_000, token: 'tok_visa', bookings: [{ id, currencies: 'USD', total: 5_000 }] },
    });
    expect(taken.json().status).toBe('complete');
    await fillCard(page, { number: testCards.visa });
    await page.click('#submit');
    await page.waitForSelector('#outcome.info');
    const text = await page.textContent('#outcome');
    expect(text).toContain('Eine Zahlung für diese Buchung wird noch bearbeitet.');
    expect(text).not.toContain('above its total');
    expect(await page.locator('#card-form').isHidden()).toBe(true);
    expect((await bookingAndLastTransaction(id)).booking.transaction_ids).toEqual([taken.json().id]);
  });

  it('says a second tab of the link that the booking is paid once the first tab paid it (it said a payment was being processed)', async () => {
    const { id, link } = await bookingWithLink(20_500, 'enGB');
    const browser = await e2e.browser.newContext();
    const [first, second] = [await browser.newPage(), await browser.newPage()];
    try {
      await first.goto(link);
      await second.goto(link);
      await fillCard(first, { number: testCards.visa });
      await first.click('#submit');
      await first.waitForSelector('#outcome.success');
      await fillCard(second, { number: testCards.visa });
      await second.click('#submit');
      await second.waitForSelector('#outcome.success');
      expect(await second.textContent('#outcome')).toBe('This booking is fully paid. Nothing is due.');
      expect(await second.locator('#card-form').isHidden()).toBe(true);
      expect((await bookingAndLastTransaction(id)).booking.transaction_ids).toHaveLength(1);
    } finally {
      await browser.close();
    }
  });

  it('keeps the booking summary readable on a 320 px phone in a language with long labels: no amount or name broken mid-word', async () => {
    const { link } = await bookingWithLink(123_456_789, 'ruRU');
    const phone = await e2e.browser.newPage({ viewport: { width: 320, height: 900 } });
    try {
      await phone.goto(link);
      // Lines each value is laid out on: the labels took the width they wanted and left the values
      // a sliver, so "1 234 567,89 $" read "1 23 / 4 56 / 7,89 / $" and "Lovelace" "Lovel / ace".
      const lines = await phone.$$eval('.summary dd', (values) => values.map((value) => {
        const range = document.createRange();
        range.selectNodeContents(value);
        return [value.textContent, new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size];
      }));
      expect(lines).toContainEqual(['LAKE-7', 1]);
      expect(lines).toContainEqual(['Ada Lovelace', 1]);
      expect(lines.find(([text]) => /^1\s234\s567,89/.test(String(text)))?.[1]).toBe(1);
    } finally {
      await phone.close();
    }
  });

  it('refuses an expired or tampered link without showing a form', async () => {
    const { id } = await bookingWithLink(10_000);
    const expired = signPaymentRequestToken(e2e.t.config.secrets.signingSecret, { siteId: merchant.site.siteId, bookingId: id, expiresAt: new Date(Date.now() - 60_000) });
    const response = await page.goto(`${e2e.baseUrl}/pay/${expired}`);
    expect(response?.status()).toBe(404);
    expect(await page.locator('#card_number').count()).toBe(0);
    // Still the merchant's own link: the booking's language (frFR), and whom to ask for a new one.
    expect(await page.getAttribute('html', 'lang')).toBe('fr-FR');
    const { name: company } = await e2e.t.db.one<{ name: string }>('SELECT name FROM sites WHERE id = $1', [merchant.site.siteId]);
    expect(await page.textContent('main')).toContain(frenchPages.invalidLink.replace('{company}', company));
    await screenshots(page, 'pay-expired');
    const tampered = signPaymentRequestToken(e2e.t.config.secrets.signingSecret, { siteId: merchant.site.siteId, bookingId: id, expiresAt: new Date(Date.now() + 60_000) }).replace(`.${id}.`, `.${id + 1}.`);
    expect((await page.goto(`${e2e.baseUrl}/pay/${tampered}`))?.status()).toBe(404);
    // A link this service did not sign says nothing of any booking or merchant.
    expect(await page.getAttribute('html', 'lang')).toBe('en-GB');
    expect(await page.textContent('main')).toContain('This payment link is not valid or has expired.');
  });
});
