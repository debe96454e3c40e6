import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import type { SiteFixture } from '../support/fixtures.js';
import { api, expectError, expectFields, expectStatus, gmtDateTime, makeBooking, makeChannel, newSite, payingSite, retained, vault, type Json } from './support.js';

let t: TestContext;
let site: SiteFixture;
let channel: Json;
let card: Json;
beforeAll(async () => {
  t = await createTestContext();
  ({ site, channel, card } = await payingSite(t));
});
afterAll(async () => t?.close());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function expectTransaction(transaction: Json) {
  expectFields(transaction, {
    id: 'integer',
    uuid: 'string',
    trust_id: 'string',
    author: 'integer',
    author_id: 'integer',
    authorname: 'string',
    status: 'string',
    created: 'string',
    modified: 'string',
    title: 'string',
    total_remaining: 'integer',
    card_type: ['string', 'null'],
    card_types: ['string', 'null'],
    statement_date: ['string', 'null'],
    last_four_digits: ['string', 'null'],
    forex: 'array',
    forex_id: ['integer', 'null'],
    forex_rate: ['string', 'null'],
    payment_ids: 'array',
    adjustments: 'array',
    content: 'string',
    language: 'string',
    channels: 'integer',
    currencies: 'string',
    total: 'integer',
    transaction_type: 'string',
    transaction_types: 'string',
    allocations: ['array', 'object'],
    bookings: ['array', 'object'],
    psp: ['string', 'null'],
    payment_methods: ['string', 'null'],
    payee_name: ['string', 'null'],
    payee_surname: ['string', 'null'],
    payee_email: ['string', 'null'],
    countries: ['string', 'null'],
    issuer_countries: ['string', 'null'],
    token: ['string', 'null'],
    ip_address: ['string', 'null'],
    bin_number: ['string', 'integer', 'null'],
    attempt_3ds: 'boolean',
    redirect_url: ['string', 'null'],
    linked_id: ['integer', 'null'],
    auth_code: ['string', 'null'],
    hash: 'string',
    _links: 'object',
  });
  expect(['complete', 'expired', 'failed', 'incomplete', 'locked', 'pending']).toContain(transaction.status);
  expect(transaction.created).toMatch(gmtDateTime);
  expect(transaction.trust_id).toBe(`${site.siteId}-${transaction.id}`);
  expect(transaction.author).toBe(transaction.author_id);
  expect(transaction.transaction_type).toBe(transaction.transaction_types);
  expect(transaction.card_type).toBe(transaction.card_types);
  if (transaction.card_types !== null) expect(['visa', 'master', 'amex', 'jcb', 'diners', 'discover', 'other']).toContain(transaction.card_types);
  if (transaction.auth_code !== null && transaction.status === 'complete') expect(transaction.auth_code).toMatch(/^\d{6}$/);
  expect(typeof transaction._links.self[0].href).toBe('string');
  expect(typeof transaction._links.collection[0].href).toBe('string');
  expect(JSON.stringify(transaction)).not.toMatch(/4111111111111111/);
}

describe('vault and retained purchases', () => {
  it('vault with tok_visa on a test channel: 201 complete, zero total, card details, a token', async () => {
    expectTransaction(card);
    expect(card.status).toBe('complete');
    expect(card.transaction_types).toBe('vault');
    expect(card.total).toBe(0);
    expect(card.card_types).toBe('visa');
    expect(card.last_four_digits).toBe('1111');
    expect(typeof card.token).toBe('string');
    expect(card.token.length).toBeGreaterThan(0);
    const read = expectStatus(await api(t, site, 'GET', `transactions/${card.id}`), 200);
    expectTransaction(read);
    expect(read.id).toBe(card.id);
  });

  it('hash = sha256hex(sha256hex("id&status&total&created") + channel_secret)', async () => {
    const secret = expectStatus(await api(t, site, 'GET', `channels/${channel.id}`), 200).channel_secret as string;
    expect(secret.length).toBeGreaterThan(0);
    const read = expectStatus(await api(t, site, 'GET', `transactions/${card.id}`), 200);
    expect(read.hash).toBe(sha256(sha256(`${read.id}&${read.status}&${read.total}&${read.created}`) + secret));
    expect(card.hash).toBe(read.hash);
  });

  it('hash of a channel without channel_secret is keyed with a key of its own, not the server signing secret itself', async () => {
    const { site: own, channel: bare, card: paid } = await payingSite(t);
    await t.db.query("UPDATE channels SET channel_secret = '' WHERE id = $1", [bare.id]);
    try {
      const read = expectStatus(await api(t, own, 'GET', `transactions/${paid.id}`), 200);
      const inner = sha256(`${read.id}&${read.status}&${read.total}&${read.created}`);
      expect(read.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(read.hash).not.toBe(sha256(inner));
      expect(read.hash).not.toBe(sha256(inner + t.context.config.secrets.signingSecret.toString('base64')));
    } finally {
      await t.db.query('UPDATE channels SET channel_secret = $2 WHERE id = $1', [bare.id, bare.channel_secret]);
    }
  });

  it('retained_purchase by linked_id: 201 complete; booking unpaid → partial-payment → paid; transaction_ids', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 10000 });
    const first = expectStatus(await retained(t, site, channel, booking, 4000, { linked_id: card.id }), 201);
    expectTransaction(first);
    expect(first).toMatchObject({ status: 'complete', transaction_types: 'retained_purchase', total: 4000, total_remaining: 4000, linked_id: card.id, channels: channel.id, currencies: 'GBP' });
    expect(first.title.length).toBeGreaterThan(0);
    let read = expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200);
    expect(read).toMatchObject({ status: 'partial-payment', total_unpaid: 6000, transaction_ids: [first.id] });
    const second = expectStatus(await retained(t, site, channel, booking, 6000, { linked_id: card.id }), 201);
    read = expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200);
    expect(read).toMatchObject({ status: 'paid', total_unpaid: 0, transaction_ids: [first.id, second.id] });
    const item = expectStatus(await api(t, site, 'GET', `transactions/${first.id}`), 200);
    expect(Array.isArray(item.bookings)).toBe(true);
    expect(Array.isArray(item.allocations)).toBe(true);
    expect(item.bookings[0]).toMatchObject({ id: booking.id, total: 4000, currencies: 'GBP' });
    expect(String(item.bookings[0].channels)).toBe(String(channel.id));
  });

  it('retained_purchase by token instead of linked_id', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 2500 });
    const paid = expectStatus(await retained(t, site, channel, booking, 2500, { token: card.token }), 201);
    expect(paid.status).toBe('complete');
    expect(paid.last_four_digits).toBe('1111');
  });

  it('PUT booking total below the linked transactions is refused and changes nothing', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 5000 });
    expectStatus(await retained(t, site, channel, booking, 3000, { linked_id: card.id }), 201);
    const body = expectError(await api(t, site, 'PUT', `bookings/${booking.id}`, { total: 2999 }), 400, 'rest_invalid_param');
    expect(Object.keys(body.data.params)).toContain('total');
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).total).toBe(5000);
    expectStatus(await api(t, site, 'PUT', `bookings/${booking.id}`, { total: 3000 }), 200);
  });

  it('PUT booking total below a payment still in flight (a pending 3DS challenge) is refused: the booking never ends paid above its total', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 5000 });
    expectStatus(await retained(t, site, channel, booking, 1000, { linked_id: card.id }), 201);
    const pending = expectStatus(await api(t, site, 'POST', 'transactions', {
      transaction_types: 'purchase', channels: channel.id, currencies: channel.currencies, total: 3000, token: 'tok_visa_3ds_challenge', attempt_3ds: true,
      bookings: [{ id: booking.id, currencies: channel.currencies, total: 3000 }],
    }), 201);
    expect(pending.status).toBe('pending');
    const body = expectError(await api(t, site, 'PUT', `bookings/${booking.id}`, { total: 3999 }), 400, 'rest_invalid_param');
    expect(body.data.params.total).toBe('The total cannot be less than the money linked to the booking (4000, of which 3000 in payments still being processed).');
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200)).toMatchObject({ total: 5000, total_unpaid: 4000 });
    expect(expectStatus(await api(t, site, 'PUT', `bookings/${booking.id}`, { total: 4000 }), 200)).toMatchObject({ total: 4000, total_unpaid: 3000 });
  });

  it('a payment above the booking\'s unpaid total is refused', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1000 });
    const response = await retained(t, site, channel, booking, 1500, { linked_id: card.id });
    expectError(response, 400, 'rest_invalid_param');
    expectStatus(await retained(t, site, channel, booking, 600, { linked_id: card.id }), 201);
    // Refused under the booking's lock, by the statement that lists the attempt (the attempt's
    // COMMIT travels with it): the answer names the booking, and nothing of the attempt is kept.
    const over = expectError(await retained(t, site, channel, booking, 401, { linked_id: card.id }), 400, 'rest_invalid_param');
    expect(over.data.params.bookings).toBe(`Booking ${booking.id}: this payment would take the money on the booking above its total (1000); 400 can be paid on it now: its total less the money paid, authorised, in payments still being processed or under an open chargeback.`);
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).transaction_ids).toHaveLength(1);
    const auth = await api(t, site, 'POST', 'transactions', { transaction_types: 'retained_authorize', channels: channel.id, currencies: 'GBP', total: 401, linked_id: card.id, bookings: [{ id: booking.id, currencies: 'GBP', total: 401 }] });
    expectError(auth, 400, 'rest_invalid_param');
    expectStatus(await retained(t, site, channel, booking, 400, { linked_id: card.id }), 201);
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200)).toMatchObject({ status: 'paid', total_unpaid: 0 });
  });

  it('RO fields sent on POST are ignored, never applied', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1000 });
    const paid = expectStatus(await retained(t, site, channel, booking, 1000, {
      linked_id: card.id,
      id: 999999, uuid: '00000000-0000-0000-0000-000000000000', trust_id: 'x', status: 'failed', total_remaining: 5, hash: 'forged', auth_code: '000000',
      issuer_countries: 'FR', payment_ids: [1], adjustments: [2], content: 'mine', statement_date: '2000-01-01', author_id: 42, card_types: 'amex', last_four_digits: '0000',
    }), 201);
    expect(paid.id).not.toBe(999999);
    expect(paid.status).toBe('complete');
    expect(paid.total_remaining).toBe(1000);
    expect(paid.hash).not.toBe('forged');
    expect(paid.content).not.toBe('mine');
    expect(paid.card_types).toBe('visa');
    expect(paid.last_four_digits).toBe('1111');
    expect(paid.author_id).toBe(site.userId);
    expect(paid.statement_date).not.toBe('2000-01-01');
  });

  it('two concurrent payments of the whole unpaid total: exactly one is charged', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 2000 });
    const responses = await Promise.all([1, 2, 3].map(() => retained(t, site, channel, booking, 2000, { linked_id: card.id })));
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([201, 400, 400]);
    const read = expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200);
    expect(read).toMatchObject({ status: 'paid', total_unpaid: 0 });
    expect(read.transaction_ids).toHaveLength(1);
  });

  it('missing required fields: 400 rest_missing_callback_param', async () => {
    const body = expectError(await api(t, site, 'POST', 'transactions', { transaction_types: 'retained_purchase' }), 400, 'rest_missing_callback_param');
    const params = JSON.stringify(body.data.params);
    for (const field of ['channels', 'currencies', 'total']) expect(params).toContain(field);
  });

  it.each([
    ['transaction_types', 'bogus'],
    ['total', 10.5],
    ['total', -100],
    ['currencies', 'ZZZ'],
    ['language', 'xxXX'],
    ['payment_methods', 'cash'],
  ])('invalid %s=%j: 400 rest_invalid_param', async (field, value) => {
    const booking = await makeBooking(t, site, channel.id, { total: 1000 });
    expectError(await retained(t, site, channel, booking, 1000, { linked_id: card.id, [field]: value }), 400, 'rest_invalid_param');
  });

  it('a card charge is recorded as credit-card; bank-transfer is refused and charges nothing', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1000 });
    const refused = expectError(await retained(t, site, channel, booking, 1000, { linked_id: card.id, payment_methods: 'bank-transfer' }), 400, 'rest_invalid_param');
    expect(refused.data.params).toEqual({ payment_methods: 'This transaction is paid by card: payment_methods can only be credit-card.' });
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200)).toMatchObject({ status: 'unpaid', transaction_ids: [] });
    expect(expectStatus(await retained(t, site, channel, booking, 1000, { linked_id: card.id }), 201).payment_methods).toBe('credit-card');
  });

  it('linked_id of an unknown transaction is refused (400 or 404)', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1000 });
    const response = await retained(t, site, channel, booking, 1000, { linked_id: 987654 });
    expect([400, 404]).toContain(response.statusCode);
    expectError(response, response.statusCode);
  });

  it('a card vaulted to a GBP channel cannot be used on a USD channel', async () => {
    const usd = await makeChannel(t, site, { currencies: 'USD', name: 'US' });
    const booking = await makeBooking(t, site, usd.id, { total: 1000, currencies: 'USD' });
    const response = await retained(t, site, usd, booking, 1000, { linked_id: card.id });
    expectError(response, 400, 'rest_invalid_param');
  });

  it('chargeback types are refused for integrators', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1000 });
    const paid = expectStatus(await retained(t, site, channel, booking, 1000, { linked_id: card.id }), 201);
    const response = await api(t, site, 'POST', 'transactions', { transaction_types: 'chargeback', channels: channel.id, currencies: 'GBP', total: 1000, linked_id: paid.id, bookings: [{ id: booking.id, currencies: 'GBP', total: 1000 }] });
    expect([400, 403]).toContain(response.statusCode);
    expectError(response, response.statusCode);
  });
});

describe('forced declines (test channels)', () => {
  it.each(Array.from({ length: 11 }, (_, index) => 51 + index))('total ending in %i fails with its 800.100.1xx code in content, 201', async (ending) => {
    const total = 1000 + ending;
    const booking = await makeBooking(t, site, channel.id, { total });
    const response = await retained(t, site, channel, booking, total, { linked_id: card.id });
    const failed = expectStatus(response, 201);
    expectTransaction(failed);
    expect(failed.status).toBe('failed');
    expect(failed.content).toContain(`800.100.1${ending}`);
    expect(failed.total_remaining).toBe(0);
    const read = expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200);
    expect(read).toMatchObject({ status: 'unpaid', total_unpaid: total, transaction_ids: [failed.id] });
  });

  it('a total ending in 50 or 62 is not forced to fail', async () => {
    for (const total of [1050, 1062]) {
      const booking = await makeBooking(t, site, channel.id, { total });
      expect(expectStatus(await retained(t, site, channel, booking, total, { linked_id: card.id }), 201).status).toBe('complete');
    }
  });
});

describe('authorize, capture, void, refund', () => {
  const post = (body: Json) => api(t, site, 'POST', 'transactions', { channels: channel.id, currencies: 'GBP', ...body });
  const share = (booking: Json, total: number) => [{ id: booking.id, currencies: 'GBP', total }];

  it('retained_authorize → booking authorized; partial capture once → partial-payment; second capture refused', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 5000 });
    const auth = expectStatus(await post({ transaction_types: 'retained_authorize', total: 5000, linked_id: card.id, bookings: share(booking, 5000) }), 201);
    expect(auth).toMatchObject({ status: 'complete', total_remaining: 5000 });
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).status).toBe('authorized');
    const capture = expectStatus(await post({ transaction_types: 'capture', total: 3000, linked_id: auth.id, bookings: share(booking, 3000) }), 201);
    expectTransaction(capture);
    expect(capture).toMatchObject({ status: 'complete', total: 3000, linked_id: auth.id });
    const read = expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200);
    expect(read).toMatchObject({ status: 'partial-payment', total_unpaid: 2000 });
    const again = await post({ transaction_types: 'capture', total: 1000, linked_id: auth.id, bookings: share(booking, 1000) });
    expectError(again, 400, 'rest_invalid_param');
    const authRead = expectStatus(await api(t, site, 'GET', `transactions/${auth.id}`), 200);
    expect(authRead.adjustments).toContain(capture.id);
  });

  it('capture above the authorised amount is refused', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 5000 });
    const auth = expectStatus(await post({ transaction_types: 'retained_authorize', total: 2000, linked_id: card.id, bookings: share(booking, 2000) }), 201);
    expectError(await post({ transaction_types: 'capture', total: 2001, linked_id: auth.id, bookings: share(booking, 2001) }), 400, 'rest_invalid_param');
  });

  it('void: full remaining of an uncaptured authorize; total_remaining 0, allocations []; booking back to unpaid', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 4000 });
    const auth = expectStatus(await post({ transaction_types: 'retained_authorize', total: 4000, linked_id: card.id, bookings: share(booking, 4000) }), 201);
    expectError(await post({ transaction_types: 'void', total: 1000, linked_id: auth.id, bookings: share(booking, 1000) }), 400, 'rest_invalid_param');
    const voided = expectStatus(await post({ transaction_types: 'void', total: 4000, linked_id: auth.id, bookings: share(booking, 4000) }), 201);
    expect(voided.status).toBe('complete');
    expect(voided.total_remaining).toBe(0);
    expect(voided.allocations).toEqual([]);
    expect(expectStatus(await api(t, site, 'GET', `transactions/${auth.id}`), 200).total_remaining).toBe(0);
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).status).toBe('unpaid');
    expectError(await post({ transaction_types: 'capture', total: 4000, linked_id: auth.id, bookings: share(booking, 4000) }), 400, 'rest_invalid_param');
  });

  it('void of a purchase or of a captured authorize is refused', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 4000 });
    const paid = expectStatus(await retained(t, site, channel, booking, 2000, { linked_id: card.id }), 201);
    expectError(await post({ transaction_types: 'void', total: 2000, linked_id: paid.id, bookings: share(booking, 2000) }), 400, 'rest_invalid_param');
    const auth = expectStatus(await post({ transaction_types: 'retained_authorize', total: 2000, linked_id: card.id, bookings: share(booking, 2000) }), 201);
    expectStatus(await post({ transaction_types: 'capture', total: 2000, linked_id: auth.id, bookings: share(booking, 2000) }), 201);
    expectError(await post({ transaction_types: 'void', total: 2000, linked_id: auth.id, bookings: share(booking, 2000) }), 400, 'rest_invalid_param');
  });

  it('refund ≤ total_remaining; booking status follows; over-refund refused', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 3000 });
    const paid = expectStatus(await retained(t, site, channel, booking, 3000, { linked_id: card.id }), 201);
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).status).toBe('paid');
    const refund = expectStatus(await post({ transaction_types: 'refund', total: 1000, linked_id: paid.id, bookings: share(booking, 1000) }), 201);
    expectTransaction(refund);
    expect(refund).toMatchObject({ status: 'complete', transaction_types: 'refund', total: 1000 });
    const afterRefund = expectStatus(await api(t, site, 'GET', `transactions/${paid.id}`), 200);
    expect(afterRefund.total_remaining).toBe(2000);
    expect(afterRefund.adjustments).toContain(refund.id);
    expect(refund.linked_id).toBe(paid.id);
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200)).toMatchObject({ status: 'partial-payment', total_unpaid: 1000 });
    expectError(await post({ transaction_types: 'refund', total: 2001, linked_id: paid.id, bookings: share(booking, 2001) }), 400, 'rest_invalid_param');
    expectStatus(await post({ transaction_types: 'refund', total: 2000, linked_id: paid.id, bookings: share(booking, 2000) }), 201);
    expect(expectStatus(await api(t, site, 'GET', `transactions/${paid.id}`), 200).total_remaining).toBe(0);
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200)).toMatchObject({ status: 'unpaid', total_unpaid: 3000 });
  });

  it('capture, void and refund act on the linked transaction\'s card: a token or attempt_3ds with them is refused and records nothing', async () => {
    const other = await vault(t, site, channel, 'tok_mastercard');
    const booking = await makeBooking(t, site, channel.id, { total: 6000 });
    const auth = expectStatus(await post({ transaction_types: 'retained_authorize', total: 3000, linked_id: card.id, bookings: share(booking, 3000) }), 201);
    const followUps = [
      { transaction_types: 'capture', total: 3000, linked_id: auth.id, bookings: share(booking, 3000) },
      { transaction_types: 'void', total: 3000, linked_id: auth.id, bookings: share(booking, 3000) },
    ];
    const paid = expectStatus(await retained(t, site, channel, booking, 2000, { linked_id: card.id }), 201);
    followUps.push({ transaction_types: 'refund', total: 500, linked_id: paid.id, bookings: share(booking, 500) });
    const idsBefore = expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).transaction_ids;
    for (const body of followUps) {
      for (const token of [other.token, 'tok_visa', 'no-such-token']) {
        const refused = expectError(await post({ ...body, token }), 400, 'rest_invalid_param');
        expect(Object.keys(refused.data.params), body.transaction_types).toEqual(['token']);
      }
      const refused = expectError(await post({ ...body, attempt_3ds: true }), 400, 'rest_invalid_param');
      expect(Object.keys(refused.data.params), body.transaction_types).toEqual(['attempt_3ds']);
    }
    expect(expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200).transaction_ids).toEqual(idsBefore);
    expect(expectStatus(await api(t, site, 'GET', `transactions/${auth.id}`), 200).total_remaining).toBe(3000);
    expect(expectStatus(await api(t, site, 'GET', `transactions/${paid.id}`), 200).total_remaining).toBe(2000);
    // Without them (attempt_3ds false is no request for 3-D Secure), each goes through on the linked card.
    const refund = expectStatus(await post({ ...followUps[2], attempt_3ds: false }), 201);
    expect(refund).toMatchObject({ status: 'complete', token: card.token, attempt_3ds: false, '3ds_response': null });
    expect(expectStatus(await post(followUps[0]!), 201)).toMatchObject({ status: 'complete', token: card.token, '3ds_response': null });
  });

  it('refund of a failed transaction is refused', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 1051 });
    const failed = expectStatus(await retained(t, site, channel, booking, 1051, { linked_id: card.id }), 201);
    expect(failed.status).toBe('failed');
    expectError(await post({ transaction_types: 'refund', total: 1051, linked_id: failed.id, bookings: share(booking, 1051) }), 400, 'rest_invalid_param');
  });
});

describe('Idempotency-Key', () => {
  it('same key + same body replays (Idempotent-Replayed: true); different body is 409 rest_idempotency_conflict', async () => {
    const booking = await makeBooking(t, site, channel.id, { total: 2000 });
    const body = { transaction_types: 'retained_purchase', channels: channel.id, currencies: 'GBP', total: 1000, linked_id: card.id, bookings: [{ id: booking.id, currencies: 'GBP', total: 1000 }] };
    const key = `key-${Date.now()}`;
    const first = await api(t, site, 'POST', 'transactions', body, { 'idempotency-key': key });
    const created = expectStatus(first, 201);
    const replay = await api(t, site, 'POST', 'transactions', body, { 'idempotency-key': key });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().id).toBe(created.id);
    const conflict = await api(t, site, 'POST', 'transactions', { ...body, total: 999 }, { 'idempotency-key': key });
    expectError(conflict, 409, 'rest_idempotency_conflict');
    // A replay must not run the request again, even after the reply: let any stray work finish.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const read = expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200);
    expect(read.transaction_ids).toEqual([created.id]);
    expect(read.total_unpaid).toBe(1000);
  });

  it('keys are scoped per site', async () => {
    const other = await newSite(t);
    const otherChannel = await makeChannel(t, other);
    const key = `shared-${Date.now()}`;
    const a = await api(t, site, 'POST', 'bookings', { firstname: 'A', surname: 'B', email: 'a@example.com', date: '2030-01-01', total: 100, currencies: 'GBP', countries: 'GB', channels: channel.id }, { 'idempotency-key': key });
    const b = await api(t, other, 'POST', 'bookings', { firstname: 'A', surname: 'B', email: 'a@example.com', date: '2030-01-01', total: 100, currencies: 'GBP', countries: 'GB', channels: otherChannel.id }, { 'idempotency-key': key });
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.json().id).not.toBe(a.json().id);
  });
});

describe('transaction list', () => {
  it('filters: include, exclude, status, transaction_types, channels, last_four_digits, reference, pagination headers', async () => {
    const listSite = await newSite(t);
    const gbp = await makeChannel(t, listSite);
    const saved = await vault(t, listSite, gbp);
    const booking = await makeBooking(t, listSite, gbp.id, { total: 5000, reference: 'LIST-REF', surname: 'Payer' });
    const ok = expectStatus(await retained(t, listSite, gbp, booking, 1000, { linked_id: saved.id, payee_surname: 'Payer', payee_email: 'p@example.com' }), 201);
    const failed = expectStatus(await retained(t, listSite, gbp, booking, 1051, { linked_id: saved.id }), 201);
    const ids = (list: Json[]) => list.map((transaction) => transaction.id);
    const list = async (query: string) => expectStatus(await api(t, listSite, 'GET', `transactions${query}`), 200) as Json[];
    const all = await api(t, listSite, 'GET', 'transactions');
    expect(ids(expectStatus(all, 200) as Json[])).toEqual([saved.id, ok.id, failed.id]);
    expect(all.headers['x-site-total']).toBe('3');
    expect(all.headers['x-site-totalpages']).toBe('1');
    expect(ids(await list('?order=desc'))).toEqual([failed.id, ok.id, saved.id]);
    expect(ids(await list(`?include=${ok.id}`))).toEqual([ok.id]);
    expect(ids(await list(`?exclude=${ok.id}`))).toEqual([saved.id, failed.id]);
    expect(ids(await list('?status=failed'))).toEqual([failed.id]);
    expect(ids(await list('?transaction_types=vault'))).toEqual([saved.id]);
    expect(ids(await list(`?channels=${gbp.id}`))).toHaveLength(3);
    expect(ids(await list(`?channels_exclude=${gbp.id}`))).toEqual([]);
    expect(ids(await list('?last_four_digits=1111'))).toHaveLength(3);
    expect(ids(await list('?currencies=GBP'))).toHaveLength(3);
    expect(ids(await list('?currencies_exclude=GBP'))).toEqual([]);
    expect(ids(await list('?payee_surname=Payer'))).toEqual([ok.id]);
    expect(ids(await list('?payee_email=p@example.com'))).toEqual([ok.id]);
    // Exact but case-insensitive, as the bookings list's `email`.
    expect(ids(await list('?payee_email=P@Example.COM'))).toEqual([ok.id]);
    expect(ids(await list('?payee_email=p@example.co'))).toEqual([]);
    expect(ids(await list('?reference=LIST-REF'))).toEqual([ok.id, failed.id]);
    // A reference with a comma is one reference; several are asked for by repeating the parameter.
    const commaBooking = await makeBooking(t, listSite, gbp.id, { total: 900, reference: 'INV,7' });
    const commaPaid = expectStatus(await retained(t, listSite, gbp, commaBooking, 900, { linked_id: saved.id }), 201);
    expect(ids(await list(`?reference=${encodeURIComponent('INV,7')}`))).toEqual([commaPaid.id]);
    expect(ids(await list('?reference=INV,7'))).toEqual([commaPaid.id]);
    expect(ids(await list('?reference=INV'))).toEqual([]);
    expect(ids(await list(`?reference=LIST-REF&reference=${encodeURIComponent('INV,7')}`))).toEqual([ok.id, failed.id, commaPaid.id]);
    // An empty `reference=` is the reference of a booking sent without one (stored as ""), matched
    // exactly as any other and as the bookings list matches it; not "no filter" as `search=` is.
    const plain = await makeBooking(t, listSite, gbp.id, { total: 800 });
    const plainPaid = expectStatus(await retained(t, listSite, gbp, plain, 800, { linked_id: saved.id }), 201);
    expect(ids(await list('?reference='))).toEqual([plainPaid.id]);
    expect(ids(expectStatus(await api(t, listSite, 'GET', 'bookings?reference='), 200) as Json[])).toEqual([plain.id]);
    // Created within the second shown: `after` that second leaves it out.
    expect(ids(await list(`?after=${encodeURIComponent(commaPaid.created)}`))).not.toContain(commaPaid.id);
    expect(ids(await list('?per_page=1&page=3'))).toEqual([failed.id]);
    expectError(await api(t, listSite, 'GET', 'transactions?status=bogus'), 400, 'rest_invalid_param');
    expectError(await api(t, listSite, 'GET', 'transactions/987654'), 404, 'rest_post_invalid_id');
  });
});
