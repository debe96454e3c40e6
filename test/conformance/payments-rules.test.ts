import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import type { SiteFixture } from '../support/fixtures.js';
import { cli } from '../cli/helpers.js';
import { api, expectError, expectStatus, makeBooking, makeChannel, newSite, payingSite, retained, type Json } from './support.js';

let t: TestContext;
let site: SiteFixture;
let channel: Json;
let card: Json;
beforeAll(async () => {
  t = await createTestContext();
  ({ site, channel, card } = await payingSite(t));
});
afterAll(async () => t?.close());

const post = (body: Json) => api(t, site, 'POST', 'transactions', { channels: channel.id, currencies: 'GBP', ...body });
const share = (booking: Json, total: number) => [{ id: booking.id, currencies: 'GBP', total }];
const run = (args: string[]) => cli(t.config.databaseUrl!, args);

describe('sandbox tokens on POST /transactions (decisions.md)', () => {
  it('purchase with tok_mastercard: complete, card_types master, last four 4444', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1200 });
    const paid = expectStatus(await post({ transaction_types: 'purchase', total: 1200, token: 'tok_mastercard', bookings: share(booking, 1200) }), 201);
    expect(paid).toMatchObject({ status: 'complete', card_types: 'master', last_four_digits: '4444' });
  });

  it('declined card: 201 failed, booking unpaid', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1200 });
    const failed = expectStatus(await post({ transaction_types: 'purchase', total: 1200, token: 'tok_visa_declined', bookings: share(booking, 1200) }), 201);
    expect(failed.status).toBe('failed');
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).status).toBe('unpaid');
  });

  it('vault with a declined card fails, and the failed vault cannot be used for retained payments', async () => {
    const failed = expectStatus(await post({ transaction_types: 'vault', total: 0, token: 'tok_visa_declined' }), 201);
    expect(failed.status).toBe('failed');
    const booking = await makeBooking(t, site, channel.id, { total: 1000 });
    expectError(await retained(t, site, channel, booking, 1000, { linked_id: failed.id }), 400, 'rest_invalid_param');
    // Nor by its token, which the vaulting app hands back on a failed vault too.
    expect(failed.token).toMatch(/^[A-Za-z0-9]{32}$/);
    const byToken = expectError(await retained(t, site, channel, booking, 1000, { token: failed.token }), 400, 'rest_invalid_param');
    expect(byToken.data.params.token).toBe('The card of this token was never vaulted successfully (its vault transaction did not complete); vault the card again.');
    expectError(await post({ transaction_types: 'purchase', total: 1000, token: failed.token, bookings: share(booking, 1000) }), 400, 'rest_invalid_param');
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200)).toMatchObject({ status: 'unpaid', transaction_ids: [] });
  });

  it('a vault token charges without the CVV only as a retained charge: purchase, authorize and vault refuse it and record nothing', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1500 });
    for (const body of [
      { transaction_types: 'purchase', total: 1500, token: card.token, bookings: share(booking, 1500) },
      { transaction_types: 'authorize', total: 1500, token: card.token, bookings: share(booking, 1500) },
      { transaction_types: 'vault', total: 0, token: card.token },
    ]) {
      const refused = expectError(await post(body), 400, 'rest_invalid_param');
      expect(refused.data.params.token, body.transaction_types).toContain('retained_purchase');
    }
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200)).toMatchObject({ status: 'unpaid', transaction_ids: [] });
    expect(expectStatus(await retained(t, site, channel, booking, 1500, { token: card.token }), 201)).toMatchObject({ status: 'complete', token: card.token });
  });

  it('vault with a non-zero total is refused', async () => {
    expectError(await post({ transaction_types: 'vault', total: 100, token: 'tok_visa' }), 400, 'rest_invalid_param');
  });

  it('3DS challenge: pending with a challenge link; the booking is not paid', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1300 });
    const pending = expectStatus(await post({ transaction_types: 'purchase', total: 1300, token: 'tok_visa_3ds_challenge', attempt_3ds: true, bookings: share(booking, 1300) }), 201);
    expect(pending.status).toBe('pending');
    expect(pending.total_remaining).toBe(0);
    expect(JSON.stringify(pending)).toMatch(/https?:\/\//);
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).status).toBe('unpaid');
  });

  it('redirect_url sent "UTF-8 URL-encoded" (the spec\'s words) is taken, and the cardholder back from 3DS lands on it', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1350 });
    const target = 'https://shop.example/ordre/çà?order=7&lang=fr';
    const pending = expectStatus(await post({ transaction_types: 'purchase', total: 1350, token: 'tok_visa_3ds_challenge', attempt_3ds: true, redirect_url: encodeURIComponent(target), bookings: share(booking, 1350) }), 201);
    expect(pending).toMatchObject({ status: 'pending', redirect_url: target });
    await t.app.inject({ method: 'POST', url: new URL(pending['3ds_response'].challenge_url).pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'result=authenticate' });
    const back = await t.app.inject({ method: 'GET', url: `/3ds/return/${pending.uuid}` });
    expect(back.statusCode).toBe(303);
    const landed = new URL(back.headers.location as string);
    expect(`${landed.origin}${decodeURIComponent(landed.pathname)}`).toBe('https://shop.example/ordre/çà');
    expect(Object.fromEntries(landed.searchParams)).toEqual({ order: '7', lang: 'fr', transaction_id: String(pending.id), status: 'complete' });
    // Encoded or not, what cannot be followed is still refused.
    expectError(await post({ transaction_types: 'purchase', total: 1350, token: 'tok_visa', redirect_url: encodeURIComponent('javascript:alert(1)'), bookings: share(booking, 1350) }), 400, 'rest_invalid_param');
  });

  it('processor that never answers: incomplete', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1400 });
    const response = await post({ transaction_types: 'purchase', total: 1400, token: 'tok_visa_no_answer', bookings: share(booking, 1400) });
    const body = expectStatus(response, 201);
    expect(body.status).toBe('incomplete');
  });

  it('an unknown card token is refused', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1000 });
    const response = await post({ transaction_types: 'purchase', total: 1000, token: 'tok_nope', bookings: share(booking, 1000) });
    expectError(response, 400, 'rest_invalid_param');
  });

  it('live channels refuse sandbox tokens; forced declines do not apply there', async () => {
    const live = await makeChannel(t, site, { name: 'Live' });
    const set = await run(['channel', 'set', '--site', site.path, '--id', String(live.id), '--account-mode', 'live']);
    expect(set.code, set.stderr).toBe(0);
    expect(expectStatus(await api(t, site, 'GET', `channels/${live.id}`), 200).account_mode).toBe('live');
    expectError(await api(t, site, 'POST', 'transactions', { transaction_types: 'vault', channels: live.id, currencies: 'GBP', total: 0, token: 'tok_visa' }), 400, 'rest_invalid_param');
    // A card vaulted on a test channel cannot move to a live one.
    const booking = await makeBooking(t, site, live.id, { total: 1000 });
    const moved = expectError(await retained(t, site, live, booking, 1000, { linked_id: card.id }), 400, 'rest_invalid_param');
    // Keyed by what named the card: here linked_id, no token was sent.
    expect(Object.keys(moved.data.params)).toEqual(['linked_id']);
  });
});

describe('transaction bookings[] rules', () => {
  it('bookings[] totals must add up to total', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 5000 });
    expectError(await retained(t, site, channel, booking, 1000, { linked_id: card.id, bookings: share(booking, 900) }), 400, 'rest_invalid_param');
  });

  it('bookings[].currencies must be the channel currency', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 5000 });
    expectError(await retained(t, site, channel, booking, 1000, { linked_id: card.id, bookings: [{ id: booking.id, currencies: 'USD', total: 1000 }] }), 400, 'rest_invalid_param');
  });

  it('a top-level currency not offered for the channel is refused', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 5000 });
    expectError(await retained(t, site, channel, booking, 1000, { linked_id: card.id, currencies: 'XXX' }), 400, 'rest_invalid_param');
  });

  it('a deleted booking cannot be paid', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 5000 });
    expectStatus(await api(t, site, 'DELETE', `bookings/${booking.id}`), 200);
    expectError(await retained(t, site, channel, booking, 1000, { linked_id: card.id }), 400, 'rest_invalid_param');
  });
});

describe('cards across channels (spec: same currency and account_type)', () => {
  it('a card vaulted on one GBP test channel pays on another GBP test channel of the site', async () => {
    const second = await makeChannel(t, site, { name: 'Second GBP' });
    const booking = await makeBooking(t, site, second.id, { total: 1500 });
    const paid = expectStatus(await retained(t, site, second, booking, 1500, { linked_id: card.id }), 201);
    expect(paid.status).toBe('complete');
    expect(paid.channels).toBe(second.id);
  });

  it('one payment split over two bookings of the channel', async () => {
    const first = await makeBooking(t, site, channel.id, { total: 1000 });
    const second = await makeBooking(t, site, channel.id, { total: 2000 });
    const paid = expectStatus(await post({ transaction_types: 'retained_purchase', total: 2500, linked_id: card.id, bookings: [{ id: first.id, currencies: 'GBP', total: 1000 }, { id: second.id, currencies: 'GBP', total: 1500 }] }), 201);
    expect(paid.status).toBe('complete');
    expect(expectStatus(await api(t, site, 'GET', `bookings/${first.id}`), 200)).toMatchObject({ status: 'paid', total_unpaid: 0, transaction_ids: [paid.id] });
    expect(expectStatus(await api(t, site, 'GET', `bookings/${second.id}`), 200)).toMatchObject({ status: 'partial-payment', total_unpaid: 500, transaction_ids: [paid.id] });
    const read = expectStatus(await api(t, site, 'GET', `transactions/${paid.id}`), 200);
    expect(read.bookings.map((item: Json) => [item.id, item.total])).toEqual([[first.id, 1000], [second.id, 1500]]);
  });

  // The operator may change a channel's account type (CLI `channel set --account-type`). Cards
  // vaulted before stay bound to the old one (spec: "first vaulted to"), so the cardholder vaults
  // the card to the channel again: that was refused for good, the same card on the same channel
  // being found again as the record bound to the old account type.
  it('a card vaulted to a channel before its account type changed can be vaulted to it again and paid there; the old vault keeps its type', async () => {
    const changing = await makeChannel(t, site, { name: 'Changing type' });
    const before = expectStatus(await post({ channels: changing.id, transaction_types: 'vault', total: 0, token: 'tok_mastercard' }), 201);
    expect(before.status).toBe('complete');
    const set = await run(['channel', 'set', '--site', site.path, '--id', String(changing.id), '--account-type', 'protected-processing']);
    expect(set.code, set.stderr).toBe(0);
    const booking = await makeBooking(t, site, changing.id, { total: 1000 });
    expectError(await retained(t, site, changing, booking, 1000, { linked_id: before.id }), 400, 'rest_invalid_param');

    const again = expectStatus(await post({ channels: changing.id, transaction_types: 'vault', total: 0, token: 'tok_mastercard' }), 201);
    expect(again.status).toBe('complete');
    const paid = expectStatus(await retained(t, site, changing, booking, 1000, { linked_id: again.id }), 201);
    expect(paid).toMatchObject({ status: 'complete', last_four_digits: '4444' });
    const trust = await makeChannel(t, site, { name: 'Trust GBP' });
    const elsewhere = await makeBooking(t, site, trust.id, { total: 700 });
    expect(expectStatus(await retained(t, site, trust, elsewhere, 700, { linked_id: before.id }), 201).status).toBe('complete');
  });

  it('an authorised amount counts as linked: the booking total cannot drop below it', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 3000 });
    expectStatus(await post({ transaction_types: 'retained_authorize', total: 2000, linked_id: card.id, bookings: share(booking, 2000) }), 201);
    expectError(await api(t, site, 'PUT', `bookings/${booking.id}`, { total: 1999 }), 400, 'rest_invalid_param');
    const updated = expectStatus(await api(t, site, 'PUT', `bookings/${booking.id}`, { total: 2000 }), 200);
    expect(updated.status).toBe('authorized');
  });
});

describe('money linked to bookings and channels', () => {
  it('a booking with money on it cannot be deleted (or stays readable with its transactions)', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 5000 });
    expectStatus(await retained(t, site, channel, booking, 1000, { linked_id: card.id }), 201);
    const response = await api(t, site, 'DELETE', `bookings/${booking.id}`);
    expect([400, 409]).toContain(response.statusCode);
    expectError(response, response.statusCode);
  });

  it('a channel with bookings cannot be deleted', async () => {
    const other = await makeChannel(t, site, { name: 'Busy' });
    await makeBooking(t, site, other.id);
    const response = await api(t, site, 'DELETE', `channels/${other.id}`);
    expect([400, 409]).toContain(response.statusCode);
    expectError(response, response.statusCode);
  });

  it('the currency of a channel with bookings cannot change', async () => {
    const other = await makeChannel(t, site, { name: 'Fixed' });
    await makeBooking(t, site, other.id);
    const response = await api(t, site, 'PUT', `channels/${other.id}`, { currencies: 'USD' });
    expectError(response, 400, 'rest_invalid_param');
    expect(expectStatus(await api(t, site, 'GET', `channels/${other.id}`), 200).currencies).toBe('GBP');
  });
});

describe('chargebacks (platform admin, CLI)', () => {
  it('chargeback locks the transaction and its booking; reversal unlocks', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 2000 });
    const paid = expectStatus(await retained(t, site, channel, booking, 2000, { linked_id: card.id }), 201);
    const chargeback = await run(['chargeback', '--site', site.path, '--transaction', String(paid.id), '--total', '2000']);
    expect(chargeback.code, chargeback.stderr).toBe(0);
    expect(expectStatus(await api(t, site, 'GET', `transactions/${paid.id}`), 200).status).toBe('locked');
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).status).toBe('locked');
    expectError(await post({ transaction_types: 'refund', total: 100, linked_id: paid.id, bookings: share(booking, 100) }), 400, 'rest_invalid_param');
    const reversal = await run(['chargeback', '--site', site.path, '--transaction', String(paid.id), '--total', '2000', '--type', 'chargeback-reversal']);
    expect(reversal.code, reversal.stderr).toBe(0);
    expect(expectStatus(await api(t, site, 'GET', `transactions/${paid.id}`), 200).status).toBe('complete');
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).status).not.toBe('locked');
  });

  // Money under an open dispute may still come back to the booking (a reversal), so until the
  // dispute is decided it still counts against the booking's total (spec Limits: the total is
  // never below the linked transactions; docs/payments.md "Chargebacks").
  const paidTotal = async (booking: Json) => Number((await t.db.one<{ total_paid: number }>('SELECT total_paid FROM bookings WHERE id = $1', [booking.id])).total_paid);
  const purchase = (booking: Json, total: number, token: string) => post({ transaction_types: 'purchase', total, token, bookings: share(booking, total) });
  const readBooking = async (booking: Json) => expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200);
  /** The operator's CLI: `type` of `total` on the payment. */
  async function dispute(paid: Json, total: number, type = 'chargeback') {
    const result = await run(['chargeback', '--site', site.path, '--transaction', String(paid.id), '--total', String(total), '--type', type]);
    expect(result.code, result.stderr).toBe(0);
  }
  /** A booking of 10000 paid in full with tok_visa, and `disputed` of it charged back. */
  async function chargedBack(disputed: number): Promise<{ booking: Json; paid: Json }> {
    const booking = await makeBooking(t, site, channel.id, { total: 10000 });
    const paid = expectStatus(await purchase(booking, 10000, 'tok_visa'), 201);
    await dispute(paid, disputed);
    return { booking, paid };
  }

  it('a booking whose payment is charged back cannot be paid again while the dispute is open: once reversed it is paid once, not twice', async () => {
    const { booking, paid } = await chargedBack(10000);
    const before = await readBooking(booking);
    expect(before).toMatchObject({ status: 'locked', total_unpaid: 10000 });

    const again = expectError(await purchase(booking, 10000, 'tok_mastercard'), 400, 'rest_invalid_param');
    expect(again.data.params.bookings).toContain('above its total (10000)');
    expect(again.data.params.bookings).toContain('under an open chargeback');
    expect((await readBooking(booking)).transaction_ids).toEqual(before.transaction_ids);

    await dispute(paid, 10000, 'chargeback-reversal');
    expect(await readBooking(booking)).toMatchObject({ status: 'paid', total: 10000, total_unpaid: 0 });
    expect(await paidTotal(booking)).toBe(10000);
  });

  it('the total of a booking under an open chargeback cannot be lowered below the disputed money: once reversed it is not paid above its total', async () => {
    const { booking, paid } = await chargedBack(10000);
    const lowered = expectError(await api(t, site, 'PUT', `bookings/${booking.id}`, { total: 500 }), 400, 'rest_invalid_param');
    expect(lowered.data.params.total).toBe('The total cannot be less than the money linked to the booking (10000, of which 10000 under an open chargeback).');
    expect((await readBooking(booking)).total).toBe(10000);

    await dispute(paid, 10000, 'chargeback-reversal');
    expect(await readBooking(booking)).toMatchObject({ status: 'paid', total: 10000, total_unpaid: 0 });
    expect(await paidTotal(booking)).toBe(10000);
  });

  it('once a dispute is lost for good (override), its money no longer counts: the booking may be paid again for it and its total lowered', async () => {
    const { booking, paid } = await chargedBack(3000);
    expectError(await purchase(booking, 3000, 'tok_mastercard'), 400, 'rest_invalid_param');
    expectError(await api(t, site, 'PUT', `bookings/${booking.id}`, { total: 9999 }), 400, 'rest_invalid_param');

    await dispute(paid, 3000, 'chargeback-override');
    expectStatus(await api(t, site, 'PUT', `bookings/${booking.id}`, { total: 9000 }), 200);
    expectError(await purchase(booking, 2001, 'tok_mastercard'), 400, 'rest_invalid_param');
    expect(expectStatus(await purchase(booking, 2000, 'tok_mastercard'), 201).status).toBe('complete');
    expect(await paidTotal(booking)).toBe(9000);
  });
});

describe('booking status completed', () => {
  it('a paid booking whose end date has passed reads completed', async () => {
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const booking = await makeBooking(t, site, channel.id, { total: 700, date: yesterday });
    expectStatus(await retained(t, site, channel, booking, 700, { linked_id: card.id }), 201);
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).status).toBe('completed');
  });
});

describe('payment request link', () => {
  it('the payment_request URL serves a page', async () => {
    const booking = await makeBooking(t, site, channel.id, { payment_request_url: true });
    const url = new URL(booking._links.self[0].payment_request as string);
    const page = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
  });
});

describe('allocations', () => {
  it('a flat allocation to another channel of the site is returned on the transaction', async () => {
    const partner = await makeChannel(t, site, { name: 'Partner' });
    const booking = await makeBooking(t, site, channel.id, { total: 10000 });
    const response = await retained(t, site, channel, booking, 10000, {
      linked_id: card.id,
      allocations: [{ title: 'Hotel', reference: 'H1', description: 'share', channels: partner.id, currencies: 'GBP', total: 2500, operator: 'flat', statement_date: '2030-01-01' }],
    });
    const paid = expectStatus(response, 201);
    const read = expectStatus(await api(t, site, 'GET', `transactions/${paid.id}`), 200);
    expect(Array.isArray(read.allocations)).toBe(true);
    expect(read.allocations[0]).toMatchObject({ channels: partner.id, currencies: 'GBP', total: 2500, operator: 'flat', reversed: false });
    expect(typeof read.allocations[0].id).toBe('number');
    expect(read.allocations[0].debit).toMatchObject({ currencies: 'GBP' });
    expect(read.allocations[0].credit).toMatchObject({ currencies: 'GBP' });
    for (const key of ['id', 'value', 'total', 'channels', 'currencies', 'operator', 'reversed', 'debit', 'credit']) expect(Object.keys(read.allocations[0])).toContain(key);
  });

  it('an allocation to another site\'s channel is refused', async () => {
    const other = await newSite(t);
    const foreign = await makeChannel(t, other);
    const booking = await makeBooking(t, site, channel.id, { total: 1000 });
    const response = await retained(t, site, channel, booking, 1000, { linked_id: card.id, allocations: [{ channels: foreign.id, currencies: 'GBP', total: 100, operator: 'flat' }] });
    expectError(response, 400, 'rest_invalid_param');
  });
});
