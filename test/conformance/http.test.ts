import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import type { SiteFixture } from '../support/fixtures.js';
import { api, apiPrefix, bookingBody, expectError, expectStatus, makeBooking, makeChannel, newSite, send, type Json } from './support.js';

let t: TestContext;
let site: SiteFixture;
let channel: Json;
beforeAll(async () => {
  t = await createTestContext();
  site = await newSite(t);
  channel = await makeChannel(t, site);
  for (let index = 0; index < 5; index++) await makeBooking(t, site, channel.id, { reference: `P${index}` });
});
afterAll(async () => t?.close());

const collections = ['channels', 'bookings', 'suppliers', 'transactions'];

describe('pagination', () => {
  it.each(collections)('%s: per_page 1..100; 0, 101 and page 0 are 400 rest_invalid_param', async (collection) => {
    expectStatus(await api(t, site, 'GET', `${collection}?per_page=1`), 200);
    expectStatus(await api(t, site, 'GET', `${collection}?per_page=100`), 200);
    for (const query of ['per_page=101', 'per_page=0', 'page=0', 'per_page=abc', 'page=-1']) {
      const body = expectError(await api(t, site, 'GET', `${collection}?${query}`), 400, 'rest_invalid_param');
      expect(body.data.params).toBeDefined();
    }
  });

  it('X-Site-Total, X-Site-TotalPages and RFC 8288 Link (next/prev) headers', async () => {
    const first = await api(t, site, 'GET', 'bookings?per_page=2');
    expect((first.json() as Json[]).length).toBe(2);
    expect(first.headers['x-site-total']).toBe('5');
    expect(first.headers['x-site-totalpages']).toBe('3');
    const link = String(first.headers.link);
    expect(link).toMatch(/<[^>]+page=2[^>]*>;\s*rel="next"/);
    expect(link).not.toMatch(/rel="prev"/);
    const middle = String((await api(t, site, 'GET', 'bookings?per_page=2&page=2')).headers.link);
    expect(middle).toMatch(/<[^>]+page=1[^>]*>;\s*rel="prev"/);
    expect(middle).toMatch(/<[^>]+page=3[^>]*>;\s*rel="next"/);
    const next = /<([^>]+)>;\s*rel="next"/.exec(middle)![1]!;
    const url = new URL(next);
    expect(url.pathname).toBe(`${apiPrefix(site.path)}/bookings`);
    expect(url.searchParams.get('per_page')).toBe('2');
    const filtered = String((await api(t, site, 'GET', 'bookings?per_page=2&order=desc&status=unpaid')).headers.link);
    const nextFiltered = new URL(/<([^>]+)>;\s*rel="next"/.exec(filtered)![1]!);
    expect(nextFiltered.searchParams.get('order')).toBe('desc');
    expect(nextFiltered.searchParams.get('status')).toBe('unpaid');
    expect(nextFiltered.searchParams.get('page')).toBe('2');
    const last = await api(t, site, 'GET', 'bookings?per_page=2&page=3');
    expect((last.json() as Json[]).length).toBe(1);
    expect(String(last.headers.link)).not.toMatch(/rel="next"/);
  });

  it('default per_page is 100', async () => {
    const response = await api(t, site, 'GET', 'bookings');
    expect((response.json() as Json[]).length).toBe(5);
    expect(response.headers['x-site-totalpages']).toBe('1');
  });
});

describe('status codes and error shape', () => {
  it('201 on every create, 200 on read, update, delete', async () => {
    const created = await api(t, site, 'POST', 'channels', { name: 'C', currencies: 'GBP' });
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    expect((await api(t, site, 'GET', `channels/${id}`)).statusCode).toBe(200);
    expect((await api(t, site, 'PUT', `channels/${id}`, { name: 'D' })).statusCode).toBe(200);
    expect((await api(t, site, 'DELETE', `channels/${id}`)).statusCode).toBe(200);
    const token = await send(t, 'POST', `/${site.path}/api-tokens`, { headers: site.headers, body: { name: 'n' } });
    expect(token.statusCode).toBe(201);
  });

  it('unknown route: 404 rest_no_route (with and without auth)', async () => {
    expectError(await api(t, site, 'GET', 'nothing-here'), 404, 'rest_no_route');
    expectError(await send(t, 'GET', '/no/such/path'), 404, 'rest_no_route');
    expectError(await send(t, 'GET', `/${site.path}/site-json/vendor/v3/channels`, { headers: site.headers }), 404, 'rest_no_route');
  });

  it('unsupported method on a known path is an error in the spec shape', async () => {
    const response = await api(t, site, 'PATCH' as never, 'channels');
    expect([404, 405]).toContain(response.statusCode);
    expectError(response, response.statusCode);
  });

  it('401: no token rest_not_logged_in; bad token jwt_auth_invalid_token or rest_not_logged_in', async () => {
    expectError(await send(t, 'GET', `${apiPrefix(site.path)}/channels`), 401, 'rest_not_logged_in');
    for (const authorization of ['Bearer tfat_nope', 'Bearer a.b.c', 'Bearer garbage', 'Basic dXNlcjpwYXNz']) {
      expectError(await send(t, 'GET', `${apiPrefix(site.path)}/channels`, { headers: { authorization } }), 401, ['jwt_auth_invalid_token', 'rest_not_logged_in']);
    }
  });

  it('403 rest_forbidden: read_only user on a write', async () => {
    const { addUser } = await import('../support/fixtures.js');
    const reader = await addUser(t.db, site.siteId, { role: 'member_admin', readOnly: true });
    expectError(await api(t, { path: site.path, headers: reader.headers }, 'POST', 'bookings', {}), 403, 'rest_forbidden');
  });

  it('404 rest_post_invalid_id: unknown or malformed item ids', async () => {
    for (const collection of ['channels', 'bookings', 'transactions']) {
      expectError(await api(t, site, 'GET', `${collection}/999999`), 404, 'rest_post_invalid_id');
      expectError(await api(t, site, 'GET', `${collection}/abc`), 404, ['rest_post_invalid_id', 'rest_no_route']);
      expectError(await api(t, site, 'GET', `${collection}/99999999999999999999999`), 404, ['rest_post_invalid_id', 'rest_no_route']);
    }
  });

  it('malformed JSON: 400 in the error shape, nothing created', async () => {
    const before = (await api(t, site, 'GET', 'channels')).headers['x-site-total'];
    const response = await t.app.inject({ method: 'POST', url: `${apiPrefix(site.path)}/channels`, headers: { ...site.headers, 'content-type': 'application/json' }, payload: '{"name": "x",' });
    expectError(response, 400);
    expect((await api(t, site, 'GET', 'channels')).headers['x-site-total']).toBe(before);
  });

  it('a JSON body that is not an object: 400', async () => {
    const response = await t.app.inject({ method: 'POST', url: `${apiPrefix(site.path)}/channels`, headers: { ...site.headers, 'content-type': 'application/json' }, payload: '[1,2]' });
    expectError(response, 400);
  });

  it('wrong content type: 4xx in the error shape', async () => {
    const response = await t.app.inject({ method: 'POST', url: `${apiPrefix(site.path)}/channels`, headers: { ...site.headers, 'content-type': 'text/plain' }, payload: 'name=x' });
    expect([400, 415]).toContain(response.statusCode);
    expectError(response, response.statusCode);
  });

  it('body too large: 413 in the error shape, saying how large a body may be', async () => {
    const big = JSON.stringify({ name: 'x', currencies: 'GBP', content: 'a'.repeat(5 * 1024 * 1024) });
    const response = await t.app.inject({ method: 'POST', url: `${apiPrefix(site.path)}/bookings`, headers: { ...site.headers, 'content-type': 'application/json' }, payload: big });
    const body = expectError(response, 413);
    expect(body.message).toBe('The request body is too large: send at most 262144 bytes (256 KB).');
    expect(body.data.max_bytes).toBe(262144);
  });

  it('unknown body fields (not RO fields of the resource) are refused or ignored, never stored', async () => {
    const response = await api(t, site, 'POST', 'channels', { name: 'U', currencies: 'GBP', favourite_colour: 'blue' });
    if (response.statusCode === 201) expect(response.json().favourite_colour).toBeUndefined();
    else expectError(response, 400, 'rest_invalid_param');
  });

  it('every JSON error carries a request-independent shape (no stack, no SQL)', async () => {
    const responses = [
      await api(t, site, 'POST', 'bookings', { total: 'x' }),
      await api(t, site, 'GET', 'bookings?orderby=;DROP'),
      await api(t, site, 'GET', 'channels/0'),
    ];
    for (const response of responses) {
      const body = expectError(response, response.statusCode);
      expect(JSON.stringify(body)).not.toMatch(/stack|SELECT|node_modules|at .*\.ts/);
    }
  });
});

describe('Location on 201 (RFC 9110: a 201 names what it created)', () => {
  /** Creates with a key and replays it: both answers name one URL, which reads the new object. */
  async function locationOf(collection: string, body: Json): Promise<{ location: string; created: Json; read: Json }> {
    const key = `located-${collection}`;
    const first = await api(t, site, 'POST', collection, body, { 'idempotency-key': key });
    const created = expectStatus(first, 201);
    const replay = await api(t, site, 'POST', collection, body, { 'idempotency-key': key });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers.location).toBe(first.headers.location);
    const location = String(first.headers.location);
    const read = expectStatus(await send(t, 'GET', new URL(location).pathname, { headers: site.headers }), 200);
    return { location, created, read };
  }

  it('POST channels and POST bookings answer the new object\'s URL, as POST transactions does', async () => {
    const newChannel = await locationOf('channels', { name: 'Located', currencies: 'EUR' });
    expect(newChannel.location).toMatch(new RegExp(`^https?://[^/]+${apiPrefix(site.path)}/channels/${newChannel.created.id as number}$`));
    expect(newChannel.read.name).toBe('Located');
    const newBooking = await locationOf('bookings', { ...bookingBody(channel.id as number), reference: 'LOC-1' });
    expect(newBooking.location).toBe(newBooking.created._links.self[0].href);
    expect(newBooking.read.reference).toBe('LOC-1');
    const refused = await api(t, site, 'POST', 'bookings', { ...bookingBody(channel.id as number), currencies: 'USD' });
    expect(refused.statusCode).toBe(400);
    expect(refused.headers.location).toBeUndefined();
  });
});
