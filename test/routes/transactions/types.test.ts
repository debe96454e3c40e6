import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../../support/context.js';
import { addUser } from '../../support/fixtures.js';
import { parseRedirect } from '../../../src/domain/hosted/vault-app.js';
import { verifyLedger } from '../../../src/domain/ledger/verify.js';
import { addChannel, bookingRow, createBooking, createShop, entriesOf, get, paymentsContext, post, purchaseBody, type Shop } from '../../payments/support.js';

let t: TestContext;
let shop: Shop;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
});
afterAll(async () => t.close());

const body = (fields: Record<string, unknown>) => ({ channels: shop.channelId, currencies: shop.currency, ...fields });
const bookingsOf = (bookingId: number, total: number) => [{ id: bookingId, currencies: shop.currency, total }];

async function vault(token = 'tok_visa') {
  const response = await post(t, shop, body({ transaction_types: 'vault', total: 0, token }));
  expect(response.statusCode).toBe(201);
  return response.json();
}

describe('vault and retained transactions', () => {
  it('vaults a card with a zero-value verification and returns the permanent vault token', async () => {
    const transaction = await vault();
    expect(transaction).toMatchObject({ transaction_types: 'vault', status: 'complete', total: 0, total_remaining: 0, payment_ids: [], card_types: 'visa', last_four_digits: '1111' });
    expect(transaction.token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(await entriesOf(t, transaction.id)).toEqual([]);
  });

  it('charges a vaulted card by linked_id (retained_purchase) and by vault token', async () => {
    const card = await vault();
    const booking = await createBooking(t, shop, { total: 5000 });
    const byLink = await post(t, shop, body({ transaction_types: 'retained_purchase', total: 2000, linked_id: card.id, bookings: bookingsOf(booking, 2000) }));
    expect(byLink.statusCode).toBe(201);
    expect(byLink.json()).toMatchObject({ status: 'complete', total_remaining: 2000, linked_id: card.id, token: card.token });
    const byToken = await post(t, shop, body({ transaction_types: 'retained_purchase', total: 3000, token: card.token, bookings: bookingsOf(booking, 3000) }));
    expect(byToken.json()).toMatchObject({ status: 'complete', total: 3000 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 5000 });
  });

  it("charges the linked vault transaction's own card, and refuses a token naming another card", async () => {
    const visa = await vault('tok_visa');
    const mastercard = await vault('tok_mastercard');
    const booking = await createBooking(t, shop, { total: 5000 });
    const mismatch = await post(t, shop, body({ transaction_types: 'retained_purchase', total: 1000, linked_id: mastercard.id, token: visa.token, bookings: bookingsOf(booking, 1000) }));
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().data.params).toHaveProperty('token');
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0, transaction_ids: [] });
    const charged = await post(t, shop, body({ transaction_types: 'retained_purchase', total: 1000, linked_id: mastercard.id, token: mastercard.token, bookings: bookingsOf(booking, 1000) }));
    expect(charged.statusCode).toBe(201);
    expect(charged.json()).toMatchObject({ status: 'complete', card_types: mastercard.card_types, last_four_digits: mastercard.last_four_digits, token: mastercard.token });
    expect(mastercard.last_four_digits).not.toBe(visa.last_four_digits);
  });

  it('retained_authorize holds money and leaves the booking authorized', async () => {
    const card = await vault();
    const booking = await createBooking(t, shop, { total: 4000 });
    const response = await post(t, shop, body({ transaction_types: 'retained_authorize', total: 4000, linked_id: card.id, bookings: bookingsOf(booking, 4000) }));
    expect(response.json()).toMatchObject({ status: 'complete', total_remaining: 4000 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'authorized', total_authorized: 4000, total_paid: 0 });
  });

  it('refuses a vaulted card on a channel of another currency or account type', async () => {
    const card = await vault();
    const eurChannel = await addChannel(t, shop, { currency: 'EUR' });
    const eurBooking = await createBooking(t, shop, { channelId: eurChannel, total: 1000 });
    const response = await post(t, shop, { transaction_types: 'retained_purchase', channels: eurChannel, currencies: 'EUR', total: 1000, linked_id: card.id, bookings: [{ id: eurBooking, currencies: 'EUR', total: 1000 }] });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { channels: expect.any(String) } } });
    const protectedChannel = await addChannel(t, shop, { accountType: 'protected-processing' });
    const otherBooking = await createBooking(t, shop, { channelId: protectedChannel, total: 1000 });
    const second = await post(t, shop, { transaction_types: 'retained_purchase', channels: protectedChannel, currencies: 'USD', total: 1000, linked_id: card.id, bookings: bookingsOf(otherBooking, 1000) });
    expect(second.json().data.params).toHaveProperty('channels');
  });

  it('refuses sandbox tokens on live channels and missing linked_id', async () => {
    const live = await addChannel(t, shop, { accountMode: 'live' });
    const response = await post(t, shop, { transaction_types: 'vault', channels: live, currencies: 'USD', total: 0, token: 'tok_visa' });
    expect(response.statusCode).toBe(400);
    expect(response.json().data.params).toHaveProperty('token');
    const missing = await post(t, shop, body({ transaction_types: 'retained_purchase', total: 100, bookings: bookingsOf(await createBooking(t, shop), 100) }));
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ code: 'rest_missing_callback_param', data: { params: ['linked_id'] } });
  });
});

describe('purchase, refund and booking status', () => {
  it('moves a booking unpaid → partial-payment → paid and back on refunds', async () => {
    const booking = await createBooking(t, shop, { total: 10_000 });
    expect((await bookingRow(t, booking)).status).toBe('unpaid');
    const first = (await post(t, shop, purchaseBody(shop, booking, 4000))).json();
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'partial-payment', total_paid: 4000, transaction_ids: [first.id] });
    const second = (await post(t, shop, purchaseBody(shop, booking, 6000))).json();
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 10_000 });
    const refund = await post(t, shop, body({ transaction_types: 'refund', total: 1000, linked_id: second.id, bookings: bookingsOf(booking, 1000) }));
    expect(refund.statusCode).toBe(201);
    expect(refund.json()).toMatchObject({ status: 'complete', total_remaining: 0, linked_id: second.id });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'partial-payment', total_paid: 9000 });
    const parent = (await get(t, shop, `/transactions/${second.id}`)).json();
    expect(parent).toMatchObject({ total_remaining: 5000, adjustments: [refund.json().id] });
    await post(t, shop, body({ transaction_types: 'refund', total: 4000, linked_id: first.id, bookings: bookingsOf(booking, 4000) }));
    await post(t, shop, body({ transaction_types: 'refund', total: 5000, linked_id: second.id, bookings: bookingsOf(booking, 5000) }));
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0 });
  });

  it('refuses a refund above total_remaining, of another site (404), or of a failed purchase', async () => {
    const booking = await createBooking(t, shop, { total: 3000 });
    const purchase = (await post(t, shop, purchaseBody(shop, booking, 3000))).json();
    const tooMuch = await post(t, shop, body({ transaction_types: 'refund', total: 3001, linked_id: purchase.id, bookings: bookingsOf(booking, 3001) }));
    expect(tooMuch.statusCode).toBe(400);
    expect(tooMuch.json().data.params).toHaveProperty('total');
    const other = await createShop(t);
    const otherBooking = await createBooking(t, other, { total: 3000 });
    const foreign = await post(t, other, { transaction_types: 'refund', channels: other.channelId, currencies: 'USD', total: 100, linked_id: purchase.id, bookings: [{ id: otherBooking, currencies: 'USD', total: 100 }] });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('rest_post_invalid_id');
    // A fresh booking: the first one is fully paid, and a payment above a booking's total is refused.
    const unpaid = await createBooking(t, shop, { total: 2051 });
    const declined = (await post(t, shop, purchaseBody(shop, unpaid, 2051))).json();
    const ofFailed = await post(t, shop, body({ transaction_types: 'refund', total: 100, linked_id: declined.id, bookings: bookingsOf(unpaid, 100) }));
    expect(ofFailed.statusCode).toBe(400);
    expect(ofFailed.json().data.params).toHaveProperty('linked_id');
  });

  it('validates bookings: sum, channel, currency', async () => {
    const booking = await createBooking(t, shop, { total: 3000 });
    const badSum = await post(t, shop, purchaseBody(shop, booking, 3000, { bookings: bookingsOf(booking, 2999) }));
    expect(badSum.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { bookings: expect.stringContaining('add up') } } });
    const otherChannel = await addChannel(t, shop);
    const elsewhere = await createBooking(t, shop, { channelId: otherChannel });
    const wrongChannel = await post(t, shop, purchaseBody(shop, elsewhere, 3000));
    expect(wrongChannel.json().data.params.bookings).toContain('not on channel');
    const wrongCurrency = await post(t, shop, purchaseBody(shop, booking, 3000, { bookings: [{ id: booking, currencies: 'EUR', total: 3000 }] }));
    expect(wrongCurrency.json().data.params).toHaveProperty('bookings');
    const nothingWritten = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM transactions WHERE $1 = ANY(SELECT booking_id FROM transaction_bookings WHERE transaction_id = transactions.id)', [booking]);
    expect(nothingWritten.count).toBe(0);
  });

  it('records all eleven forced declines as failed transactions (201) with the code in content', async () => {
    const booking = await createBooking(t, shop, { total: 1_000_000 });
    for (let digits = 51; digits <= 61; digits++) {
      const total = 1000 + digits;
      const response = await post(t, shop, purchaseBody(shop, booking, total));
      expect(response.statusCode).toBe(201);
      const transaction = response.json();
      expect(transaction.status).toBe('failed');
      expect(transaction.content).toContain(`800.100.${100 + digits}`);
      expect(transaction.payment_ids).toEqual([]);
    }
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0 });
    const declinedCard = (await post(t, shop, purchaseBody(shop, booking, 1000, { token: 'tok_mastercard_declined' }))).json();
    expect(declinedCard.status).toBe('failed');
  });

  it('signs every transaction with the documented hash', async () => {
    const booking = await createBooking(t, shop, { total: 1200 });
    const transaction = (await post(t, shop, purchaseBody(shop, booking, 1200))).json();
    const secret = (await t.db.one<{ channel_secret: string }>('SELECT channel_secret FROM channels WHERE id = $1', [shop.channelId])).channel_secret;
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(transaction.hash).toBe(sha(sha(`${transaction.id}&${transaction.status}&${transaction.total}&${transaction.created}`) + secret));
    expect(transaction.created).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });
});

describe('authorize, capture and void', () => {
  async function authorize(total: number, bookingTotal = total) {
    const booking = await createBooking(t, shop, { total: bookingTotal });
    const response = await post(t, shop, body({ transaction_types: 'authorize', total, token: 'tok_mastercard', bookings: bookingsOf(booking, total) }));
    expect(response.json().status).toBe('complete');
    return { booking, authorization: response.json() };
  }

  it('captures part of an authorisation once, releasing the rest', async () => {
    const { booking, authorization } = await authorize(8000);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'authorized', total_authorized: 8000 });
    const above = await post(t, shop, body({ transaction_types: 'capture', total: 8001, linked_id: authorization.id, bookings: bookingsOf(booking, 8001) }));
    expect(above.statusCode).toBe(400);
    expect(above.json().data.params).toHaveProperty('total');
    const capture = await post(t, shop, body({ transaction_types: 'capture', total: 5000, linked_id: authorization.id, bookings: bookingsOf(booking, 5000) }));
    expect(capture.json()).toMatchObject({ status: 'complete', total_remaining: 5000 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'partial-payment', total_paid: 5000, total_authorized: 0 });
    const again = await post(t, shop, body({ transaction_types: 'capture', total: 1000, linked_id: authorization.id, bookings: bookingsOf(booking, 1000) }));
    expect(again.statusCode).toBe(400);
    const voidAfter = await post(t, shop, body({ transaction_types: 'void', total: 3000, linked_id: authorization.id, bookings: bookingsOf(booking, 3000) }));
    expect(voidAfter.statusCode).toBe(400);
    expect(voidAfter.json().data.params.linked_id).toContain('cannot be voided');
    expect((await get(t, shop, `/transactions/${authorization.id}`)).json()).toMatchObject({ total_remaining: 0, adjustments: [capture.json().id] });
  });

  it('voids an uncaptured authorisation for its full amount', async () => {
    const { booking, authorization } = await authorize(6000);
    const partial = await post(t, shop, body({ transaction_types: 'void', total: 100, linked_id: authorization.id, bookings: bookingsOf(booking, 100) }));
    expect(partial.statusCode).toBe(400);
    const response = await post(t, shop, body({ transaction_types: 'void', total: 6000, linked_id: authorization.id, bookings: bookingsOf(booking, 6000) }));
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ status: 'complete', total_remaining: 0, allocations: [] });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_authorized: 0 });
    const captureAfter = await post(t, shop, body({ transaction_types: 'capture', total: 100, linked_id: authorization.id, bookings: bookingsOf(booking, 100) }));
    expect(captureAfter.statusCode).toBe(400);
  });

  it('refuses capturing a purchase and refunding an authorisation', async () => {
    const booking = await createBooking(t, shop, { total: 900 });
    const purchase = (await post(t, shop, purchaseBody(shop, booking, 900))).json();
    const capture = await post(t, shop, body({ transaction_types: 'capture', total: 900, linked_id: purchase.id, bookings: bookingsOf(booking, 900) }));
    expect(capture.json().data.params).toHaveProperty('linked_id');
    const { authorization, booking: held } = await authorize(700);
    const refund = await post(t, shop, body({ transaction_types: 'refund', total: 700, linked_id: authorization.id, bookings: bookingsOf(held, 700) }));
    expect(refund.json().data.params).toHaveProperty('linked_id');
  });
});

describe('chargebacks (platform operators only)', () => {
  it('refuses chargebacks from site users', async () => {
    const booking = await createBooking(t, shop, { total: 500 });
    const purchase = (await post(t, shop, purchaseBody(shop, booking, 500))).json();
    const response = await post(t, shop, { transaction_types: 'chargeback', linked_id: purchase.id, total: 500 });
    expect(response.statusCode).toBe(403);
    expect(response.json().code).toBe('rest_forbidden');
  });

  it('locks the transaction and booking on a chargeback and unlocks them on reversal', async () => {
    const admin = await addUser(t.db, shop.site.siteId, { role: 'member_admin', platformAdmin: true });
    const booking = await createBooking(t, shop, { total: 2500 });
    const purchase = (await post(t, shop, purchaseBody(shop, booking, 2500))).json();
    const asAdmin = { ...shop, site: { ...shop.site, headers: admin.headers } };
    const chargeback = await post(t, asAdmin, { transaction_types: 'chargeback', linked_id: purchase.id, total: 2500 });
    expect(chargeback.statusCode).toBe(201);
    expect(chargeback.json()).toMatchObject({ status: 'complete', total_remaining: 2500, linked_id: purchase.id });
    expect((await get(t, shop, `/transactions/${purchase.id}`)).json()).toMatchObject({ status: 'locked', total_remaining: 0 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'locked', total_paid: 0, locked_transactions: 1 });
    const refund = await post(t, shop, body({ transaction_types: 'refund', total: 100, linked_id: purchase.id, bookings: bookingsOf(booking, 100) }));
    expect(refund.json().data.params.linked_id).toContain('locked');
    const reversal = await post(t, asAdmin, { transaction_types: 'chargeback-reversal', linked_id: chargeback.json().id, total: 2500 });
    expect(reversal.statusCode).toBe(201);
    expect((await get(t, shop, `/transactions/${purchase.id}`)).json()).toMatchObject({ status: 'complete', total_remaining: 2500 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 2500, locked_transactions: 0 });
    expect((await entriesOf(t, chargeback.json().id)).length).toBe(4);
    expect((await entriesOf(t, reversal.json().id)).length).toBe(4);
  });

  /** A booking paid in full by a purchase, `disputed` of which the operator charged back. */
  async function chargedBack(total: number, disputed: number) {
    const admin = await addUser(t.db, shop.site.siteId, { role: 'member_admin', platformAdmin: true });
    const asAdmin = { ...shop, site: { ...shop.site, headers: admin.headers } };
    const booking = await createBooking(t, shop, { total });
    const purchase = (await post(t, shop, purchaseBody(shop, booking, total))).json();
    const chargeback = (await post(t, asAdmin, { transaction_types: 'chargeback', linked_id: purchase.id, total: disputed })).json();
    return { asAdmin, booking, purchase, chargeback };
  }

  it('records a second chargeback of a payment while the first is open, and unlocks it once both are reversed', async () => {
    const { asAdmin, booking, purchase, chargeback } = await chargedBack(10_000, 3000);
    const second = await post(t, asAdmin, { transaction_types: 'chargeback', linked_id: purchase.id, total: 2000 });
    expect(second.statusCode).toBe(201);
    expect((await get(t, shop, `/transactions/${purchase.id}`)).json()).toMatchObject({ status: 'locked', total_remaining: 5000 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'locked', total_paid: 5000, locked_transactions: 1 });
    const tooMuch = await post(t, asAdmin, { transaction_types: 'chargeback', linked_id: purchase.id, total: 5001 });
    expect(tooMuch.json().data.params.total).toContain('5000');
    await post(t, asAdmin, { transaction_types: 'chargeback-reversal', linked_id: chargeback.id, total: 3000 });
    expect((await get(t, shop, `/transactions/${purchase.id}`)).json()).toMatchObject({ status: 'locked', total_remaining: 8000 });
    await post(t, asAdmin, { transaction_types: 'chargeback-reversal', linked_id: second.json().id, total: 2000 });
    expect((await get(t, shop, `/transactions/${purchase.id}`)).json()).toMatchObject({ status: 'complete', total_remaining: 10_000 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 10_000, locked_transactions: 0 });
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });
});

describe('reading transactions', () => {
  it('lists with filters, pagination headers and 404 for other sites', async () => {
    const booking = await createBooking(t, shop, { total: 100_000, reference: 'LIST-REF' });
    const made = [];
    for (const total of [1100, 1200, 1351]) made.push((await post(t, shop, purchaseBody(shop, booking, total, { payee_surname: 'Hopper', payee_email: 'grace@example.com', countries: 'US' }))).json());
    const list = await get(t, shop, `/transactions?reference=LIST-REF&per_page=2&order=desc`);
    expect(list.statusCode).toBe(200);
    expect(list.headers['x-site-total']).toBe('3');
    expect(list.headers['x-site-totalpages']).toBe('2');
    expect(list.headers.link).toContain('rel="next"');
    expect(list.json().map((item: { id: number }) => item.id)).toEqual([made[2].id, made[1].id]);
    const failed = await get(t, shop, `/transactions?reference=LIST-REF&status=failed`);
    expect(failed.json().map((item: { id: number }) => item.id)).toEqual([made[2].id]);
    const filters = [
      'transaction_types=purchase', 'currencies=USD', `channels=${shop.channelId}`, 'payee_surname=Hopper', 'payee_email=grace@example.com', 'countries=US',
      'last_four_digits=1111', 'bin_number=411111', 'payment_methods=credit-card', `include=${made[0].id},${made[1].id}`, `exclude=${made[0].id}`,
      'after=2000-01-01', 'before=2999-01-01', 'statement_date_after=2000-01-01', 'statement_date_before=2999-12-31', 'currencies_exclude=EUR',
      'channels_exclude=999999', 'orderby=total',
    ];
    for (const filter of filters) {
      const response = await get(t, shop, `/transactions?reference=LIST-REF&${filter}`);
      expect(response.statusCode, filter).toBe(200);
      expect(response.json().length, filter).toBeGreaterThan(0);
    }
    expect((await get(t, shop, `/transactions?reference=LIST-REF&currencies=EUR`)).json()).toEqual([]);
    expect((await get(t, shop, `/transactions?reference=LIST-REF&payee_surname=Nobody`)).json()).toEqual([]);
    // Payee names are kept and searched in NFC: a decomposed ö (o + U+0308) is the composed one.
    const payee = (await post(t, shop, purchaseBody(shop, booking, 1400, { payee_name: 'Zoe\u0308', payee_surname: 'Bjo\u0308rk', payee_email: 'zoe@bjo\u0308rk.se' }))).json();
    expect(payee).toMatchObject({ payee_name: 'Zoë', payee_surname: 'Björk', payee_email: 'zoe@björk.se' });
    for (const filter of ['payee_surname=Björk', `payee_surname=${encodeURIComponent('Bjo\u0308rk')}`, 'payee_email=zoe@björk.se']) {
      expect((await get(t, shop, `/transactions?${filter}`)).json().map((item: { id: number }) => item.id), filter).toEqual([payee.id]);
    }
    expect((await get(t, shop, `/transactions?per_page=101`)).statusCode).toBe(400);
    const other = await createShop(t);
    expect((await get(t, other, `/transactions/${made[0].id}`)).statusCode).toBe(404);
    expect((await get(t, other, `/transactions?include=${made[0].id}`)).json()).toEqual([]);
  });

  it('lets read-only users read but not create, and members create', async () => {
    const readOnly = await addUser(t.db, shop.site.siteId, { role: 'member', readOnly: true });
    const member = await addUser(t.db, shop.site.siteId, { role: 'member' });
    const booking = await createBooking(t, shop, { total: 700 });
    const denied = await t.app.inject({ method: 'POST', url: `${shop.base}/transactions`, headers: readOnly.headers, payload: purchaseBody(shop, booking, 700) });
    expect(denied.statusCode).toBe(403);
    const made = await t.app.inject({ method: 'POST', url: `${shop.base}/transactions`, headers: member.headers, payload: purchaseBody(shop, booking, 700) });
    expect(made.statusCode).toBe(201);
    expect(made.json()).toMatchObject({ author: member.userId, author_id: member.userId });
    const read = await t.app.inject({ method: 'GET', url: `${shop.base}/transactions/${made.json().id}`, headers: readOnly.headers });
    expect(read.statusCode).toBe(200);
    const anonymous = await t.app.inject({ method: 'GET', url: `${shop.base}/transactions` });
    expect(anonymous.statusCode).toBe(401);
  });

  it('rejects malformed bodies with the spec error shape', async () => {
    const missing = await post(t, shop, { channels: shop.channelId });
    expect(missing.json()).toMatchObject({ code: 'rest_missing_callback_param', data: { status: 400 } });
    const stringTotal = await post(t, shop, { transaction_types: 'purchase', channels: shop.channelId, currencies: 'USD', total: '100', token: 'tok_visa', bookings: [] });
    expect(stringTotal.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { total: expect.any(String) } } });
    const unknownField = await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: 'USD', total: 0, token: 'tok_visa', card_number: '4111111111111111' });
    expect(unknownField.statusCode).toBe(400);
    const roIgnored = await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: 'USD', total: 0, token: 'tok_visa', status: 'failed', hash: 'x' });
    expect(roIgnored.json().status).toBe('complete');
    const badRedirect = await post(t, shop, { ...purchaseBody(shop, await createBooking(t, shop), 100), redirect_url: 'javascript:alert(1)' });
    expect(badRedirect.json().data.params).toHaveProperty('redirect_url');
    // No card token is longer than a capture token's bound (limits.captureTokenLengthMax): a longer
    // one is told so, as the OpenAPI document says, not looked up as an unknown card.
    const longToken = await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: 'USD', total: 0, token: `ct_${'a'.repeat(198)}` });
    expect(longToken.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { token: 'must NOT have more than 200 characters' } } });
    // ip_address takes either kind of address: a refusal names both, not only the first the schema tries.
    const badIp = await post(t, shop, { ...purchaseBody(shop, await createBooking(t, shop), 100), ip_address: 'fe80::zz' });
    expect(badIp.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { ip_address: 'must match format "ipv4" or "ipv6"' } } });
  });

  it("refuses a redirect_url the vaulting app's redirect refuses, credentials in it included, and takes what it takes", async () => {
    const refused = ['https://user:pw@evil.example/', 'https://pay.example.com@evil.example/', 'javascript:alert(1)', 'ftp://files.example/', 'https://', '/relative/path'];
    const taken = ['https://shop.example/done?order=7', 'http://localhost:8080/back'];
    for (const url of [...refused, ...taken]) {
      const answer = await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: 'USD', total: 0, token: 'tok_visa', redirect_url: url });
      const vaultingApp = parseRedirect(url) === null ? 'refused' : 'taken';
      expect([url, answer.statusCode === 400 ? 'refused' : 'taken']).toEqual([url, vaultingApp]);
      expect([url, vaultingApp]).toEqual([url, refused.includes(url) ? 'refused' : 'taken']);
      if (answer.statusCode === 400) expect(answer.json().data.params.redirect_url).toMatch(/absolute http or https URL, without a user name or password/);
      else expect(answer.json()).toMatchObject({ status: 'complete', redirect_url: url });
    }
  });
});
