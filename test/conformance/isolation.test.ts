import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import type { SiteFixture } from '../support/fixtures.js';
import { api, authPrefix, bookingBody, expectError, expectStatus, makeBooking, makeChannel, newSite, retained, send, vault, type Json } from './support.js';

let t: TestContext;
let a: SiteFixture;
let b: SiteFixture;
let aChannel: Json;
let aBooking: Json;
let aCard: Json;
let aPayment: Json;
let bChannel: Json;
let bBooking: Json;
beforeAll(async () => {
  t = await createTestContext();
  a = await newSite(t);
  b = await newSite(t);
  aChannel = await makeChannel(t, a, { name: 'A channel' });
  aBooking = await makeBooking(t, a, aChannel.id, { total: 5000 });
  aCard = await vault(t, a, aChannel);
  aPayment = expectStatus(await retained(t, a, aChannel, aBooking, 1000, { linked_id: aCard.id }), 201);
  bChannel = await makeChannel(t, b, { name: 'B channel' });
  bBooking = await makeBooking(t, b, bChannel.id, { total: 5000 });
});
afterAll(async () => t?.close());

describe('isolation between two sites', () => {
  it('B lists see none of A\'s objects', async () => {
    for (const [collection, id] of [['channels', aChannel.id], ['bookings', aBooking.id], ['transactions', aPayment.id]] as const) {
      const list = expectStatus(await api(t, b, 'GET', collection), 200) as Json[];
      expect(list.map((item) => item.id)).not.toContain(id);
      const included = expectStatus(await api(t, b, 'GET', `${collection}?include=${id}`), 200) as Json[];
      expect(included).toEqual([]);
    }
  });

  it('A\'s items through B\'s path with B\'s token: 404 rest_post_invalid_id on GET, PUT, DELETE', async () => {
    for (const [collection, id] of [['channels', aChannel.id], ['bookings', aBooking.id], ['transactions', aPayment.id]] as const) {
      expectError(await api(t, b, 'GET', `${collection}/${id}`), 404, 'rest_post_invalid_id');
    }
    expectError(await api(t, b, 'PUT', `channels/${aChannel.id}`, { name: 'stolen' }), 404, 'rest_post_invalid_id');
    expectError(await api(t, b, 'PUT', `bookings/${aBooking.id}`, { surname: 'stolen' }), 404, 'rest_post_invalid_id');
    expectError(await api(t, b, 'DELETE', `channels/${aChannel.id}`), 404, 'rest_post_invalid_id');
    expectError(await api(t, b, 'DELETE', `bookings/${aBooking.id}`), 404, 'rest_post_invalid_id');
    expect(expectStatus(await api(t, a, 'GET', `channels/${aChannel.id}`), 200).name).toBe('A channel');
    expect(expectStatus(await api(t, a, 'GET', `bookings/${aBooking.id}`), 200).surname).toBe('Lovelace');
  });

  it('B\'s token on A\'s path (no membership): 404, never 403 or data', async () => {
    const asB = { path: a.path, headers: b.headers };
    for (const rest of ['channels', `channels/${aChannel.id}`, `bookings/${aBooking.id}`, `transactions/${aPayment.id}`]) {
      expectError(await api(t, asB, 'GET', rest), 404, 'rest_post_invalid_id');
    }
    expectError(await api(t, asB, 'POST', 'bookings', bookingBody(aChannel.id)), 404, 'rest_post_invalid_id');
    // A JWT of B's user behaves the same.
    const login = expectStatus(await send(t, 'POST', `${authPrefix(b.path)}/token`, { body: { username: b.username, password: b.password } }), 200);
    expectError(await api(t, { path: a.path, headers: { authorization: `Bearer ${login.token}` } }, 'GET', `bookings/${aBooking.id}`), 404, 'rest_post_invalid_id');
    expectError(await send(t, 'GET', `/${a.path}/api-tokens`, { headers: b.headers }), 404, 'rest_post_invalid_id');
  });

  it('B cannot book on A\'s channel', async () => {
    const body = expectError(await api(t, b, 'POST', 'bookings', bookingBody(aChannel.id)), 400, 'rest_invalid_param');
    expect(Object.keys(body.data.params)).toContain('channels');
    expectError(await api(t, b, 'PUT', `bookings/${bBooking.id}`, { channels: aChannel.id }), 400, 'rest_invalid_param');
  });

  it('B cannot pay with A\'s card (linked_id or token), nor capture, refund or void A\'s transactions', async () => {
    const byLinked = await retained(t, b, bChannel, bBooking, 1000, { linked_id: aCard.id });
    expect([400, 404]).toContain(byLinked.statusCode);
    expectError(byLinked, byLinked.statusCode);
    const byToken = await retained(t, b, bChannel, bBooking, 1000, { token: aCard.token });
    expect([400, 404]).toContain(byToken.statusCode);
    expectError(byToken, byToken.statusCode);
    const refund = await api(t, b, 'POST', 'transactions', { transaction_types: 'refund', channels: bChannel.id, currencies: 'GBP', total: 100, linked_id: aPayment.id, bookings: [{ id: bBooking.id, currencies: 'GBP', total: 100 }] });
    expect([400, 404]).toContain(refund.statusCode);
    expectError(refund, refund.statusCode);
    const onAChannel = await retained(t, b, aChannel, aBooking, 1000, { linked_id: aCard.id });
    expect([400, 404]).toContain(onAChannel.statusCode);
    expectError(onAChannel, onAChannel.statusCode);
    expect(expectStatus(await api(t, a, 'GET', `transactions/${aPayment.id}`), 200).total_remaining).toBe(1000);
    expect(expectStatus(await api(t, a, 'GET', `bookings/${aBooking.id}`), 200).transaction_ids).toEqual([aPayment.id]);
    expect(expectStatus(await api(t, b, 'GET', `bookings/${bBooking.id}`), 200).transaction_ids).toEqual([]);
  });

  it('B cannot pay A\'s booking from B\'s channel', async () => {
    const bCard = await vault(t, b, bChannel);
    const response = await api(t, b, 'POST', 'transactions', { transaction_types: 'retained_purchase', channels: bChannel.id, currencies: 'GBP', total: 100, linked_id: bCard.id, bookings: [{ id: aBooking.id, currencies: 'GBP', total: 100 }] });
    expectError(response, 400, 'rest_invalid_param');
  });

  it('API tokens: B cannot delete A\'s tokens', async () => {
    const list = expectStatus(await send(t, 'GET', `/${a.path}/api-tokens`, { headers: a.headers }), 200) as Json[];
    const response = await send(t, 'DELETE', `/${b.path}/api-tokens/${list[0]!.id}`, { headers: b.headers });
    expectError(response, 404);
    expectStatus(await send(t, 'GET', `/${a.path}/api-tokens`, { headers: a.headers }), 200);
  });

  it('the same user in two sites sees each site\'s objects only through that site\'s path', async () => {
    await t.db.query('INSERT INTO memberships (site_id, user_id, role, read_only) VALUES ($1, $2, $3, false)', [b.siteId, a.userId, 'member_admin']);
    const login = expectStatus(await send(t, 'POST', `${authPrefix(a.path)}/token`, { body: { username: a.username, password: a.password } }), 200);
    expect(login.site_count).toBe(2);
    const headers = { authorization: `Bearer ${login.token}` };
    expectStatus(await api(t, { path: b.path, headers }, 'GET', `bookings/${bBooking.id}`), 200);
    expectError(await api(t, { path: b.path, headers }, 'GET', `bookings/${aBooking.id}`), 404, 'rest_post_invalid_id');
    expectError(await api(t, { path: a.path, headers }, 'GET', `bookings/${bBooking.id}`), 404, 'rest_post_invalid_id');
    // A's API token stays bound to site A even though the user is now a member of B.
    expectError(await api(t, { path: b.path, headers: a.headers }, 'GET', 'channels'), 404, 'rest_post_invalid_id');
  });
});
