import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closed, documentAjv as ajv } from '../support/openapi.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { addUser, type SiteFixture } from '../support/fixtures.js';
import { api, authPrefix, bookingBody, expectStatus, makeChannel, newSite, seedSuppliers, send, type Json, type Method } from './support.js';

/**
 * An integrator's first session, judged by the served OpenAPI document alone: every answer of the
 * main endpoints (token endpoints, API tokens, channels, bookings, suppliers, transactions), success
 * and error, matches the schema the document gives for its status, field by field; the document
 * names the spec's enums where the spec gives them, and the headers an integrator needs (the
 * Idempotency-Key it may send, the pagination and replay headers it gets back).
 */

const A = '/{path}/site-json/vendor/v2';
const J = '/{path}/site-json/jwt-auth/v1';

let t: TestContext;
let site: SiteFixture;
let document: Json;
const answers: Array<{ method: Method; path: string; response: LightMyRequestResponse }> = [];

/** A request as an integrator sends it, kept for the schema check, by its documented path. */
async function call(method: Method, path: string, url: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<LightMyRequestResponse> {
  const response = await send(t, method, url, options);
  answers.push({ method, path, response });
  return response;
}
const siteUrl = (rest: string) => `/${site.path}/site-json/vendor/v2/${rest}`;
const asSite = (method: Method, path: string, rest: string, body?: unknown, headers: Record<string, string> = {}) =>
  call(method, `${A}/${path}`, siteUrl(rest), { headers: { ...site.headers, ...headers }, ...(body === undefined ? {} : { body }) });

function operation(method: string, path: string): Json {
  const found = document.paths[path]?.[method.toLowerCase()] as Json | undefined;
  if (!found) throw new Error(`${method} ${path} is not documented`);
  return found;
}
const responseSchema = (method: string, path: string, status: string) => operation(method, path).responses[status].content['application/json'].schema as Json;
/** The enum a property documents, `null` included when it may be null. */
function enumOf(schema: Json): unknown[] | undefined {
  if (schema.enum) return schema.enum as unknown[];
  if (schema.anyOf) {
    const values = (schema.anyOf as Json[]).flatMap((branch) => (branch.type === 'null' ? [null] : (branch.enum as unknown[] | undefined) ?? ['<any>']));
    return values.includes('<any>') ? undefined : values;
  }
  return undefined;
}

const languages = ['zhZH', 'enGB', 'frFR', 'deDE', 'itIT', 'jaJA', 'kkKK', 'koKO', 'lvLV', 'ptBR', 'roRO', 'ruRU', 'esES', 'ukUK', 'uzUZ'];
const transactionTypes = ['authorize', 'capture', 'chargeback', 'chargeback-reversal', 'chargeback-override', 'purchase', 'refund', 'retained_authorize', 'retained_purchase', 'vault', 'void'];
const cardTypes = ['visa', 'master', 'amex', 'jcb', 'diners', 'discover', 'other'];
const settlementCurrencies = ['AED', 'AUD', 'CAD', 'CHF', 'DKK', 'EUR', 'GBP', 'HKD', 'JPY', 'NOK', 'NZD', 'SEK', 'SGD', 'USD', 'ZAR'];

beforeAll(async () => {
  t = await createTestContext();
  site = await newSite(t);
  await seedSuppliers(t, [{ id: 'GB-1042-ACC', name: 'Grand Hotel', url: 'https://grand.example', country: 'GB', category: 'ACC' }]);
  document = (await t.app.inject({ url: '/openapi.json' })).json();
});
afterAll(async () => t?.close());

describe('the served document names what the spec names', () => {
  it("gives the spec's enums on the fields it answers: card types, transaction types, payment methods, languages, settlement currencies, allocation operators, supplier categories", () => {
    const transaction = responseSchema('GET', `${A}/transactions/{id}`, '200').properties as Json;
    const channel = responseSchema('GET', `${A}/channels/{id}`, '200').properties as Json;
    const booking = responseSchema('GET', `${A}/bookings/{id}`, '200').properties as Json;
    const supplier = responseSchema('GET', `${A}/suppliers/{id}`, '200').properties as Json;
    const sorted = (values: unknown[] | undefined) => (values ? [...values].map(String).sort() : values);
    expect({
      card_type: sorted(enumOf(transaction.card_type)),
      card_types: sorted(enumOf(transaction.card_types)),
      transaction_types: sorted(enumOf(transaction.transaction_types)),
      transaction_type: sorted(enumOf(transaction.transaction_type)),
      payment_methods: sorted(enumOf(transaction.payment_methods)),
      'transaction language': sorted(enumOf(transaction.language)),
      'allocation operator': sorted(enumOf(transaction.allocations.items.properties.operator)),
      'channel language': sorted(enumOf(channel.language)),
      settlement_currency: sorted(enumOf(channel.settlement_currency)),
      'booking language': sorted(enumOf(booking.language)),
      category: sorted(enumOf(supplier.category)),
    }).toEqual({
      card_type: sorted([...cardTypes, null]),
      card_types: sorted([...cardTypes, null]),
      transaction_types: sorted(transactionTypes),
      transaction_type: sorted(transactionTypes),
      payment_methods: sorted(['bank-transfer', 'credit-card', null]),
      'transaction language': sorted(languages),
      'allocation operator': ['flat', 'percent'],
      'channel language': sorted(languages),
      settlement_currency: sorted([...settlementCurrencies, null]),
      'booking language': sorted(languages),
      category: sorted(['ACC', 'AIR', 'TRN', 'CRU', 'ACT', 'TOU', 'INS', 'OTH']),
    });
  });

  it('documents the Idempotency-Key header where it is honoured, and the headers lists, creations, replays and the rate limit answer with', () => {
    const headerParameters = (method: string, path: string) =>
      ((operation(method, path).parameters ?? []) as Json[]).filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name.toLowerCase());
    const responseHeaders = (method: string, path: string, status: string) => Object.keys(operation(method, path).responses[status].headers ?? {}).map((name) => name.toLowerCase()).sort();
    for (const path of ['channels', 'bookings', 'transactions']) {
      expect([path, headerParameters('POST', `${A}/${path}`)]).toEqual([path, ['idempotency-key']]);
      expect([path, responseHeaders('POST', `${A}/${path}`, '201')]).toEqual([path, expect.arrayContaining(['idempotent-replayed'])]);
      expect([path, responseHeaders('GET', `${A}/${path}`, '200')]).toEqual([path, ['link', 'x-site-total', 'x-site-totalpages']]);
      expect([path, responseHeaders('GET', `${A}/${path}`, '429')]).toEqual([path, ['retry-after']]);
    }
    expect(responseHeaders('GET', `${A}/suppliers`, '200')).toEqual(['link', 'x-site-total', 'x-site-totalpages']);
    expect(responseHeaders('POST', `${A}/transactions`, '201')).toEqual(['idempotent-replayed', 'location']);
    // Not where the key is ignored: the new API token is never stored for a replay, the token endpoints have no site.
    expect(headerParameters('POST', '/{path}/api-tokens')).toEqual([]);
    expect(headerParameters('POST', `${J}/token`)).toEqual([]);
  });

  it('POST transactions says what each type needs: the operation names every type with its required fields, and every field an integrator sends is described', () => {
    const create = operation('POST', `${A}/transactions`);
    const description = String(create.description ?? '');
    const required: Record<string, string[]> = {
      vault: ['channels', 'currencies', 'total', 'token'],
      purchase: ['channels', 'currencies', 'total', 'bookings', 'token'],
      retained_purchase: ['channels', 'currencies', 'total', 'bookings', 'linked_id', 'token'],
      capture: ['channels', 'currencies', 'total', 'bookings', 'linked_id'],
      void: ['channels', 'currencies', 'total', 'bookings', 'linked_id'],
      refund: ['channels', 'currencies', 'total', 'bookings', 'linked_id'],
    };
    for (const [type, fields] of Object.entries(required)) {
      const line = description.split('\n').find((text) => text.includes(`\`${type}\``)) ?? '';
      expect([type, fields.filter((field) => !line.includes(`\`${field}\``))]).toEqual([type, []]);
    }
    const body = create.requestBody.content['application/json'].schema as Json;
    const input = ['channels', 'currencies', 'total', 'bookings', 'linked_id', 'token', 'language', 'payee_name', 'payee_surname', 'payee_email', 'countries', 'psp', 'ip_address', 'redirect_url', 'allocations'];
    expect(input.filter((field) => !body.properties[field]?.description)).toEqual([]);
  });

  it('every query parameter of the lists says what it matches (exact, wildcard, contains, which field), where it said only its pattern', () => {
    const undescribed = ['channels', 'bookings', 'suppliers', 'transactions'].flatMap((collection) =>
      ((operation('GET', `${A}/${collection}`).parameters ?? []) as Json[])
        .filter((parameter) => parameter.in === 'query' && typeof parameter.description !== 'string' && typeof parameter.schema?.description !== 'string')
        .map((parameter) => `${collection}: ${parameter.name as string}`),
    );
    expect(undescribed).toEqual([]);
  });
});

describe('real answers against the documented schemas', () => {
  it('the token endpoints and API tokens', async () => {
    const credentials = { username: site.username, password: site.password };
    const login = expectStatus(await call('POST', `${J}/token`, `${authPrefix(site.path)}/token`, { body: credentials }), 200);
    const refreshed = await call('POST', `${J}/token/refresh`, `${authPrefix(site.path)}/token/refresh`, { headers: { authorization: `Bearer ${login.refresh_token as string}` } });
    expectStatus(refreshed, 200);
    expectStatus(await call('POST', `${J}/token/cardvaultuser`, `${authPrefix(site.path)}/token/cardvaultuser`, { body: credentials }), 200);
    await call('POST', `${J}/token`, `${authPrefix(site.path)}/token`, { body: { ...credentials, password: 'wrong' } });
    await call('POST', `${J}/token`, `${authPrefix(site.path)}/token`, { body: { ...credentials, otpp: '1' } });
    await call('POST', `${J}/token/refresh`, `${authPrefix(site.path)}/token/refresh`);

    const other = await addUser(t.db, site.siteId, { role: 'member_admin' });
    const asOther = (method: Method, rest: string, body?: unknown) =>
      call(method, rest === '' ? '/{path}/api-tokens' : '/{path}/api-tokens/{token_id}', `/${site.path}/api-tokens${rest}`, { headers: other.headers, ...(body === undefined ? {} : { body }) });
    expectStatus(await asOther('POST', '', { name: 'ci', expires_at: '2031-01-31' }), 201);
    await asOther('POST', '', { name: 'third' });
    const listed = expectStatus(await asOther('GET', ''), 200) as Json[];
    expect(listed.length).toBe(2);
    expectStatus(await asOther('DELETE', `/${listed[1]!.id as number}`), 200);
    await asOther('DELETE', '/999999');
    expectStatus(await call('DELETE', `${J}/token/refresh`, `${authPrefix(site.path)}/token/refresh`, { headers: { authorization: `Bearer ${login.token as string}` } }), 200);
    expectStatus(await asOther('DELETE', ''), 200);
  });

  it('channels, bookings and suppliers: create, list, read, update, delete, and the refusals met first', async () => {
    expectStatus(await asSite('POST', 'channels', 'channels', { name: 'Main', currencies: 'USD', language: 'deDE', primary_mail: 'ops@example.com' }, { 'idempotency-key': 'channel-1' }), 201);
    const replay = await asSite('POST', 'channels', 'channels', { name: 'Main', currencies: 'USD', language: 'deDE', primary_mail: 'ops@example.com' }, { 'idempotency-key': 'channel-1' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const spare = expectStatus(await asSite('POST', 'channels', 'channels', { name: 'Spare', currencies: 'EUR', account_mode: 'draft', vaultprovider_api_key: 'key-0123456789' }), 201);
    expectStatus(await asSite('GET', 'channels', 'channels?per_page=1'), 200);
    expectStatus(await asSite('PUT', 'channels/{id}', `channels/${spare.id as number}`, { receipt_label: 'Spare Travel', mail_failures: true }), 200);
    expectStatus(await asSite('GET', 'channels/{id}', `channels/${spare.id as number}`), 200);
    expectStatus(await asSite('DELETE', 'channels/{id}', `channels/${spare.id as number}`), 200);
    await asSite('GET', 'channels/{id}', `channels/${spare.id as number}`);
    await asSite('POST', 'channels', 'channels', { name: 'x', currencies: 'USD', account_mode: 'testing', nickname: 'y' });
    await asSite('POST', 'channels', 'channels', {});
    await asSite('POST', 'channels', 'channels', { name: 'Main', currencies: 'GBP' }, { 'idempotency-key': 'channel-1' });

    const channel = expectStatus(await asSite('GET', 'channels', 'channels'), 200)[0] as Json;
    const body = bookingBody(channel.id as number, { currencies: 'USD', suppliers: ['GB-1042-ACC'], date_start: '2030-06-01', pax: 2, reference: 'R-1', payment_request_url: true });
    const booking = expectStatus(await asSite('POST', 'bookings', 'bookings', body), 201);
    expect(booking._links.self[0].payment_request).toMatch(/\/pay\//);
    expectStatus(await asSite('POST', 'bookings', 'bookings', bookingBody(channel.id as number, { currencies: 'USD' })), 201);
    expectStatus(await asSite('GET', 'bookings', 'bookings?per_page=1&status=unpaid'), 200);
    expectStatus(await asSite('GET', 'bookings/{id}', `bookings/${booking.id as number}`), 200);
    expectStatus(await asSite('PUT', 'bookings/{id}', `bookings/${booking.id as number}`, { total: 20_000, content: 'Two nights' }), 200);
    await asSite('POST', 'bookings', 'bookings', { ...bookingBody(channel.id as number), currencies: 'GBP' });
    await asSite('POST', 'bookings', 'bookings', {});
    await asSite('GET', 'bookings', 'bookings?per_page=500');
    await asSite('GET', 'bookings/{id}', 'bookings/999999');
    const spareBooking = expectStatus(await asSite('POST', 'bookings', 'bookings', bookingBody(channel.id as number, { currencies: 'USD' })), 201);
    expectStatus(await asSite('DELETE', 'bookings/{id}', `bookings/${spareBooking.id as number}`), 200);

    expectStatus(await asSite('GET', 'suppliers', 'suppliers'), 200);
    expectStatus(await asSite('GET', 'suppliers/{id}', 'suppliers/GB-1042-ACC'), 200);
    await asSite('GET', 'suppliers/{id}', 'suppliers/GB-1-ZZZ');

    // What an integrator meets before anything else.
    await call('GET', `${A}/channels`, siteUrl('channels'));
    await call('GET', `${A}/channels`, siteUrl('channels'), { headers: { authorization: 'Bearer tfat_nothing' } });
    await call('GET', `${A}/channels`, `/no-such-site/site-json/vendor/v2/channels`, { headers: site.headers });
    const malformed = await t.app.inject({ method: 'POST', url: siteUrl('bookings'), headers: { ...site.headers, 'content-type': 'application/json' }, payload: '{"a":' });
    const plain = await t.app.inject({ method: 'POST', url: siteUrl('bookings'), headers: { ...site.headers, 'content-type': 'text/plain' }, payload: 'a' });
    answers.push({ method: 'POST', path: `${A}/bookings`, response: malformed }, { method: 'POST', path: `${A}/bookings`, response: plain });
  });

  it('transactions: vault, purchase with an allocation, decline, authorise, capture, refund, void, and refusals', async () => {
    const channel = await makeChannel(t, site, { name: 'Payments', currencies: 'USD' });
    const target = await makeChannel(t, site, { name: 'Partner', currencies: 'USD' });
    const payment = (type: string, total: number, bookingId: number, extra: Json = {}) => ({
      transaction_types: type, channels: channel.id, currencies: 'USD', total, bookings: [{ id: bookingId, currencies: 'USD', total }], ...extra,
    });
    const newBooking = async (total: number) => expectStatus(await api(t, site, 'POST', 'bookings', bookingBody(channel.id as number, { currencies: 'USD', total })), 201).id as number;

    const card = expectStatus(await asSite('POST', 'transactions', 'transactions', { transaction_types: 'vault', channels: channel.id, currencies: 'USD', total: 0, token: 'tok_mastercard' }), 201);
    const first = await newBooking(10_000);
    const allocation = { channels: target.id, currencies: 'USD', total: 1_000, operator: 'flat', title: 'Partner share' };
    const purchase = expectStatus(await asSite('POST', 'transactions', 'transactions', payment('retained_purchase', 10_000, first, { linked_id: card.id, allocations: [allocation], language: 'frFR' }), { 'idempotency-key': 'purchase-1' }), 201);
    expect(purchase.allocations).toHaveLength(1);
    expectStatus(await asSite('POST', 'transactions', 'transactions', payment('retained_purchase', 10_000, first, { linked_id: card.id, allocations: [allocation], language: 'frFR' }), { 'idempotency-key': 'purchase-1' }), 201);
    expectStatus(await asSite('POST', 'transactions', 'transactions', payment('refund', 2_500, first, { linked_id: purchase.id })), 201);
    const declined = expectStatus(await asSite('POST', 'transactions', 'transactions', payment('retained_purchase', 1_051, await newBooking(1_051), { linked_id: card.id })), 201);
    expect(declined.status).toBe('failed');
    const second = await newBooking(8_000);
    const authorised = expectStatus(await asSite('POST', 'transactions', 'transactions', payment('retained_authorize', 8_000, second, { linked_id: card.id })), 201);
    expectStatus(await asSite('POST', 'transactions', 'transactions', payment('capture', 8_000, second, { linked_id: authorised.id })), 201);
    const third = await newBooking(3_000);
    const held = expectStatus(await asSite('POST', 'transactions', 'transactions', payment('retained_authorize', 3_000, third, { linked_id: card.id })), 201);
    expectStatus(await asSite('POST', 'transactions', 'transactions', payment('void', 3_000, third, { linked_id: held.id })), 201);
    expectStatus(await asSite('POST', 'transactions', 'transactions', payment('purchase', 2_000, await newBooking(2_000), { token: 'tok_visa_3ds_challenge', attempt_3ds: true })), 201);

    expectStatus(await asSite('GET', 'transactions', 'transactions?per_page=2'), 200);
    expectStatus(await asSite('GET', 'transactions/{id}', `transactions/${purchase.id as number}`), 200);
    await asSite('GET', 'transactions/{id}', 'transactions/999999');
    await asSite('POST', 'transactions', 'transactions', { transaction_types: 'sale', channels: channel.id, currencies: 'USD', total: 100 });
    await asSite('POST', 'transactions', 'transactions', { transaction_types: 'retained_purchase', channels: channel.id, currencies: 'USD', total: 100 });
    await asSite('POST', 'transactions', 'transactions', payment('retained_purchase', 10, first, { linked_id: card.id }), { 'idempotency-key': 'purchase-1' });
    // A refusal the route gave is stored for its key too, and replayed as such.
    const refusal = payment('retained_purchase', 100, first, { linked_id: purchase.id });
    expect((await asSite('POST', 'transactions', 'transactions', refusal, { 'idempotency-key': 'refused-1' })).statusCode).toBe(400);
    expect((await asSite('POST', 'transactions', 'transactions', refusal, { 'idempotency-key': 'refused-1' })).headers['idempotent-replayed']).toBe('true');
  });

  it('match the schema documented for their status, field by field, and send only documented headers of the API', () => {
    const apiHeaders = ['x-site-total', 'x-site-totalpages', 'link', 'location', 'idempotent-replayed', 'retry-after'];
    expect(answers.length).toBeGreaterThan(50);
    const mismatches: unknown[] = [];
    const statuses = new Set<number>();
    for (const { method, path, response } of answers) {
      const label = `${method} ${path} ${response.statusCode}`;
      statuses.add(response.statusCode);
      const documented = operation(method, path).responses[String(response.statusCode)] as Json | undefined;
      if (!documented) {
        mismatches.push({ answer: label, error: 'status not documented', body: response.body.slice(0, 200) });
        continue;
      }
      // The headers of the API's own conventions it sent are documented on that status.
      const sent = apiHeaders.filter((name) => response.headers[name] !== undefined);
      const named = Object.keys(documented.headers ?? {}).map((name) => name.toLowerCase());
      if (sent.some((name) => !named.includes(name))) mismatches.push({ answer: label, error: 'headers not documented', sent, named });
      const validate = ajv.compile(closed(documented.content['application/json'].schema) as object);
      if (!validate(response.json())) mismatches.push({ answer: label, errors: validate.errors, body: response.body.slice(0, 300) });
    }
    expect(mismatches).toEqual([]);
    expect([...statuses].sort()).toEqual([200, 201, 400, 401, 404, 409, 415]);
  });
});
