import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { signJwt } from '../../src/domain/credentials.js';
import { messages as frenchPages } from '../../src/i18n/pages/frFR.js';
import { limits } from '../../src/limits.js';
import { cardVaultToken, createMerchant, fillCard, answerAfterPageGaveUp, screenshots, startE2E, testCards, type E2E, type Merchant } from './support.js';

/** Browser round trips on a busy two-core machine: poll generously (expect.poll's default is 1 s). */
const slow = { timeout: 15_000 };

let e2e: E2E;
let merchant: Merchant;
let page: Page;

beforeAll(async () => {
  // A short processor bound so the no-answer card times out quickly.
  e2e = await startE2E({ PROCESSOR_TIMEOUT_MS: '2000', SANDBOX_NO_ANSWER_MS: '6000' });
  merchant = await createMerchant(e2e);
  page = await e2e.browser.newPage({ viewport: { width: 1280, height: 900 } });
  if (process.env.E2E_DEBUG) page.on('console', (message) => console.log('[page]', message.text())).on('pageerror', (error) => console.log('[pageerror]', error.message)).on('response', (response) => console.log('[response]', response.status(), response.url().slice(0, 120)));
});
afterAll(async () => e2e?.close());

async function vaultUrl(query: Record<string, string>): Promise<string> {
  const url = new URL(`${e2e.baseUrl}/vault/1.8.0/`);
  const params = { auth: await cardVaultToken(e2e, merchant), channels: String(merchant.channelId), env: 'test', ...query };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.toString();
}

/** The value of `field` after `text` is entered at once, as a paste or an input method's commit enters it. */
async function enteredAtOnce(field: string, text: string): Promise<string> {
  await page.fill(field, '');
  await page.focus(field);
  await page.keyboard.insertText(text);
  return page.inputValue(field);
}

async function submitAndLand(card: string, query: Record<string, string>): Promise<URL> {
  await page.goto(await vaultUrl({ redirect: `${e2e.host.origin}/done?keep=1`, session_id: 'abc123', ...query }));
  await fillCard(page, { number: card });
  await Promise.all([page.waitForURL(`${e2e.host.origin}/done**`), page.click('#submit')]);
  return new URL(page.url());
}

describe('vaulting app 1.8.0 in Chromium', () => {
  it('shows the form with cardholder fields prefilled and our strict CSP', async () => {
    const consoleErrors: string[] = [];
    const onConsole = (message: { type(): string; text(): string }) => void (message.type() === 'error' && consoleErrors.push(message.text()));
    page.on('console', onConsole);
    const response = await page.goto(await vaultUrl({ name: 'Ada Lovelace', email: 'ada@example.com', city: 'London', zip: 'N1 9GU', country: 'GB', address: '12 Analytical Row' }));
    expect(response?.status()).toBe(200);
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    // Nothing in the console: no /favicon.ico 404, no CSP violation for the page's own icon.
    await page.waitForLoadState('networkidle');
    page.off('console', onConsole);
    expect(consoleErrors).toEqual([]);
    expect(await page.inputValue('#name')).toBe('Ada Lovelace');
    expect(await page.inputValue('#email')).toBe('ada@example.com');
    expect(await page.inputValue('#country')).toBe('GB');
    expect(await page.getAttribute('#card_number', 'autocomplete')).toBe('cc-number');
    await page.fill('#card_number', '4111111111111111');
    expect(await page.inputValue('#card_number')).toBe('4111 1111 1111 1111');
    expect(await page.textContent('#card-brand')).toContain('Visa');
    await screenshots(page, 'vault-form');
  });

  it('refuses bad card input in the browser with accessible messages', async () => {
    await page.goto(await vaultUrl({ name: 'Ada Lovelace' }));
    await fillCard(page, { number: '4111 1111 1111 1112', expiry: '01/20', cvv: '12' });
    await page.click('#submit');
    await expect.poll(() => page.isVisible('#error-summary'), slow).toBe(true);
    expect(await page.getAttribute('#card_number', 'aria-invalid')).toBe('true');
    expect(await page.getAttribute('#expiry', 'aria-invalid')).toBe('true');
    expect(await page.getAttribute('#cvv', 'aria-invalid')).toBe('true');
    expect(await page.textContent('#card_number-error')).toBe('Enter a valid card number.');
    expect(await page.getAttribute('#error-summary', 'role')).toBe('alert');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('error-summary');
    await screenshots(page, 'vault-errors');
    const cards = await e2e.t.db.query('SELECT id FROM cards WHERE site_id = $1', [merchant.site.siteId]);
    expect(cards).toHaveLength(0);
  });

  it("refuses at the field an email the server would refuse (the server's own pattern), before the card is sent", async () => {
    for (const email of ['josé@example.com', 'ada@example..com', 'ada@exa_mple.com']) {
      await page.goto(await vaultUrl({ name: 'Ada Lovelace' }));
      await fillCard(page, { number: testCards.visa });
      await page.fill('#email', email);
      await page.click('#submit');
      await expect.poll(() => page.isVisible('#error-summary'), slow).toBe(true);
      expect(await page.getAttribute('#email', 'aria-invalid')).toBe('true');
      expect(await page.textContent('#email-error')).toBe('Enter a valid email address.');
    }
    const cards = await e2e.t.db.query('SELECT id FROM cards WHERE site_id = $1', [merchant.site.siteId]);
    expect(cards).toHaveLength(0);
  });

  // Pasted cardholder text can carry what the service refuses in any text (a tab from a
  // spreadsheet, the direction controls of a name copied from a document, an invisible space):
  // the server's refusal was shown at the field in its English, whatever the page language.
  it('refuses at the field, in the page language, cardholder text the server would refuse (tabs, direction controls, nothing visible), before the card is sent', async () => {
    for (const [field, value] of [['address', '12\tAnalytical Row'], ['name', '\u202bAda Lovelace\u202c'], ['city', '\u200b']] as const) {
      await page.goto(await vaultUrl({ name: 'Ada Lovelace', language: 'frFR' }));
      await fillCard(page, { number: testCards.visa });
      await page.fill(`#${field}`, value);
      await page.click('#submit');
      await expect.poll(() => page.isVisible('#error-summary'), slow).toBe(true);
      expect(await page.getAttribute(`#${field}`, 'aria-invalid')).toBe('true');
      expect(await page.textContent(`#${field}-error`)).toBe(frenchPages.errorText);
    }
    const cards = await e2e.t.db.query('SELECT id FROM cards WHERE site_id = $1', [merchant.site.siteId]);
    expect(cards).toHaveLength(0);
  });

  it('slashes the expiry as typed or pasted, MM/YY or MM/YYYY, padding a one-digit month closed by a slash', async () => {
    await page.goto(await vaultUrl({}));
    const expiryAfter = async (typed: string, how: 'type' | 'paste') => {
      await page.fill('#expiry', '');
      await page.focus('#expiry');
      if (how === 'type') await page.keyboard.type(typed);
      else await page.keyboard.insertText(typed);
      return page.inputValue('#expiry');
    };
    expect(await expiryAfter('01/2030', 'paste')).toBe('01/2030');
    expect(await expiryAfter('01/2030', 'type')).toBe('01/2030');
    expect(await expiryAfter('1/30', 'type')).toBe('01/30');
    expect(await expiryAfter('1230', 'type')).toBe('12/30');
    expect(await expiryAfter('122030', 'paste')).toBe('12/2030');
    // page.fill is what a browser's autofill does: the whole value at once.
    await page.fill('#expiry', '01/2030');
    expect(await page.inputValue('#expiry')).toBe('01/2030');
    await page.focus('#cvv');
    expect(await page.isVisible('#expiry-error')).toBe(false);
  });

  it('takes a card number and expiry pasted with spaces and dashes whole, not cut to the length of their spaced form', async () => {
    await page.goto(await vaultUrl({}));
    // The fields' maxlength (23 and 7) cut the paste before the page spaced it: 14 digits, and December 2020.
    expect(await enteredAtOnce('#card_number', '4111 - 1111 - 1111 - 1111')).toBe('4111 1111 1111 1111');
    expect(await enteredAtOnce('#expiry', '12 / 2030')).toBe('12/2030');
    await page.focus('#cvv');
    expect(await page.isVisible('#card_number-error')).toBe(false);
    expect(await page.isVisible('#expiry-error')).toBe(false);
  });

  it('takes full-width digits, as a Japanese or Chinese input method enters them, in the card number, expiry and CVV', async () => {
    await page.goto(await vaultUrl({ language: 'jaJA' }));
    // The digits vanished as they were typed: only ASCII digits were kept.
    expect(await enteredAtOnce('#card_number', '４１１１１１１１１１１１１１１１')).toBe('4111 1111 1111 1111');
    expect(await enteredAtOnce('#expiry', '１２／３０')).toBe('12/30');
    expect(await enteredAtOnce('#cvv', '１２３')).toBe('123');
    await page.focus('#name');
    for (const field of ['card_number', 'expiry', 'cvv']) expect(await page.isVisible(`#${field}-error`)).toBe(false);
  });

  it('announces the card type once as the number is typed, not again at every digit (a polite live region)', async () => {
    await page.goto(await vaultUrl({}));
    await page.evaluate(() => {
      const changes: string[] = [];
      new MutationObserver(() => changes.push(document.getElementById('card-brand')!.textContent ?? '')).observe(document.getElementById('card-brand')!, { childList: true, characterData: true, subtree: true });
      (window as unknown as { brandChanges: string[] }).brandChanges = changes;
    });
    await page.focus('#card_number');
    await page.keyboard.type('4111111111111111');
    // Each digit rewrote the region with the same text, which a screen reader reads out again.
    expect(await page.evaluate(() => (window as unknown as { brandChanges: string[] }).brandChanges)).toEqual(['Card type: Visa']);
  });

  it('keeps the caret where the payer edits the card number, and Backspace after a space deletes a digit', async () => {
    await page.goto(await vaultUrl({}));
    await page.focus('#card_number');
    await page.keyboard.type('41111111111111');
    const caret = () => page.$eval('#card_number', (input: HTMLInputElement) => input.selectionStart);
    await page.$eval('#card_number', (input: HTMLInputElement) => input.setSelectionRange(2, 2));
    await page.keyboard.type('9');
    expect(await page.inputValue('#card_number')).toBe('4191 1111 1111 111');
    expect(await caret()).toBe(3);
    // Right after the first space: Backspace removes the digit before it, not nothing.
    await page.$eval('#card_number', (input: HTMLInputElement) => input.setSelectionRange(5, 5));
    await page.keyboard.press('Backspace');
    expect(await page.inputValue('#card_number')).toBe('4191 1111 1111 11');
    expect(await caret()).toBe(3);
    // Delete just before a space removes the digit after it.
    await page.$eval('#card_number', (input: HTMLInputElement) => input.setSelectionRange(4, 4));
    await page.keyboard.press('Delete');
    expect(await page.inputValue('#card_number')).toBe('4191 1111 1111 1');
    expect(await caret()).toBe(4);
  });

  it('vaults a card and redirects with every redirect parameter', async () => {
    const landed = await submitAndLand(testCards.visa, {});
    const params = Object.fromEntries(landed.searchParams);
    expect(params).toMatchObject({ keep: '1', session_id: 'abc123', last_four: '1111', card_type: 'visa', expiry_month: '12', expiry_year: '2030', status: 'success' });
    expect(params.token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(params.transaction_id).toMatch(/^[0-9]+$/);
    // The integrator confirms the outcome through the API, as the spec asks.
    const transaction = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/transactions/${params.transaction_id}`, headers: merchant.site.headers });
    expect(transaction.json()).toMatchObject({ status: 'complete', transaction_types: 'vault', total: 0, token: params.token });
  });

  it("vaults in the channel's currency when the page names the card's own currency (an informational input)", async () => {
    const landed = await submitAndLand(testCards.visa, { currency: 'EUR', session_id: 'eur1' });
    expect(Object.fromEntries(landed.searchParams)).toMatchObject({ session_id: 'eur1', status: 'success' });
    const transaction = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/transactions/${landed.searchParams.get('transaction_id')}`, headers: merchant.site.headers });
    expect(transaction.json()).toMatchObject({ status: 'complete', transaction_types: 'vault', currencies: 'USD', total: 0 });
  });

  it("shows no card number or expiry when Back returns from the integrator's page to the app", async () => {
    await submitAndLand(testCards.visa, {});
    await page.goBack();
    await page.waitForSelector('#submit:enabled');
    // The browser restored the fields as they were sent: whoever used the computer next read the card.
    expect(await page.inputValue('#card_number')).toBe('');
    expect(await page.inputValue('#expiry')).toBe('');
    expect(await page.textContent('#card-brand')).toBe('');
  });

  it('redirects a declined card with status failed', async () => {
    const landed = await submitAndLand(testCards.visaDeclined, { session_id: 'dec1' });
    expect(Object.fromEntries(landed.searchParams)).toMatchObject({ status: 'failed', last_four: '0002', session_id: 'dec1' });
  });

  it.each(['800.100.151', '800.100.152', '800.100.153', '800.100.154', '800.100.155', '800.100.156', '800.100.157', '800.100.158', '800.100.159', '800.100.160', '800.100.161'])(
    'fail_code %s forces that decline',
    async (code) => {
      const landed = await submitAndLand(testCards.visa, { fail_code: code });
      expect(landed.searchParams.get('status')).toBe('failed');
      const row = await e2e.t.db.one<{ decline_code: string; status: string }>('SELECT decline_code, status FROM transactions WHERE id = $1', [Number(landed.searchParams.get('transaction_id'))]);
      expect(row).toEqual({ decline_code: code, status: 'failed' });
    },
  );

  it('redirects when the processor never answers, with the transaction ID to confirm through the API', async () => {
    const landed = await submitAndLand(testCards.noAnswer, { session_id: 'slow1' });
    const params = Object.fromEntries(landed.searchParams);
    expect(params).toMatchObject({ keep: '1', session_id: 'slow1', last_four: '0093', card_type: 'visa', status: 'failed' });
    expect(params.token).toMatch(/^[A-Za-z0-9]{32}$/);
    const transaction = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/transactions/${params.transaction_id}`, headers: merchant.site.headers });
    expect(transaction.json()).toMatchObject({ status: 'incomplete', transaction_types: 'vault', token: params.token });
  });

  it('without a redirect, says the bank has not answered (in the page language) rather than "try again" when the processor never answers', async () => {
    await page.goto(await vaultUrl({ language: 'frFR' }));
    await fillCard(page, { number: testCards.noAnswer });
    await page.click('#submit');
    await page.waitForSelector('#outcome.failed', slow);
    const text = await page.textContent('#outcome');
    expect(text).toContain('Votre banque n’a pas encore répondu');
    expect(text).not.toContain('Une erreur s’est produite');
    // No second card attempt while the first may still complete.
    expect(await page.locator('#card-form').isVisible()).toBe(false);
    const id = Number(/(\d+)\s*$/.exec(text ?? '')?.[1]);
    const transaction = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/transactions/${id}`, headers: merchant.site.headers });
    expect(transaction.json()).toMatchObject({ status: 'incomplete', transaction_types: 'vault' });
  });

  it('runs the 3DS challenge inside the page: Authenticate succeeds', async () => {
    await page.goto(await vaultUrl({ redirect: `${e2e.host.origin}/done`, session_id: 's3ds' }));
    await fillCard(page, { number: testCards.visaChallenge });
    await page.click('#submit');
    const challenge = page.frameLocator('#challenge-frame');
    await challenge.getByRole('button', { name: 'Authenticate' }).waitFor();
    await screenshots(page, 'vault-3ds-challenge');
    await Promise.all([page.waitForURL(`${e2e.host.origin}/done**`), challenge.getByRole('button', { name: 'Authenticate' }).click()]);
    expect(new URL(page.url()).searchParams.get('status')).toBe('success');
  });

  it('shows the pending 3DS challenge again after a reload, and redirects with the parameters of the one vault (the payer had to start over)', async () => {
    const before = await e2e.t.db.one<{ id: number }>('SELECT COALESCE(max(id), 0)::int AS id FROM transactions');
    const own = await e2e.browser.newContext();
    const payer = await own.newPage();
    await payer.goto(await vaultUrl({ redirect: `${e2e.host.origin}/done?keep=1`, session_id: 'reload3ds' }));
    await fillCard(payer, { number: testCards.visaChallenge });
    await payer.click('#submit');
    const challenge = payer.frameLocator('#challenge-frame');
    await challenge.getByRole('button', { name: 'Authenticate' }).waitFor();
    const shown = await payer.getAttribute('#challenge-frame', 'src');
    // The browser keeps the attempt's session only for the vaulting app's path, out of the page's scripts' reach.
    const kept = (await own.cookies()).filter((cookie) => cookie.name.startsWith('tf_vault_'));
    expect(kept).toMatchObject([{ name: `tf_vault_${merchant.channelId}_reload3ds`, path: '/vault/', httpOnly: true, sameSite: 'Lax' }]);
    payer.once('dialog', (dialog) => void dialog.accept());
    await payer.reload();
    await challenge.getByRole('button', { name: 'Authenticate' }).waitFor();
    expect(await payer.getAttribute('#challenge-frame', 'src')).toBe(shown);
    expect(await payer.locator('#card-form').isVisible()).toBe(false);
    await Promise.all([payer.waitForURL(`${e2e.host.origin}/done**`, slow), challenge.getByRole('button', { name: 'Authenticate' }).click()]);
    const params = Object.fromEntries(new URL(payer.url()).searchParams);
    expect(params).toMatchObject({ keep: '1', session_id: 'reload3ds', last_four: '0042', card_type: 'visa', expiry_month: '12', expiry_year: '2030', status: 'success' });
    expect(params.token).toMatch(/^[A-Za-z0-9]{32}$/);
    // One vault: the challenge's, not a second card attempt beside it.
    const vaults = await e2e.t.db.query<{ id: number; status: string }>('SELECT id, status FROM transactions WHERE id > $1 AND site_id = $2', [before.id, merchant.site.siteId]);
    expect(vaults).toEqual([{ id: Number(params.transaction_id), status: 'complete' }]);
    const transaction = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/transactions/${params.transaction_id}`, headers: merchant.site.headers });
    expect(transaction.json()).toMatchObject({ status: 'complete', transaction_types: 'vault', token: params.token });
    // The challenge is over: the browser keeps nothing of it.
    expect((await own.cookies()).filter((cookie) => cookie.name.startsWith('tf_vault_'))).toEqual([]);
    await own.close();
  });

  it('two pages of one channel awaiting their challenges in one browser each show their own again after a reload', async () => {
    const own = await e2e.browser.newContext();
    const pages = [];
    for (const sessionId of ['firsttab', 'secondtab']) {
      const tab = await own.newPage();
      await tab.goto(await vaultUrl({ redirect: `${e2e.host.origin}/done`, session_id: sessionId }));
      await fillCard(tab, { number: testCards.visaChallenge });
      await tab.click('#submit');
      await tab.frameLocator('#challenge-frame').getByRole('button', { name: 'Authenticate' }).waitFor();
      pages.push({ tab, shown: await tab.getAttribute('#challenge-frame', 'src') });
    }
    expect(pages[0]!.shown).not.toBe(pages[1]!.shown);
    // The first tab, whose challenge was asked for before the second's, is reloaded last.
    for (const { tab, shown } of [...pages].reverse()) {
      tab.once('dialog', (dialog) => void dialog.accept());
      await tab.reload();
      await tab.frameLocator('#challenge-frame').getByRole('button', { name: 'Authenticate' }).waitFor();
      expect(await tab.getAttribute('#challenge-frame', 'src')).toBe(shown);
      expect(await tab.locator('#card-form').isVisible()).toBe(false);
    }
    await own.close();
  });

  it("another browser, or another token's page in the same browser, does not get a payer's pending 3DS challenge", async () => {
    const url = await vaultUrl({ redirect: `${e2e.host.origin}/done`, session_id: 'mine3ds' });
    const own = await e2e.browser.newContext();
    const payer = await own.newPage();
    await payer.goto(url);
    await fillCard(payer, { number: testCards.visaChallenge });
    await payer.click('#submit');
    await payer.frameLocator('#challenge-frame').getByRole('button', { name: 'Authenticate' }).waitFor();
    // Someone else holding the same URL (its auth token) gets a card form of their own.
    const other = await e2e.browser.newContext();
    const stranger = await other.newPage();
    await stranger.goto(url);
    expect(await stranger.locator('#card_number').isVisible()).toBe(true);
    expect(await stranger.locator('#challenge').isVisible()).toBe(false);
    // The payer's cookie brought to a page opened with another token (of the same channel) opens no challenge either.
    await other.addCookies((await own.cookies()).filter((cookie) => cookie.name.startsWith('tf_vault_')));
    await stranger.goto(await vaultUrl({ redirect: `${e2e.host.origin}/done`, session_id: 'mine3ds' }));
    expect(await stranger.locator('#card_number').isVisible()).toBe(true);
    expect(await stranger.locator('#challenge').isVisible()).toBe(false);
    await Promise.all([own.close(), other.close()]);
  });

  it('redirects, as when the processor never answers, when the vault is still pending after the challenge (the look-up did not settle it)', async () => {
    const sandbox = e2e.t.context.connector;
    try {
      await page.goto(await vaultUrl({ redirect: `${e2e.host.origin}/done`, session_id: 's3dspending' }));
      await fillCard(page, { number: testCards.visaChallenge });
      await page.click('#submit');
      const challenge = page.frameLocator('#challenge-frame');
      await challenge.getByRole('button', { name: 'Authenticate' }).waitFor();
      // The processor's look-up at the 3DS return fails in transit: the vault stays pending and may still complete.
      e2e.t.context.connector = { ...sandbox, name: 'lossy', lookup: async () => Promise.reject(new Error('connection reset')) };
      // The integrator gets the payer back with the transaction to confirm, not a page that waits for good.
      await Promise.all([page.waitForURL(`${e2e.host.origin}/done**`, slow), challenge.getByRole('button', { name: 'Authenticate' }).click()]);
      const params = Object.fromEntries(new URL(page.url()).searchParams);
      expect(params).toMatchObject({ session_id: 's3dspending', last_four: '0042', card_type: 'visa', status: 'failed' });
      expect(params.token).toMatch(/^[A-Za-z0-9]{32}$/);
      const transaction = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/transactions/${params.transaction_id}`, headers: merchant.site.headers });
      expect(transaction.json()).toMatchObject({ status: 'pending', transaction_types: 'vault', token: params.token });
    } finally {
      e2e.t.context.connector = sandbox;
    }
  });

  it('redirects with the outcome when the page gave up waiting but the vault went through meanwhile', async () => {
    await answerAfterPageGaveUp(page, '**/vault/1.8.0/?*');
    try {
      await page.goto(await vaultUrl({ redirect: `${e2e.host.origin}/done`, session_id: 'slowpage' }));
      await fillCard(page, { number: testCards.visa });
      await Promise.all([page.waitForURL(`${e2e.host.origin}/done**`, slow), page.click('#submit')]);
      const params = Object.fromEntries(new URL(page.url()).searchParams);
      expect(params).toMatchObject({ session_id: 'slowpage', last_four: '1111', status: 'success' });
      const transaction = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/transactions/${params.transaction_id}`, headers: merchant.site.headers });
      expect(transaction.json()).toMatchObject({ status: 'complete', transaction_types: 'vault', token: params.token });
    } finally {
      await page.unrouteAll();
    }
  });

  it('runs the 3DS challenge inside the page: Fail declines', async () => {
    await page.goto(await vaultUrl({ redirect: `${e2e.host.origin}/done`, session_id: 's3dsfail' }));
    await fillCard(page, { number: testCards.visaChallenge });
    await page.click('#submit');
    const challenge = page.frameLocator('#challenge-frame');
    await Promise.all([page.waitForURL(`${e2e.host.origin}/done**`), challenge.getByRole('button', { name: 'Fail' }).click()]);
    expect(new URL(page.url()).searchParams.get('status')).toBe('failed');
  });

  it('shows the outcome in the page when there is no redirect', async () => {
    await page.goto(await vaultUrl({ language: 'deDE' }));
    expect(await page.getAttribute('html', 'lang')).toBe('de-DE');
    await fillCard(page, { number: testCards.mastercard, name: 'Max Mustermann' });
    await page.click('#submit');
    await page.waitForSelector('#outcome.success');
    expect(await page.textContent('#outcome')).toContain('Ihre Karte wurde gespeichert.');
    await screenshots(page, 'vault-success-de');
  });

  it('shows a decline in the page as its code and the reason in the page language', async () => {
    await page.goto(await vaultUrl({ language: 'deDE', fail_code: '57' }));
    await fillCard(page, { number: testCards.visa });
    await page.click('#submit');
    await page.waitForSelector('#outcome.failed');
    const text = await page.textContent('#outcome');
    expect(text).toContain('800.100.157 abgelehnt (falsches Ablaufdatum)');
    expect(text).not.toContain('wrong expiry date');
    expect(await page.locator('#card_number').isVisible()).toBe(true);
  });

  it('after a decline, a reload of the page with the same token shows the attempts the token has left', async () => {
    const url = await vaultUrl({ auth: await cardVaultToken(e2e, merchant), language: 'frFR' });
    await page.goto(url);
    await fillCard(page, { number: testCards.visaDeclined });
    await page.click('#submit');
    await page.waitForSelector('#outcome.failed', slow);
    expect(await page.textContent('#outcome')).toContain('Tentatives restantes : 2.');
    await page.goto(url);
    // Before the payer types anything, in the page language; the form is there for the next try.
    expect(await page.locator('#attempts-left').isVisible()).toBe(true);
    expect(await page.textContent('#attempts-left')).toContain('Tentatives restantes : 2.');
    expect(await page.locator('#card_number').isVisible()).toBe(true);
    // A decline on this load says the new count; the note from the load is no longer shown.
    await fillCard(page, { number: testCards.visaDeclined });
    await page.click('#submit');
    await expect.poll(() => page.textContent('#outcome'), slow).toContain('Tentatives restantes : 1.');
    expect(await page.locator('#attempts-left').isVisible()).toBe(false);
    await screenshots(page, 'vault-attempts-left-fr');
  });

  it("once the token's failed attempts are used up, a reload shows the rejection in the page language and no form, even with a redirect", async () => {
    const token = await cardVaultToken(e2e, merchant);
    const url = await vaultUrl({ auth: token, language: 'frFR' });
    // Three declines with one token, one per load of the page.
    for (let load = 1; load <= 3; load++) {
      await page.goto(url);
      await fillCard(page, { number: testCards.visaDeclined });
      await page.click('#submit');
      await page.waitForSelector('#outcome.failed', slow);
    }
    expect(await page.textContent('#outcome')).toContain('Trois tentatives ont échoué');
    const cardsBefore = await e2e.t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards WHERE site_id = $1', [merchant.site.siteId]);
    const sessionsBefore = await e2e.t.db.one<{ id: number }>('SELECT COALESCE(max(id), 0)::int AS id FROM hosted_sessions');

    for (const reload of [url, await vaultUrl({ auth: token, language: 'frFR', redirect: `${e2e.host.origin}/done`, session_id: 'spent1' })]) {
      const response = await page.goto(reload);
      expect(response?.status()).toBe(200);
      // The rejection, not a redirect: nothing was attempted on this load (docs/hosted-pages.md).
      expect(page.url()).toBe(reload);
      expect(await page.getAttribute('html', 'lang')).toBe('fr-FR');
      expect(await page.textContent('main')).toContain('Trois tentatives ont échoué : aucune autre tentative n’est possible.');
      // No form: the payer cannot type a card, so none is captured.
      expect(await page.locator('#card-form, #card_number, #submit').count()).toBe(0);
      await page.waitForLoadState('networkidle');
    }
    await screenshots(page, 'vault-attempts-used-fr');
    const cardsAfter = await e2e.t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards WHERE site_id = $1', [merchant.site.siteId]);
    expect(cardsAfter.count).toBe(cardsBefore.count);
    const captures = await e2e.t.db.one<{ count: number }>('SELECT COALESCE(sum(captures), 0)::int AS count FROM hosted_sessions WHERE id > $1', [sessionsBefore.id]);
    expect(captures.count).toBe(0);
  });

  // The token's cards are bounded apart from its failed attempts (docs/hosted-pages.md "Card
  // captures per page"): no attempt failed here, so "Three failed attempts" would be untrue.
  it('once the token captured all the cards it may, says so in the page language (not "three failed attempts"), and a reload shows no form', async () => {
    const token = await cardVaultToken(e2e, merchant);
    const url = await vaultUrl({ auth: token, language: 'frFR' });
    await page.goto(url);
    // Meanwhile the token itself captures the cards it may (posted with the JWT, as a leaked URL allows).
    for (let index = 0; index < limits.cardVaultCapturesPerTokenMax; index++) {
      const captured = await e2e.t.app.inject({
        method: 'POST', url: `/${merchant.site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${token}` },
        payload: { channels: merchant.channelId, card_number: testCards.visa, expiry_month: '04', expiry_year: new Date().getUTCFullYear() + 2, cvv: '123' },
      });
      expect(captured.statusCode).toBe(201);
    }
    const cardsBefore = await e2e.t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards WHERE site_id = $1', [merchant.site.siteId]);
    await fillCard(page, { number: testCards.visa });
    await page.click('#submit');
    await page.waitForSelector('#outcome.failed', slow);
    const spent = 'Aucune autre carte ne peut être saisie sur cette page. Veuillez contacter';
    expect(await page.textContent('#outcome')).toContain(spent);
    expect(await page.textContent('#outcome')).not.toContain('Trois tentatives');
    expect(await page.locator('#card-form').isVisible()).toBe(false);

    const response = await page.goto(url);
    expect(response?.status()).toBe(200);
    expect(await page.textContent('main')).toContain(spent);
    expect(await page.textContent('main')).not.toContain('Trois tentatives');
    expect(await page.locator('#card-form, #card_number, #submit').count()).toBe(0);
    await screenshots(page, 'vault-captures-used-fr');
    const cardsAfter = await e2e.t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards WHERE site_id = $1', [merchant.site.siteId]);
    expect(cardsAfter.count).toBe(cardsBefore.count);
  });

  it('shows an error page and no form for an expired or foreign auth token', async () => {
    const expired = await signJwt(e2e.t.config.secrets.jwtSecret, { userId: merchant.site.userId, kind: 'cardvaultuser', siteId: merchant.site.siteId }, new Date(Date.now() - 20 * 60 * 1000));
    const response = await page.goto(await vaultUrl({ auth: expired }));
    expect(response?.status()).toBe(403);
    expect(await page.locator('#card_number').count()).toBe(0);
    expect(await page.textContent('main')).toContain('missing, invalid or has expired');
    await screenshots(page, 'vault-expired-auth');
    const other = await createMerchant(e2e);
    const foreign = await page.goto(await vaultUrl({ auth: await cardVaultToken(e2e, other) }));
    expect(foreign?.status()).toBe(403);
    expect(await page.locator('#card_number').count()).toBe(0);
  });

  it('validates every input and refuses unknown versions', async () => {
    const bad = await page.goto(await vaultUrl({ redirect: 'javascript:alert(1)', country: 'XX', email: 'nope', session_id: 'a b', fail_code: '42' }));
    expect(bad?.status()).toBe(400);
    const text = await page.textContent('main');
    for (const name of ['redirect', 'country', 'email', 'session_id', 'fail_code']) expect(text).toContain(name);
    expect(await page.locator('#card_number').count()).toBe(0);
    const unknown = await page.goto(`${e2e.baseUrl}/vault/1.7.9/?channels=1`);
    expect(unknown?.status()).toBe(404);
  });
});
