import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { signAuthString } from '../../src/domain/hosted/auth-string.js';
import { formatMoney } from '../../src/domain/money.js';
import { messages as germanPages } from '../../src/i18n/pages/deDE.js';
import { limits } from '../../src/limits.js';
import { createMerchant, fillCard, answerAfterPageGaveUp, giveUpSooner, loseFirstPaymentAnswer, screenshots, startE2E, testCards, type E2E, type Merchant } from './support.js';

/** Browser round trips on a busy two-core machine: poll generously (expect.poll's default is 1 s). */
const slow = { timeout: 15_000 };

/**
 * The payment modal on an integrator's page (another origin), in Chromium: the host page
 * includes payment-modal.js with Subresource Integrity and records every callback.
 */
let e2e: E2E;
let merchant: Merchant;
let page: Page;
let events: { name: string; argument: any }[] = [];

const callbackNames = ['token_error', 'booking_logged', 'booking_exists', 'booking_error', 'transaction_logged', 'transaction_failed', 'transaction_rejected', 'transaction_timeout', 'transaction_error', 'modal_closed', 'close_window_attempted'];

function hostPage(baseUrl: string): string {
  const script = readFileSync('dist/web/modal/1.0.0/payment-modal.js');
  const integrity = `sha384-${createHash('sha384').update(script).digest('base64')}`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Seaside Tours checkout</title>
<script src="${baseUrl}/modal/1.0.0/payment-modal.js" integrity="${integrity}" crossorigin="anonymous"></script></head>
<body><h1>Seaside Tours</h1><label>Booking <input class="tmt_booking_id" value="0"></label>
<p><a id="terms" href="/terms">Terms</a> <button id="pay" type="button">Pay now</button></p><div id="drawer" inert><a href="/menu">Menu</a></div></body></html>`;
}

beforeAll(async () => {
  // A short processor bound so the no-answer card times out quickly.
  e2e = await startE2E({ PROCESSOR_TIMEOUT_MS: '1000', SANDBOX_NO_ANSWER_MS: '5000' });
  merchant = await createMerchant(e2e);
  e2e.host.pages.set('/checkout', hostPage(e2e.baseUrl));
  page = await e2e.browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.exposeFunction('recordCallback', (name: string, argument: unknown) => events.push({ name, argument }));
  page.on('dialog', (dialog) => void dialog.accept());
});
afterAll(async () => e2e?.close());
beforeEach(async () => {
  events = [];
  await page.unrouteAll();
  await page.goto(`${e2e.host.origin}/checkout`);
});

const bookingData = { booking_id: 0, firstname: 'Grace', surname: 'Hopper', email: 'grace@example.com', date: '2031-06-30', countries: 'GB', reference: 'SEA-1' };

function signed(total: number, options: { at?: Date; secret?: string; reference?: string } = {}) {
  return signAuthString({ channels: merchant.channelId, currencies: 'USD', total, reference: options.reference ?? 'SEA-1' }, options.secret ?? merchant.channelSecret, options.at ?? new Date());
}

async function openModal(options: Record<string, unknown>): Promise<void> {
  await page.evaluate(({ options, names }) => {
    const callbacks = Object.fromEntries(names.map((name) => [name, (argument: unknown) => (window as any).recordCallback(name, argument)]));
    (window as any).TrustfareModal.open({ ...options, callbacks });
  }, { options, names: callbackNames });
}

function modalOptions(total: number, extra: Record<string, unknown> = {}) {
  return { path: merchant.site.path, channels: merchant.channelId, currencies: 'USD', total, auth: signed(total), verify: ['reference'], booking: bookingData, ...extra };
}

const frame = () => page.frameLocator('iframe[title="Payment"]');
const names = () => events.map((event) => event.name);

/** The frame's payment (`POST /hosted/payments`) is held on its way until `release()`: the modal is processing meanwhile. */
async function holdPayment(): Promise<{ paymentRequested: Promise<void>; release: () => void }> {
  let release!: () => void;
  let reached!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const paymentRequested = new Promise<void>((resolve) => (reached = resolve));
  await page.route('**/hosted/payments', async (route) => {
    reached();
    await held;
    await route.continue();
  });
  return { paymentRequested, release };
}

/** Pays in the modal's frame; `inFrame` for a frame titled in another language than English. */
async function pay(card: string, inFrame = frame()): Promise<void> {
  await inFrame.locator('#card_number').fill(card);
  await inFrame.locator('#expiry').fill('12/30');
  await inFrame.locator('#cvv').fill('123');
  await inFrame.locator('#submit').click();
}

describe('payment modal in Chromium', () => {
  it('creates the booking (booking_logged), takes the card in our frame and reports transaction_logged', async () => {
    await openModal(modalOptions(12_500));
    await expect.poll(names, slow).toEqual(['booking_logged']);
    const booking = events[0]!.argument;
    expect(booking).toMatchObject({ firstname: 'Grace', surname: 'Hopper', total: 12_500, currencies: 'USD', channels: merchant.channelId, reference: 'SEA-1' });
    await frame().locator('#submit').waitFor();
    expect(await frame().locator('#booking-id').textContent()).toBe(String(booking.id));
    await screenshots(page, 'modal-form');
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_logged']);
    const transaction = events[1]!.argument;
    expect(transaction).toMatchObject({ status: 'complete', total: 12_500, currencies: 'USD', transaction_types: 'purchase', bookings: [expect.objectContaining({ id: booking.id })] });
    expect(transaction).toHaveProperty('3ds_response');
    expect(transaction).toHaveProperty('api_urls');
    expect(transaction).toHaveProperty('statement_batches');
    await frame().locator('#outcome.success').waitFor();
    await screenshots(page, 'modal-success');
    const read = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/bookings/${booking.id}`, headers: merchant.site.headers });
    expect(read.json()).toMatchObject({ status: 'paid', total_unpaid: 0 });
    // The card never touched the host page: no input of the host document holds it.
    expect(await page.evaluate(() => document.body.innerHTML.includes('4111'))).toBe(false);
  });

  it('reads an existing booking from the .tmt_booking_id input (booking_exists) when the auth string signs its booking_id', async () => {
    const created = await e2e.t.app.inject({
      method: 'POST', url: `/${merchant.site.path}/site-json/vendor/v2/bookings`, headers: merchant.site.headers,
      payload: { firstname: 'Alan', surname: 'Turing', email: 'alan@example.com', date: '2031-07-01', total: 30_000, currencies: 'USD', countries: 'GB', channels: merchant.channelId, reference: 'SEA-2' },
    });
    const bookingId = created.json().id as number;
    await page.fill('.tmt_booking_id', String(bookingId));
    const total = 10_000;
    // A string signed without the booking ID may only create a booking: the booking is not shown.
    const unsigned = signAuthString({ channels: merchant.channelId, currencies: 'USD', total }, merchant.channelSecret, new Date());
    await openModal({ path: merchant.site.path, channels: merchant.channelId, currencies: 'USD', total, auth: unsigned });
    await expect.poll(names, slow).toEqual(['token_error']);
    expect(events[0]!.argument).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    expect(JSON.stringify(events)).not.toContain('Turing');
    events = [];
    const auth = signAuthString({ channels: merchant.channelId, currencies: 'USD', total, booking_id: bookingId }, merchant.channelSecret, new Date());
    await openModal({ path: merchant.site.path, channels: merchant.channelId, currencies: 'USD', total, auth, verify: ['booking_id'] });
    await expect.poll(names, slow).toEqual(['modal_closed', 'booking_exists']);
    expect(events[1]!.argument).toMatchObject({ id: bookingId, surname: 'Turing', total: 30_000 });
  });

  it('takes a signed field from the options when the booking does not carry it (docs/modal.md: booking, then options)', async () => {
    const created = await e2e.t.app.inject({
      method: 'POST', url: `/${merchant.site.path}/site-json/vendor/v2/bookings`, headers: merchant.site.headers,
      payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-07-01', total: 20_000, currencies: 'USD', countries: 'GB', channels: merchant.channelId },
    });
    const total = 7_000;
    const bookingId = created.json().id as number;
    const auth = signAuthString({ channels: merchant.channelId, currencies: 'USD', total, reference: 'REF-9', booking_id: bookingId }, merchant.channelSecret, new Date());
    await openModal({ path: merchant.site.path, channels: merchant.channelId, currencies: 'USD', total, auth, verify: ['reference', 'booking_id'], reference: 'REF-9', booking: { booking_id: bookingId } });
    await expect.poll(names, slow).toEqual(['booking_exists']);
    events = [];
    // A different value than the one signed is still refused.
    await openModal({ path: merchant.site.path, channels: merchant.channelId, currencies: 'USD', total, auth, verify: ['reference', 'booking_id'], reference: 'REF-10', booking: { booking_id: bookingId } });
    // (Opening again closes the first modal.)
    await expect.poll(names, slow).toEqual(['modal_closed', 'token_error']);
  });

  it('reports booking_error with data.params for bad booking data', async () => {
    // The spec's example: the booking currency differs from the channel base currency.
    await openModal(modalOptions(5_000, { booking: { ...bookingData, currencies: 'EUR' } }));
    await expect.poll(names, slow).toEqual(['booking_error']);
    const error = events[0]!.argument;
    expect(error).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { channels: expect.stringContaining('currency') } } });
    expect(error.message).toContain('channels');
    await frame().locator('#fatal').waitFor();
    // Not the service's English explanation (that is the callback's), nor the API's field name, which the payer does not know.
    expect(await frame().locator('#fatal').textContent()).toBe('The booking details sent to this page are not valid.');
    await screenshots(page, 'modal-booking-error');
    events = [];
    await openModal(modalOptions(5_000, { language: 'deDE', booking: { ...bookingData, email: 'not-an-email', firstname: undefined } }));
    await expect.poll(names, slow).toEqual(['modal_closed', 'booking_error']);
    expect(Object.keys(events[1]!.argument.data.params)).toEqual(expect.arrayContaining(['email', 'firstname']));
    // The fields named in the frame's language: "firstname, email" was put into the German sentence.
    const german = page.frameLocator('iframe').locator('#fatal');
    await expect.poll(() => german.textContent(), slow).toContain(germanPages.bookingInvalid.replace('{message}', ''));
    const fatal = await german.textContent();
    expect(fatal).toContain(germanPages.leadTraveller);
    expect(fatal).toContain(germanPages.email);
    expect(fatal).not.toMatch(/firstname|email/);
    const drafts = await e2e.t.db.query("SELECT id FROM bookings WHERE site_id = $1 AND currency = 'EUR'", [merchant.site.siteId]);
    expect(drafts).toHaveLength(0);
  });

  it('fires token_error for a wrongly signed or expired auth string, and shows no form', async () => {
    await openModal(modalOptions(5_000, { auth: signed(5_000, { secret: 'not-the-secret' }) }));
    await expect.poll(names, slow).toEqual(['token_error']);
    expect(events[0]!.argument).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    expect(events[0]!.argument.message).toContain('session has expired');
    expect(await frame().locator('#payment').isVisible()).toBe(false);
    await screenshots(page, 'modal-token-error');
    events = [];
    await openModal(modalOptions(5_000, { auth: signed(5_000, { at: new Date(Date.now() - 16 * 60 * 1000) }) }));
    await expect.poll(names, slow).toEqual(['modal_closed', 'token_error']);
    // A tampered amount is refused too: the auth string covers channels, currencies, total, reference.
    events = [];
    await openModal(modalOptions(5_000, { total: 1 }));
    await expect.poll(names, slow).toEqual(['modal_closed', 'token_error']);
  });

  it('fires transaction_failed three times, then transaction_rejected, and stops taking cards', async () => {
    await openModal(modalOptions(7_000));
    await frame().locator('#submit').waitFor();
    for (let attempt = 1; attempt <= 3; attempt++) {
      await pay(testCards.visaDeclined);
      await expect.poll(() => names().filter((name) => name === 'transaction_failed').length, { ...slow, message: JSON.stringify(events.map((event) => [event.name, event.argument?.message ?? event.argument?.status])) }).toBe(attempt);
    }
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_failed', 'transaction_failed', 'transaction_failed', 'transaction_rejected']);
    expect(events[1]!.argument).toMatchObject({ status: 'failed', total: 7_000 });
    expect(events[4]!.argument.message).toContain('Three failed attempts');
    expect(await frame().locator('#card-form').isVisible()).toBe(false);
    expect(await frame().locator('#outcome').textContent()).toContain('800.100.100 declined (transaction declined for unknown reason)');
    await screenshots(page, 'modal-rejected');
  });

  it('shows no form when reopened with an auth string that used up its failed attempts: transaction_rejected at once, no card taken', async () => {
    const options = modalOptions(7_100);
    await openModal(options);
    for (let attempt = 1; attempt <= 3; attempt++) {
      await pay(testCards.visaDeclined);
      await expect.poll(() => names().filter((name) => name === 'transaction_failed').length, slow).toBe(attempt);
    }
    await expect.poll(names, slow).toContain('transaction_rejected');
    // The same modal's frame reloaded says so again, but the integrator hears it once.
    const reloaded = page.waitForEvent('framenavigated', (navigated) => navigated.url().includes('/modal/1.0.0/frame'));
    await reloadFrame();
    await reloaded;
    await expect.poll(() => frame().locator('#outcome').textContent(), slow).toContain('Three failed attempts');
    await page.keyboard.press('Escape');
    await expect.poll(names, slow).toContain('modal_closed');
    expect(names().filter((name) => name === 'transaction_rejected')).toHaveLength(1);
    const { count: before } = await e2e.t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards');
    events = [];
    await openModal(options);
    // The form was shown, the payer typed a card, it was stored, and only then was it refused.
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_rejected']);
    expect(events[1]!.argument.message).toContain('Three failed attempts');
    await expect.poll(() => frame().locator('#outcome').textContent(), slow).toContain('Three failed attempts');
    expect(await frame().locator('#card-form').isVisible()).toBe(false);
    expect((await e2e.t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards')).count).toBe(before);
  });

  it('fires transaction_rejected and says no more cards can be entered (not "three failed attempts") when the page took all the cards it may', async () => {
    await openModal(modalOptions(7_100));
    await expect.poll(names, slow).toEqual(['booking_logged']);
    await frame().locator('#submit').waitFor();
    await e2e.t.db.query(`UPDATE hosted_sessions SET captures = $2 WHERE booking_id = $1 AND kind = 'modal'`, [events[0]!.argument.id, limits.hostedCardCapturesPerSessionMax]);
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_rejected']);
    const text = await frame().locator('#outcome').textContent();
    expect(text).toContain('No more cards can be entered on this page. Please contact');
    expect(text).not.toContain('Three failed attempts');
    expect(await frame().locator('#card-form').isVisible()).toBe(false);
  });

  it('fires transaction_timeout with the booking ID when the processor never answers', async () => {
    await openModal(modalOptions(8_000));
    await expect.poll(names, slow).toEqual(['booking_logged']);
    await frame().locator('#submit').waitFor();
    await pay(testCards.noAnswer);
    await expect.poll(names, { timeout: 20_000 }).toEqual(['booking_logged', 'transaction_timeout']);
    expect(events[1]!.argument).toMatchObject({ booking_id: events[0]!.argument.id, name: 'TimeoutError' });
    expect(events[1]!.argument.message).toContain('timed out');
    // The spec's way to the outcome: the booking's last transaction_ids entry, then that transaction.
    const api = `/${merchant.site.path}/site-json/vendor/v2`;
    const booking = (await e2e.t.app.inject({ url: `${api}/bookings/${events[1]!.argument.booking_id}`, headers: merchant.site.headers })).json();
    expect(booking.transaction_ids).toHaveLength(1);
    const transaction = (await e2e.t.app.inject({ url: `${api}/transactions/${booking.transaction_ids.at(-1)}`, headers: merchant.site.headers })).json();
    expect(transaction).toMatchObject({ status: 'incomplete', total: 8_000, bookings: [expect.objectContaining({ id: booking.id })] });
  });

  it('fires transaction_timeout when the frame gave up waiting, then transaction_logged and the receipt when the payment went through meanwhile', async () => {
    await answerAfterPageGaveUp(page, '**/modal/1.0.0/frame?*');
    await openModal(modalOptions(8_150));
    await expect.poll(names, slow).toEqual(['booking_logged']);
    await frame().locator('#submit').waitFor();
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_timeout', 'transaction_logged']);
    expect(events[1]!.argument).toMatchObject({ booking_id: events[0]!.argument.id, name: 'TimeoutError' });
    expect(events[2]!.argument).toMatchObject({ status: 'complete', total: 8_150 });
    await frame().locator('#outcome.success').waitFor();
    expect(await frame().locator('#outcome').textContent()).toContain(`Transaction ID${events[2]!.argument.id}`);
  });

  it("after giving up, never reports the page's previous attempt as this one's outcome: transaction_timeout only while this attempt is not recorded", async () => {
    await giveUpSooner(page, '**/modal/1.0.0/frame?*');
    // The second payment reaches the service only after the frame gave up and looked up what it
    // came to: at that moment the session's latest recorded attempt is the first one's decline.
    let payments = 0;
    let lookedUp!: () => void;
    const lookUp = new Promise<void>((resolve) => (lookedUp = resolve));
    await page.route('**/hosted/payments/current*', async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response });
      lookedUp();
    });
    await page.route('**/hosted/payments', async (route) => {
      if (route.request().method() !== 'POST' || ++payments === 1) return route.continue();
      await lookUp;
      // Sent on from here: the frame has stopped waiting for it (and aborted its own request).
      const response = await route.fetch();
      await route.fulfill({ response }).catch(() => undefined);
    });
    await openModal(modalOptions(8_240));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visaDeclined);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_failed']);
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_failed', 'transaction_timeout']);
    await frame().locator('#outcome.failed').waitFor();
    expect(await frame().locator('#outcome').textContent()).toContain(`Your booking ID is ${events[0]!.argument.id}`);
    // The payment the frame gave up on goes through meanwhile; it is not reported as the decline.
    await expect.poll(async () => (await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/bookings/${events[0]!.argument.id}`, headers: merchant.site.headers })).json().status, slow).toBe('paid');
    expect(names()).toEqual(['booking_logged', 'transaction_failed', 'transaction_timeout']);
  });

  it('fires transaction_error (TypeError, fetch failed) when the network fails', async () => {
    await page.route('**/hosted/payments', (route) => route.abort('internetdisconnected'));
    await openModal(modalOptions(9_000));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_error']);
    expect(events[1]!.argument).toMatchObject({ name: 'TypeError' });
    expect(events[1]!.argument.message).toContain('fetch failed');
  });

  it('reports the payment that went through when its answer was lost and the payer pays again: transaction_logged, never a second charge', async () => {
    // The first payment reaches the service and is charged; its answer never reaches the frame.
    await loseFirstPaymentAnswer(page);
    await openModal(modalOptions(9_150));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_error']);
    // The form is still there: the payer tries again, and is told (as the integrator is) that it was paid.
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_error', 'transaction_logged']);
    expect(events[2]!.argument).toMatchObject({ status: 'complete', total: 9_150 });
    await frame().locator('#outcome.success').waitFor();
    const charged = await e2e.t.db.query("SELECT id FROM transactions t JOIN transaction_bookings tb ON tb.transaction_id = t.id WHERE tb.booking_id = $1 AND t.status = 'complete'", [events[0]!.argument.id]);
    expect(charged).toHaveLength(1);
  });

  it('shows the 3DS challenge of a payment whose answer was lost when the payer pays again, and reports its outcome', async () => {
    await loseFirstPaymentAnswer(page);
    await openModal(modalOptions(9_170));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visaChallenge);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_error']);
    // The payment waits for a challenge the payer never saw: paying again shows it (it said "being processed, reload in a few minutes").
    await pay(testCards.visaChallenge);
    await frame().frameLocator('#challenge-frame').getByRole('button', { name: 'Authenticate' }).click();
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_error', 'transaction_logged']);
    expect(events[2]!.argument).toMatchObject({ status: 'complete', total: 9_170 });
  });

  it('reopens the same booking when only the frame is reloaded: no second booking, no second booking_logged', async () => {
    await openModal(modalOptions(9_180, { auth: signed(9_180, { reference: 'SEA-RELOAD' }), booking: { ...bookingData, reference: 'SEA-RELOAD' } }));
    await expect.poll(names, slow).toEqual(['booking_logged']);
    const booking = events[0]!.argument;
    await frame().locator('#submit').waitFor();
    // The payer reloads the frame alone (context menu, "Reload frame"): it says `ready` again.
    const inner = page.frames().find((candidate) => candidate.url().includes('/modal/1.0.0/frame'))!;
    await inner.evaluate(() => location.reload());
    await expect.poll(() => frame().locator('#booking-id').textContent().catch(() => null), slow).toBe(String(booking.id));
    await frame().locator('#submit').waitFor();
    const made = await e2e.t.db.query("SELECT id FROM bookings WHERE reference = 'SEA-RELOAD'");
    expect(made).toHaveLength(1);
    // The reloaded frame pays the booking the integrator was told of.
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_logged']);
    expect(events[1]!.argument).toMatchObject({ status: 'complete', bookings: [expect.objectContaining({ id: booking.id })] });
  });

  /** The payer reloads the modal's frame alone (context menu, "Reload frame"): it says `ready` again. */
  async function reloadFrame(): Promise<void> {
    const inner = page.frames().find((candidate) => candidate.url().includes('/modal/1.0.0/frame'))!;
    await inner.evaluate(() => setTimeout(() => location.reload()));
  }

  it('makes no second booking when the frame is reloaded before its first session answered', async () => {
    let held = false;
    await page.route('**/hosted/modal/sessions', async (route) => {
      if (held) return route.continue();
      held = true;
      // The service opens the session and creates the booking; the frame is reloaded before the
      // answer arrives (the reload cancels the request: it is never answered here).
      await route.fetch();
      await reloadFrame();
    });
    await openModal(modalOptions(9_190, { auth: signed(9_190, { reference: 'SEA-EARLY' }), booking: { ...bookingData, reference: 'SEA-EARLY' } }));
    await expect.poll(names, slow).toEqual(['booking_logged']);
    await frame().locator('#submit').waitFor();
    const made = await e2e.t.db.query<{ id: number }>("SELECT id FROM bookings WHERE reference = 'SEA-EARLY'");
    expect(made).toHaveLength(1);
    expect(events[0]!.argument).toMatchObject({ id: made[0]!.id, status: 'draft' });
    expect(await frame().locator('#booking-id').textContent()).toBe(String(made[0]!.id));
  });

  it('shows the pending 3DS challenge again when the frame is reloaded during it, and reports the one payment (it said "being processed" for 30 minutes)', async () => {
    await openModal(modalOptions(9_197, { auth: signed(9_197, { reference: 'SEA-3DS' }), booking: { ...bookingData, reference: 'SEA-3DS' } }));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visaChallenge);
    await frame().frameLocator('#challenge-frame').getByRole('button', { name: 'Authenticate' }).waitFor();
    const reloaded = page.waitForEvent('framenavigated', (navigated) => navigated.url().includes('/modal/1.0.0/frame'));
    await reloadFrame();
    await reloaded;
    await frame().frameLocator('#challenge-frame').getByRole('button', { name: 'Authenticate' }).click();
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_logged']);
    await frame().locator('#outcome.success').waitFor();
    const read = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/bookings/${events[0]!.argument.id}`, headers: merchant.site.headers });
    expect(read.json()).toMatchObject({ status: 'paid', total_unpaid: 0, transaction_ids: [events[1]!.argument.id] });
  });

  it('shows the payment made, not a booking error, when the frame is reloaded after paying, and reports it once', async () => {
    await openModal(modalOptions(9_195, { auth: signed(9_195, { reference: 'SEA-PAID' }), booking: { ...bookingData, reference: 'SEA-PAID' } }));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_logged']);
    const transaction = events[1]!.argument;
    await reloadFrame();
    await expect.poll(() => frame().locator('#outcome.success').textContent().catch(() => null), slow).toContain('Payment complete');
    expect(await frame().locator('#outcome').textContent()).toContain(String(transaction.id));
    expect(await frame().locator('#fatal').isVisible()).toBe(false);
    expect(await frame().locator('#card-form').isVisible()).toBe(false);
    // The integrator heard of the payment once, and of no error.
    expect(names()).toEqual(['booking_logged', 'transaction_logged']);
  });

  it('reports the payment made when the frame is reloaded after its answer was lost (transaction_logged), never a second charge', async () => {
    await loseFirstPaymentAnswer(page);
    await openModal(modalOptions(9_196, { auth: signed(9_196, { reference: 'SEA-LOST' }), booking: { ...bookingData, reference: 'SEA-LOST' } }));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_error']);
    await reloadFrame();
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_error', 'transaction_logged']);
    expect(events[2]!.argument).toMatchObject({ status: 'complete', total: 9_196, bookings: [expect.objectContaining({ id: events[0]!.argument.id })] });
    await frame().locator('#outcome.success').waitFor();
  });

  it('no longer counts as processing once a frame reloaded mid-payment shows the payment made: no close_window_attempted, modal_closed says closed', async () => {
    // The payment is made; the payer reloads the frame before its answer arrives (the reload cancels it).
    await page.route('**/hosted/payments', async (route) => {
      await route.fetch();
      await reloadFrame();
    });
    await openModal(modalOptions(9_198, { auth: signed(9_198, { reference: 'SEA-MID' }), booking: { ...bookingData, reference: 'SEA-MID' } }));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_logged']);
    await frame().locator('#outcome.success').waitFor();
    // Nothing is processing now: leaving the page is not a close attempt during a payment.
    await page.evaluate(() => window.dispatchEvent(new Event('beforeunload', { cancelable: true })));
    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_logged', 'modal_closed']);
    expect(events[2]!.argument).toEqual({ message: 'The payment modal was closed.' });
    await expect.poll(() => page.locator('iframe').count(), slow).toBe(0);
  });

  it('no longer counts as processing once a frame reloaded during its third declined attempt shows the rejection', async () => {
    await openModal(modalOptions(9_199, { auth: signed(9_199, { reference: 'SEA-MID3' }), booking: { ...bookingData, reference: 'SEA-MID3' } }));
    await frame().locator('#submit').waitFor();
    for (let attempt = 1; attempt <= 2; attempt++) {
      await pay(testCards.visaDeclined);
      await expect.poll(() => names().filter((name) => name === 'transaction_failed').length, slow).toBe(attempt);
    }
    await page.route('**/hosted/payments', async (route) => {
      await route.fetch();
      await reloadFrame();
    });
    await pay(testCards.visaDeclined);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_failed', 'transaction_failed', 'transaction_rejected']);
    await page.evaluate(() => window.dispatchEvent(new Event('beforeunload', { cancelable: true })));
    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_failed', 'transaction_failed', 'transaction_rejected', 'modal_closed']);
    expect(events[4]!.argument).toEqual({ message: 'The payment modal was closed.' });
    await expect.poll(() => page.locator('iframe').count(), slow).toBe(0);
  });

  it('fires transaction_error, not booking_error, when the service cannot open the modal for a reason other than the booking data', async () => {
    await page.route('**/hosted/modal/sessions', (route) => route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ code: 'rest_unavailable', message: 'Try again in a minute.', data: { status: 503 } }) }));
    await openModal(modalOptions(9_200));
    await expect.poll(names, slow).toEqual(['transaction_error']);
    expect(events[0]!.argument).toEqual({ name: 'Error', message: 'Try again in a minute.' });
    // The service answered: the payer is not told to check their connection.
    expect(await frame().locator('#fatal').textContent()).toBe('The payment service cannot take this payment right now. Please try again later.');
  });

  it('tells the payer in the page language when the service refuses the payment for a reason other than the card data', async () => {
    await page.route('**/hosted/payments', (route) => route.fulfill({ status: 429, contentType: 'application/json', body: JSON.stringify({ code: 'rest_too_many_requests', message: 'Too many requests: try again in 60 seconds.', data: { status: 429 } }) }));
    await openModal(modalOptions(9_300, { language: 'deDE' }));
    // The frame's title is in the modal language too: the host page's one iframe.
    const german = page.frameLocator('iframe');
    await german.locator('#submit').waitFor();
    await pay(testCards.visa, german);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_error']);
    expect(events[1]!.argument).toEqual({ name: 'Error', message: 'Too many requests: try again in 60 seconds.' });
    await expect.poll(() => german.locator('#outcome').textContent(), slow).toBe('Der Zahlungsdienst kann diese Zahlung gerade nicht annehmen. Bitte versuchen Sie es später erneut.');
  });

  it('says the booking was paid meanwhile, in the page language, when another payment came in after the modal opened', async () => {
    await openModal(modalOptions(9_400, { language: 'deDE' }));
    const german = page.frameLocator('iframe');
    await german.locator('#submit').waitFor();
    await expect.poll(names, slow).toEqual(['booking_logged']);
    const bookingId = events[0]!.argument.id;
    const paidElsewhere = await e2e.t.app.inject({
      method: 'POST', url: `/${merchant.site.path}/site-json/vendor/v2/transactions`, headers: merchant.site.headers,
      payload: { transaction_types: 'purchase', channels: merchant.channelId, currencies: 'USD', total: 9_400, token: 'tok_visa', bookings: [{ id: bookingId, currencies: 'USD', total: 9_400 }] },
    });
    expect(paidElsewhere.json()).toMatchObject({ status: 'complete' });
    await pay(testCards.visa, german);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_error']);
    expect(events[1]!.argument).toEqual({ name: 'Error', message: 'Invalid parameter(s): bookings' });
    await expect.poll(() => german.locator('#outcome.success').textContent(), slow).toBe(germanPages.fullyPaid);
    expect(await german.locator('#card-form').isVisible()).toBe(false);
  });

  /** A booking made through the API and a card payment of its whole total (`card`: the token and 3DS choice). */
  async function bookingPaidThroughApi(total: number, card: { token: string; attempt_3ds?: boolean }): Promise<{ bookingId: number; payment: Record<string, unknown> }> {
    const created = await e2e.t.app.inject({
      method: 'POST', url: `/${merchant.site.path}/site-json/vendor/v2/bookings`, headers: merchant.site.headers,
      payload: { firstname: 'Alan', surname: 'Turing', email: 'alan@example.com', date: '2031-07-01', total, currencies: 'USD', countries: 'GB', channels: merchant.channelId },
    });
    const bookingId = created.json().id as number;
    const payment = await e2e.t.app.inject({
      method: 'POST', url: `/${merchant.site.path}/site-json/vendor/v2/transactions`, headers: merchant.site.headers,
      payload: { transaction_types: 'purchase', channels: merchant.channelId, currencies: 'USD', total, ...card, bookings: [{ id: bookingId, currencies: 'USD', total }] },
    });
    return { bookingId, payment: payment.json() };
  }

  it("says for how many minutes at most a booking is held when the integrator's page is opened anew during a 3DS challenge (it said \"reload in a few minutes\")", async () => {
    const { bookingId, payment } = await bookingPaidThroughApi(9_600, { token: 'tok_visa_3ds_challenge', attempt_3ds: true });
    expect(payment).toMatchObject({ status: 'pending' });
    const auth = signAuthString({ channels: merchant.channelId, currencies: 'USD', total: 9_600, booking_id: bookingId }, merchant.channelSecret, new Date());
    await openModal({ path: merchant.site.path, channels: merchant.channelId, currencies: 'USD', total: 9_600, auth, verify: ['booking_id'], booking: { booking_id: bookingId } });
    await expect.poll(names, slow).toEqual(['booking_error']);
    await expect.poll(() => frame().locator('#fatal').textContent(), slow).toMatch(/waiting for the cardholder to confirm it with their bank .* Minutes until then: 3[56]\./);
  });

  it('says a booking opened again after it was paid is paid, in the frame language, not that its details are invalid (booking_error for the integrator)', async () => {
    const { bookingId, payment } = await bookingPaidThroughApi(9_500, { token: 'tok_visa' });
    expect(payment).toMatchObject({ status: 'complete' });
    const auth = signAuthString({ channels: merchant.channelId, currencies: 'USD', total: 9_500, booking_id: bookingId }, merchant.channelSecret, new Date());
    await openModal({ path: merchant.site.path, channels: merchant.channelId, currencies: 'USD', total: 9_500, auth, verify: ['booking_id'], booking: { booking_id: bookingId }, language: 'deDE' });
    await expect.poll(names, slow).toEqual(['booking_error']);
    expect(events[0]!.argument).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { total: expect.any(String) }, nothing_payable: 'paid' } });
    const german = page.frameLocator('iframe');
    // It said "Die Buchungsdaten sind ungültig: total" to the payer who had paid.
    await expect.poll(() => german.locator('#fatal').textContent(), slow).toBe(germanPages.fullyPaid);
    expect(await german.locator('#card-form').isVisible()).toBe(false);
  });

  it('says a booking on a channel the operator locked cannot be paid online, making no booking and showing no form', async () => {
    // channel_status locked refuses every payment; the modal made the booking and showed the form.
    await e2e.t.db.query(`UPDATE channels SET channel_status = 'locked' WHERE id = $1`, [merchant.channelId]);
    try {
      await openModal(modalOptions(9_500));
      await expect.poll(names, slow).toEqual(['booking_error']);
      expect(events[0]!.argument).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, nothing_payable: 'not_online' } });
      await expect.poll(() => frame().locator('#fatal').textContent(), slow).toMatch(/^This booking cannot be paid online\. Please contact /);
      expect(await frame().locator('#card-form').isVisible()).toBe(false);
    } finally {
      await e2e.t.db.query(`UPDATE channels SET channel_status = 'test' WHERE id = $1`, [merchant.channelId]);
    }
  });

  it('fires token_error, not transaction_error, when the page session expired while the modal stayed open', async () => {
    await openModal(modalOptions(9_500));
    await frame().locator('#submit').waitFor();
    await expect.poll(names, slow).toEqual(['booking_logged']);
    await e2e.t.db.query(`UPDATE hosted_sessions SET expires_at = now() - interval '1 minute' WHERE booking_id = $1`, [events[0]!.argument.id]);
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'token_error']);
    expect(events[1]!.argument).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    await expect.poll(() => frame().locator('#outcome').textContent(), slow).toBe('Your session has expired. Please reopen this page to start again.');
    expect(await frame().locator('#card-form').isVisible()).toBe(false);
  });

  it('fires close_window_attempted while processing, and modal_closed on close', async () => {
    const { paymentRequested, release } = await holdPayment();
    await openModal(modalOptions(9_500));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visa);
    // The card is captured and the payment is on its way (held here): the modal is processing.
    await paymentRequested;
    await page.evaluate(() => window.dispatchEvent(new Event('beforeunload', { cancelable: true })));
    await expect.poll(names, slow).toEqual(['booking_logged', 'close_window_attempted']);
    release();
    await expect.poll(names, slow).toEqual(['booking_logged', 'close_window_attempted', 'transaction_logged']);
    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(names, slow).toEqual(['booking_logged', 'close_window_attempted', 'transaction_logged', 'modal_closed']);
    expect(events[3]!.argument.message).toContain('closed');
    await expect.poll(() => page.locator('iframe[title="Payment"]').count(), slow).toBe(0);
  });

  it('asks no confirmation and fires no close_window_attempted when the integrator leaves the page from transaction_logged', async () => {
    const dialogs: string[] = [];
    const onDialog = (dialog: { type(): string }) => void dialogs.push(dialog.type());
    page.on('dialog', onDialog);
    try {
      // The payer clicked the host's own "Pay now" (a page the user never touched may not ask before unload).
      await page.locator('#pay').click();
      // The usual integration: on success, go to the order's confirmation page.
      await page.evaluate(({ options, names }) => {
        const record = (name: string) => (argument: unknown) => (window as any).recordCallback(name, argument);
        const callbacks: Record<string, (argument: unknown) => void> = Object.fromEntries(names.map((name) => [name, record(name)]));
        callbacks.transaction_logged = (argument) => {
          record('transaction_logged')(argument);
          location.href = '/thank-you';
        };
        (window as any).TrustfareModal.open({ ...options, callbacks });
      }, { options: modalOptions(9_210), names: callbackNames });
      await frame().locator('#submit').waitFor();
      await pay(testCards.visa);
      await page.waitForURL('**/thank-you', slow);
      expect(dialogs).toEqual([]);
      expect(names()).toEqual(['booking_logged', 'transaction_logged']);
    } finally {
      page.off('dialog', onDialog);
    }
  });

  it('still reports transaction_rejected when the integrator closes the modal from the third transaction_failed', async () => {
    await page.evaluate(({ options, names }) => {
      const record = (name: string) => (argument: unknown) => (window as any).recordCallback(name, argument);
      const callbacks: Record<string, (argument: unknown) => void> = Object.fromEntries(names.map((name) => [name, record(name)]));
      let failures = 0;
      callbacks.transaction_failed = (argument) => {
        record('transaction_failed')(argument);
        if (++failures === 3) handle.close();
      };
      const handle = (window as any).TrustfareModal.open({ ...options, callbacks });
    }, { options: modalOptions(9_230), names: callbackNames });
    await frame().locator('#submit').waitFor();
    for (let attempt = 1; attempt <= 3; attempt++) {
      await pay(testCards.visaDeclined);
      await expect.poll(() => names().filter((name) => name === 'transaction_failed').length, slow).toBe(attempt);
    }
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_failed', 'transaction_failed', 'transaction_failed', 'modal_closed', 'transaction_rejected']);
    // The outcome was known when the modal closed.
    expect(events[4]!.argument).toEqual({ message: 'The payment modal was closed.' });
    await expect.poll(() => page.locator('iframe').count(), slow).toBe(0);
  });

  it('still reports the outcome when the modal is closed while a payment is processing: modal_closed at once, transaction_logged once it settles', async () => {
    const { paymentRequested, release } = await holdPayment();
    await openModal(modalOptions(9_520));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visa);
    await paymentRequested;
    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(names, slow).toEqual(['booking_logged', 'modal_closed']);
    expect(events[1]!.argument.message).toContain('while a payment was processing');
    // Gone from view at once: the host page takes focus and clicks again.
    expect(await page.locator('[role="dialog"]').isVisible()).toBe(false);
    expect(await page.evaluate(() => document.querySelectorAll('[inert]').length)).toBe(1);
    await page.locator('#terms').focus();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('terms');
    // The payment goes through: the integrator hears of it, once, and the frame then goes.
    release();
    await expect.poll(names, slow).toEqual(['booking_logged', 'modal_closed', 'transaction_logged']);
    expect(events[2]!.argument).toMatchObject({ status: 'complete', total: 9_520 });
    await expect.poll(() => page.locator('iframe').count(), slow).toBe(0);
    expect(names()).toEqual(['booking_logged', 'modal_closed', 'transaction_logged']);
  });

  it('reports transaction_timeout when the modal is closed during the 3DS challenge, and removes the frame', async () => {
    await openModal(modalOptions(6_300));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visaChallenge);
    await frame().frameLocator('#challenge-frame').getByRole('button', { name: 'Authenticate' }).waitFor();
    await page.getByRole('button', { name: 'Close' }).click();
    // Nobody can answer the challenge now: the payment stays pending (the pending-payments job settles it).
    await expect.poll(names, slow).toEqual(['booking_logged', 'modal_closed', 'transaction_timeout']);
    expect(events[2]!.argument).toMatchObject({ booking_id: events[0]!.argument.id, name: 'TimeoutError' });
    await expect.poll(() => page.locator('iframe').count(), slow).toBe(0);
  });

  it('closes on Escape typed inside the frame (where the open modal puts the focus)', async () => {
    await openModal(modalOptions(9_700));
    await frame().locator('#submit').waitFor();
    // Escape goes wherever the open modal put the focus: the card field. The key event is
    // dispatched in the frame rather than typed through the browser's input: Escape removes the
    // frame (another renderer process), and a typed key whose frame goes away mid-event can leave
    // the input command unanswered for ever (locator.press hung 1 CI run in 3, keyboard.press 1 in 4).
    await expect.poll(() => frame().locator('#card_number').evaluate((input) => input === document.activeElement && document.hasFocus()), slow).toBe(true);
    await frame().locator('#card_number').dispatchEvent('keydown', { key: 'Escape', bubbles: true });
    await expect.poll(names, slow).toEqual(['booking_logged', 'modal_closed']);
    expect(await page.locator('iframe[title="Payment"]').count()).toBe(0);
  });

  it('keeps the focus in the dialog, named in the modal language, with the host page inert until it closes', async () => {
    await openModal(modalOptions(9_800, { language: 'frFR' }));
    const french = page.frameLocator('iframe[title="Paiement"]');
    await french.locator('#submit').waitFor();
    expect(await page.getAttribute('[role="dialog"]', 'aria-label')).toBe('Paiement');
    await expect.poll(() => french.locator('#card_number').evaluate((input) => input === document.activeElement && document.hasFocus()), slow).toBe(true);
    const hostFocus = () => page.evaluate(() => (document.activeElement?.tagName === 'IFRAME' ? 'frame' : document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.id ?? ''));
    const frameFocus = () => french.locator('body').evaluate(() => document.activeElement?.id || document.activeElement?.tagName);
    // Shift+Tab from the first field comes round to × and back into the frame, never to the host page.
    // Focus leaving or entering the frame (another renderer process) moves after the key press
    // returns: each read polls until the focus has arrived (read at once, it raced the move).
    for (const expected of ['Fermer', 'frame', 'frame', 'frame']) {
      await page.keyboard.press('Shift+Tab');
      await expect.poll(hostFocus, slow).toBe(expected);
    }
    // Tab from × comes round to the frame's first control.
    await page.getByRole('button', { name: 'Fermer' }).focus();
    await expect.poll(hostFocus, slow).toBe('Fermer');
    await page.keyboard.press('Tab');
    await expect.poll(hostFocus, slow).toBe('frame');
    await expect.poll(frameFocus, slow).not.toBe('BODY');
    // The host page behind the overlay takes neither focus nor clicks.
    const inert = () => page.evaluate(() => ['terms', 'pay', 'drawer'].map((id) => document.getElementById(id)!.closest('[inert]') !== null));
    expect(await inert()).toEqual([true, true, true]);
    await page.evaluate(() => document.getElementById('pay')!.focus());
    expect(await hostFocus()).not.toBe('pay');
    expect(names()).toEqual(['booking_logged']);
    await page.getByRole('button', { name: 'Fermer' }).click();
    await expect.poll(names, slow).toEqual(['booking_logged', 'modal_closed']);
    // Restored exactly: what the integrator made inert stays inert.
    expect(await inert()).toEqual([false, false, true]);
    expect(await page.evaluate(() => document.querySelectorAll('[inert]').length)).toBe(1);
  });

  it('names the dialog and × in the language the frame is shown in, for a BCP 47 code too (pt-BR, de-AT)', async () => {
    for (const [language, lang, dialog, close] of [['pt-BR', 'pt-BR', 'Pagamento', 'Fechar'], ['de-AT', 'de-DE', 'Zahlung', 'Schließen']] as const) {
      await openModal(modalOptions(9_900, { language }));
      const shown = page.frameLocator('iframe');
      await shown.locator('#submit').waitFor();
      // The frame reads the code as the service does (Portuguese, German)...
      expect(await shown.locator('html').getAttribute('lang')).toBe(lang);
      // ...and so does the dialog around it: it was "Payment" and "Close" for any code but the spec's own.
      expect(await page.getAttribute('[role="dialog"]', 'aria-label')).toBe(dialog);
      expect(await page.getAttribute('iframe', 'title')).toBe(dialog);
      expect(await page.getByRole('button', { name: close }).count()).toBe(1);
    }
  });

  it("shows the frame in the booking's language when the integrator gives none, as its amounts and decline reasons are", async () => {
    await openModal(modalOptions(9_951, { booking: { ...bookingData, language: 'deDE' } }));
    await expect.poll(names, slow).toEqual(['booking_logged']);
    const shown = page.frameLocator('iframe');
    await shown.locator('#submit').waitFor();
    // The whole page, not only what the session's answer fills in: it was English around a German amount and decline.
    await expect.poll(() => shown.locator('label[for="card_number"]').textContent(), slow).toBe(germanPages.cardNumber);
    expect(await shown.locator('html').getAttribute('lang')).toBe('de-DE');
    expect(await shown.locator('h1').textContent()).toBe(germanPages.titleModal);
    expect(await shown.locator('#submit').textContent()).toBe(germanPages.payAmount.replace('{amount}', formatMoney(9_951, 'USD', 'de-DE')));
    expect(await page.getAttribute('[role="dialog"]', 'aria-label')).toBe('Zahlung');
    expect(await page.getByRole('button', { name: 'Schließen' }).count()).toBe(1);
    // Total ending in 51: the sandbox declines it; the line and the attempts in German, as the form around them.
    await pay(testCards.visa, shown);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_failed']);
    await expect.poll(() => shown.locator('#outcome').textContent(), slow).toContain('Versuche');
    expect(await shown.locator('#outcome').textContent()).toContain('800.100.151');
    expect(await shown.locator('#status').textContent()).toBe('');
  });

  it('runs a 3DS challenge inline in the modal: Authenticate reports transaction_logged', async () => {
    await openModal(modalOptions(6_000));
    await frame().locator('#submit').waitFor();
    const popups: unknown[] = [];
    page.on('popup', (popup) => popups.push(popup));
    await pay(testCards.visaChallenge);
    // The issuer's page is an iframe of our frame, under the integrator's page: no window opens.
    const challenge = frame().frameLocator('#challenge-frame');
    await challenge.getByRole('button', { name: 'Authenticate' }).waitFor();
    await screenshots(page, 'modal-3ds-challenge');
    await challenge.getByRole('button', { name: 'Authenticate' }).click();
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_logged']);
    expect(events[1]!.argument).toMatchObject({ status: 'complete', total: 6_000, '3ds_response': { status: 'authenticated' } });
    await frame().locator('#outcome.success').waitFor();
    expect(await frame().locator('#challenge').isHidden()).toBe(true);
    expect(popups).toHaveLength(0);
    const read = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/bookings/${events[0]!.argument.id}`, headers: merchant.site.headers });
    expect(read.json()).toMatchObject({ status: 'paid', total_unpaid: 0 });
  });

  it('runs a 3DS challenge inline in the modal: Fail reports transaction_failed and the card can be retried', async () => {
    await openModal(modalOptions(6_100));
    await frame().locator('#submit').waitFor();
    await pay(testCards.visaChallenge);
    await frame().frameLocator('#challenge-frame').getByRole('button', { name: 'Fail' }).click();
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_failed']);
    expect(events[1]!.argument).toMatchObject({ status: 'failed', total: 6_100, '3ds_response': { status: 'failed' } });
    await frame().locator('#outcome.failed').waitFor();
    const failed = await frame().locator('#outcome').textContent();
    // The decline's code and the catalogue's reason in the page language (enGB here).
    expect(failed).toContain('Your bank declined the payment: 100.380.401 declined (3-D Secure authentication failed).');
    expect(failed).toContain('Attempts left: 2');
    // Back to the card form for another attempt, which succeeds.
    await pay(testCards.visa);
    await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_failed', 'transaction_logged']);
  });

  it('fires transaction_timeout, not transaction_failed, when the payment is still pending after the challenge (the look-up did not settle it)', async () => {
    const sandbox = e2e.t.context.connector;
    try {
      await openModal(modalOptions(6_200));
      await frame().locator('#submit').waitFor();
      await pay(testCards.visaChallenge);
      const challenge = frame().frameLocator('#challenge-frame');
      await challenge.getByRole('button', { name: 'Authenticate' }).waitFor();
      // The processor's look-up at the 3DS return fails in transit: the payment stays pending and may still complete.
      e2e.t.context.connector = { ...sandbox, name: 'lossy', lookup: async () => Promise.reject(new Error('connection reset')) };
      await challenge.getByRole('button', { name: 'Authenticate' }).click();
      await expect.poll(names, slow).toEqual(['booking_logged', 'transaction_timeout']);
      expect(events[1]!.argument).toMatchObject({ booking_id: events[0]!.argument.id, name: 'TimeoutError' });
      expect(events[1]!.argument.message).toContain('timed out');
      await frame().locator('#outcome.failed').waitFor();
      expect(await frame().locator('#outcome').textContent()).toContain(`Your booking ID is ${events[0]!.argument.id}`);
      expect(await frame().locator('#card-form').isVisible()).toBe(false);
    } finally {
      e2e.t.context.connector = sandbox;
    }
  });

  it("shows the 3DS return page in the integrator's own frame of an API payment's challenge (no redirect_url): the payer read the outcome, not a refused frame (frame-ancestors 'none')", async () => {
    const { payment } = await bookingPaidThroughApi(9_700, { token: 'tok_visa_3ds_challenge', attempt_3ds: true });
    expect(payment).toMatchObject({ status: 'pending' });
    // The EMV 3-D Secure browser flow: the integrator's checkout shows the issuer's page in an iframe.
    const challengeUrl = (payment['3ds_response'] as { challenge_url: string }).challenge_url;
    e2e.host.pages.set('/api-checkout', `<!doctype html><title>Seaside Tours checkout</title><iframe id="challenge" title="3-D Secure" src="${challengeUrl}"></iframe>`);
    await page.goto(`${e2e.host.origin}/api-checkout`);
    const challenge = page.frameLocator('#challenge');
    await challenge.getByRole('button', { name: 'Authenticate' }).click();
    await expect.poll(() => challenge.locator('body').textContent().catch(() => null), slow).toBe('Payment complete. Thank you.You can close this window.');
    const read = await e2e.t.app.inject({ url: `/${merchant.site.path}/site-json/vendor/v2/transactions/${payment.id}`, headers: merchant.site.headers });
    expect(read.json()).toMatchObject({ status: 'complete' });
  });

  it('lets any http(s) page frame the sandbox challenge and the 3DS return page', async () => {
    const returned = await page.request.get(`${e2e.baseUrl}/hosted/3ds-return`);
    expect(returned.headers()['content-security-policy']).toContain('frame-ancestors http: https:');
  });

  it('frames only for the host origin it names', async () => {
    const response = await page.request.get(`${e2e.baseUrl}/modal/1.0.0/frame?origin=${encodeURIComponent(e2e.host.origin)}`);
    expect(response.headers()['content-security-policy']).toContain(`frame-ancestors ${e2e.host.origin}`);
    const script = await page.request.get(`${e2e.baseUrl}/modal/1.0.0/payment-modal.js`);
    expect(script.headers()['access-control-allow-origin']).toBe('*');
    expect((await page.request.get(`${e2e.baseUrl}/modal/0.9.0/payment-modal.js`)).status()).toBe(404);
  });
});
