import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import type { SiteFixture } from '../support/fixtures.js';
import { api, authPrefix, expectError, expectStatus, makeBooking, makeChannel, newSite, retained, send, vault, type Json } from './support.js';

let t: TestContext;
let site: SiteFixture;
beforeAll(async () => {
  t = await createTestContext();
  site = await newSite(t);
});
afterAll(async () => t?.close());

const offered = ['AED', 'ARS', 'AUD', 'BRL', 'CAD', 'CHF', 'CLP', 'CNY', 'COP', 'DKK', 'EUR', 'FJD', 'GBP', 'HKD', 'ILS', 'INR', 'ISK', 'JPY', 'KRW', 'MXN', 'NOK', 'NZD', 'PEN', 'RUB', 'SEK', 'SGD', 'THB', 'TRY', 'USD', 'ZAR'];

describe('forex', () => {
  it('a USD channel offers the spec\'s payment currencies in forex_feed.rates', async () => {
    const usd = await makeChannel(t, site, { currencies: 'USD', name: 'USD' });
    expect(usd.forex_feed.base).toBe('USD');
    const codes = Object.keys(usd.forex_feed.rates);
    for (const code of offered.filter((code) => code !== 'USD')) expect(codes).toContain(code);
    for (const rate of Object.values(usd.forex_feed.rates) as Json[]) expect(rate.rate).toBeGreaterThan(0);
  });

  it('paying a USD booking in EUR: total = booking total × rate; forex fields set; booking paid', async () => {
    const usd = await makeChannel(t, site, { currencies: 'USD', name: 'USD pay' });
    const card = await vault(t, site, usd);
    const booking = await makeBooking(t, site, usd.id, { total: 10000, currencies: 'USD' });
    const quote = usd.forex_feed.rates.EUR as Json;
    const total = Math.round(10000 * quote.rate);
    const response = await api(t, site, 'POST', 'transactions', {
      transaction_types: 'retained_purchase',
      channels: usd.id,
      currencies: 'EUR',
      total,
      linked_id: card.id,
      bookings: [{ id: booking.id, currencies: 'USD', total: 10000 }],
    });
    const paid = expectStatus(response, 201);
    expect(paid.status).toBe('complete');
    expect(paid.currencies).toBe('EUR');
    expect(paid.total).toBe(total);
    expect(typeof paid.forex_rate).toBe('string');
    expect(Number.isInteger(paid.forex_id)).toBe(true);
    expect(Array.isArray(paid.forex)).toBe(true);
    const read = expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200);
    expect(read).toMatchObject({ status: 'paid', total_unpaid: 0 });
  });

  it('a forex total that does not match the booking total × rate is refused', async () => {
    const usd = await makeChannel(t, site, { currencies: 'USD', name: 'USD bad' });
    const card = await vault(t, site, usd);
    const booking = await makeBooking(t, site, usd.id, { total: 10000, currencies: 'USD' });
    const rate = (usd.forex_feed.rates.EUR as Json).rate as number;
    const response = await api(t, site, 'POST', 'transactions', {
      transaction_types: 'retained_purchase',
      channels: usd.id,
      currencies: 'EUR',
      total: Math.round(10000 * rate) + 500,
      linked_id: card.id,
      bookings: [{ id: booking.id, currencies: 'USD', total: 10000 }],
    });
    expectError(response, 400, 'rest_invalid_param');
  });
});

describe('Idempotency-Key on other POSTs', () => {
  it('bookings: replay returns the same booking and creates nothing new', async () => {
    const channel = await makeChannel(t, site);
    const body = { firstname: 'I', surname: 'K', email: 'ik@example.com', date: '2030-01-01', total: 100, currencies: 'GBP', countries: 'GB', channels: channel.id };
    const first = await api(t, site, 'POST', 'bookings', body, { 'idempotency-key': 'booking-1' });
    const second = await api(t, site, 'POST', 'bookings', body, { 'idempotency-key': 'booking-1' });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json().id).toBe(first.json().id);
    expectError(await api(t, site, 'POST', 'bookings', { ...body, total: 101 }, { 'idempotency-key': 'booking-1' }), 409, 'rest_idempotency_conflict');
    // A replay must not run the request again, even after the reply: let any stray work finish.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const list = expectStatus(await api(t, site, 'GET', 'bookings?surname=K'), 200) as Json[];
    expect(list).toHaveLength(1);
  });

  it('channels: replay returns the same channel', async () => {
    const first = await api(t, site, 'POST', 'channels', { name: 'Idem', currencies: 'GBP' }, { 'idempotency-key': 'channel-1' });
    const second = await api(t, site, 'POST', 'channels', { name: 'Idem', currencies: 'GBP' }, { 'idempotency-key': 'channel-1' });
    expect(second.json().id).toBe(first.json().id);
    expect(second.headers['idempotent-replayed']).toBe('true');
  });
});

describe('vaulting app', () => {
  it('serves version 1.8.0 with a cardvaultuser JWT and a channel; refuses a missing or bad auth', async () => {
    const channel = await makeChannel(t, site);
    const jwt = expectStatus(await send(t, 'POST', `${authPrefix(site.path)}/token/cardvaultuser`, { body: { username: site.username, password: site.password } }), 200).token as string;
    const page = await t.app.inject({ method: 'GET', url: `/vault/1.8.0/?auth=${encodeURIComponent(jwt)}&channels=${channel.id}&session_id=abc123&env=test` });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const bad = await t.app.inject({ method: 'GET', url: `/vault/1.8.0/?auth=nope&channels=${channel.id}` });
    expect(bad.statusCode).toBeGreaterThanOrEqual(400);
    const unknownVersion = await t.app.inject({ method: 'GET', url: `/vault/9.9.9/?auth=${encodeURIComponent(jwt)}&channels=${channel.id}` });
    expect(unknownVersion.statusCode).toBe(404);
  });

  it('a user JWT (not cardvaultuser) does not open the vaulting app', async () => {
    const channel = await makeChannel(t, site);
    const login = expectStatus(await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { username: site.username, password: site.password } }), 200);
    const page = await t.app.inject({ method: 'GET', url: `/vault/1.8.0/?auth=${encodeURIComponent(login.token)}&channels=${channel.id}` });
    expect(page.statusCode).toBeGreaterThanOrEqual(400);
  });
});

describe('login protection', () => {
  it('after 10 failures the account is locked (even the right password is refused), same answer as a wrong password', async () => {
    const victim = await newSite(t);
    const url = `${authPrefix(victim.path)}/token`;
    let last = await send(t, 'POST', url, { body: { username: victim.username, password: 'wrong' } });
    for (let attempt = 1; attempt < 10; attempt++) last = await send(t, 'POST', url, { body: { username: victim.username, password: 'wrong' } });
    const locked = await send(t, 'POST', url, { body: { username: victim.username, password: victim.password } });
    expect(locked.statusCode).toBeGreaterThanOrEqual(400);
    expectError(locked, locked.statusCode);
    // The API token keeps working: lock-out is about passwords.
    expectStatus(await api(t, victim, 'GET', 'channels'), 200);
  });
});

describe('transaction list: more filters', () => {
  it('bin_number, countries, payment_methods, statement_date_after/before, after/before', async () => {
    const listSite = await newSite(t);
    const channel = await makeChannel(t, listSite);
    const card = await vault(t, listSite, channel);
    const booking = await makeBooking(t, listSite, channel.id, { total: 1000 });
    const paid = expectStatus(await retained(t, listSite, channel, booking, 1000, { linked_id: card.id, countries: 'GB', payment_methods: 'credit-card' }), 201);
    const ids = async (query: string) => (expectStatus(await api(t, listSite, 'GET', `transactions${query}`), 200) as Json[]).map((item) => item.id);
    expect(await ids('?bin_number=411111')).toEqual([card.id, paid.id]);
    expect(await ids('?bin_number=555555')).toEqual([]);
    // Stored BINs have at most six digits: an 8-digit one would match nothing, silently.
    const eightDigits = await api(t, listSite, 'GET', 'transactions?bin_number=41111111');
    expect(eightDigits.statusCode).toBe(400);
    expect(eightDigits.json().data.params.bin_number).toMatch(/3 to 6 digits.*first six/);
    expect(await ids('?countries=GB')).toContain(paid.id);
    expect(await ids('?countries=FR')).toEqual([]);
    expect(await ids('?payment_methods=credit-card')).toContain(paid.id);
    expect(await ids('?payment_methods=bank-transfer')).toEqual([]);
    expect(await ids(`?statement_date_after=${encodeURIComponent(paid.statement_date)}`)).toContain(paid.id);
    expect(await ids('?statement_date_before=2000-01-01')).toEqual([]);
    // "timestamps" (spec): a Unix timestamp in seconds stands for its GMT day, as an ISO date does.
    const unixSeconds = (day: string, hour = 0) => String(Date.parse(`${day}T00:00:00Z`) / 1000 + hour * 3600);
    expect(await ids(`?statement_date_after=${unixSeconds(paid.statement_date, 23)}`)).toContain(paid.id);
    expect(await ids(`?statement_date_before=${unixSeconds(paid.statement_date, 12)}`)).toContain(paid.id);
    expect(await ids(`?statement_date_before=${unixSeconds('2000-01-01')}`)).toEqual([]);
    expect((await api(t, listSite, 'GET', 'transactions?statement_date_after=1.5')).json().data.params).toEqual({ statement_date_after: 'must be an ISO 8601 date or date-time, such as 2026-01-31, or a Unix timestamp in seconds' });
    expect(await ids('?after=2000-01-01T00:00:00Z')).toEqual([card.id, paid.id]);
    expect(await ids('?before=2000-01-01T00:00:00Z')).toEqual([]);
  });
});
