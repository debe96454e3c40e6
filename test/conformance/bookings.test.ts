import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import type { SiteFixture } from '../support/fixtures.js';
import { api, bookingBody, expectError, expectFields, expectStatus, gmtDateTime, makeBooking, makeChannel, newSite, seedSuppliers, type Json } from './support.js';

let t: TestContext;
let site: SiteFixture;
let channel: Json;
beforeAll(async () => {
  t = await createTestContext();
  site = await newSite(t);
  channel = await makeChannel(t, site, { currencies: 'GBP' });
  await seedSuppliers(t, [
    { id: 'GB-1042-ACC', name: 'Hotel One', url: 'https://hotel.example', country: 'GB', category: 'ACC' },
    { id: 'FR-7-AIR', name: 'Air Sept', url: 'https://air.example', country: 'FR', category: 'AIR' },
  ]);
});
afterAll(async () => t?.close());

function expectBooking(booking: Json) {
  expectFields(booking, {
    id: 'integer',
    uuid: 'string',
    trust_id: 'string',
    internal_id: 'integer',
    author: 'string',
    author_id: 'integer',
    authorname: 'string',
    status: 'string',
    title: 'string',
    content: 'string',
    firstname: 'string',
    surname: 'string',
    email: 'string',
    date: 'string',
    date_start: ['string', 'null'],
    pax: ['integer', 'string', 'null'],
    reference: ['string', 'null'],
    total: 'integer',
    total_unpaid: 'integer',
    currencies: 'string',
    country: ['string', 'null'],
    countries: 'string',
    transaction_ids: 'array',
    channels: 'integer',
    language: 'string',
    suppliers: 'array',
    created: 'string',
    modified: 'string',
    _links: 'object',
  });
  expect(['authorized', 'completed', 'locked', 'paid', 'partial-payment', 'unpaid', 'draft']).toContain(booking.status);
  expect(booking.created).toMatch(gmtDateTime);
  expect(booking.modified).toMatch(gmtDateTime);
  expect(Array.isArray(booking._links.self)).toBe(true);
  expect(typeof booking._links.self[0].href).toBe('string');
  expect(Array.isArray(booking._links.collection)).toBe(true);
  expect(typeof booking._links.collection[0].href).toBe('string');
}

describe('booking resource', () => {
  it('POST: 201, every field, defaults, trust_id, title, total_unpaid, status unpaid, _links', async () => {
    const response = await api(t, site, 'POST', 'bookings', bookingBody(channel.id, { content: 'Two weeks', date_start: '2030-06-16', pax: 2, reference: 'REF-1', suppliers: ['GB-1042-ACC'] }));
    const booking = expectStatus(response, 201);
    expectBooking(booking);
    expect(booking.trust_id).toBe(`${site.siteId}-${booking.id}`);
    expect(booking.title).toContain(booking.trust_id);
    expect(booking.title).toContain('Lovelace');
    expect(booking.title).toContain('ada@example.com');
    expect(booking.status).toBe('unpaid');
    expect(booking.total).toBe(10000);
    expect(booking.total_unpaid).toBe(10000);
    expect(booking.language).toBe('enGB');
    expect(booking.author_id).toBe(site.userId);
    expect(booking.author).toBe(site.username);
    expect(booking.transaction_ids).toEqual([]);
    expect(booking.suppliers).toEqual(['GB-1042-ACC']);
    expect(Number(booking.pax)).toBe(2);
    expect(booking).toMatchObject({ firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2030-06-30', date_start: '2030-06-16', reference: 'REF-1', currencies: 'GBP', countries: 'GB', channels: channel.id, content: 'Two weeks' });
    expect(booking._links.self[0].href).toContain(`/bookings/${booking.id}`);
    expect(booking._links.collection[0].href).toMatch(/\/bookings$/);
    expect(booking._links.self[0].payment_request).toBeUndefined();
    const read = expectStatus(await api(t, site, 'GET', `bookings/${booking.id}`), 200);
    expectBooking(read);
    expect(read.trust_id).toBe(booking.trust_id);
    expect(Number(read.pax)).toBe(2);
  });

  it('payment_request_url=true adds _links.self[0].payment_request (POST and PUT)', async () => {
    const booking = await makeBooking(t, site, channel.id, { payment_request_url: true });
    expect(typeof booking._links.self[0].payment_request).toBe('string');
    expect(() => new URL(booking._links.self[0].payment_request)).not.toThrow();
    const plain = await makeBooking(t, site, channel.id);
    const updated = expectStatus(await api(t, site, 'PUT', `bookings/${plain.id}`, { payment_request_url: true }), 200);
    expect(typeof updated._links.self[0].payment_request).toBe('string');
  });

  it('missing required fields: 400 rest_missing_callback_param listing every one', async () => {
    const body = expectError(await api(t, site, 'POST', 'bookings', {}), 400, 'rest_missing_callback_param');
    const params = JSON.stringify(body.data.params);
    for (const field of ['firstname', 'surname', 'email', 'date', 'total', 'currencies', 'countries', 'channels']) expect(params).toContain(field);
    const one = expectError(await api(t, site, 'POST', 'bookings', { ...bookingBody(channel.id), surname: undefined }), 400, 'rest_missing_callback_param');
    expect(JSON.stringify(one.data.params)).toContain('surname');
  });

  it('currency different from the channel currency: 400 rest_invalid_param with data.params.channels', async () => {
    const body = expectError(await api(t, site, 'POST', 'bookings', bookingBody(channel.id, { currencies: 'USD' })), 400, 'rest_invalid_param');
    expect(typeof body.data.params.channels).toBe('string');
    expect(body.message).toContain('channels');
  });

  it.each([
    ['countries', 'XX'],
    ['countries', 'gb'],
    ['email', 'not-an-email'],
    // What no mail server takes (session 29): dots out of place, a local part over 64, a label over 63.
    ['email', '.a..b.@example.com'],
    ['email', `${'a'.repeat(65)}@example.com`],
    ['email', `a@${'b'.repeat(64)}.com`],
    ['date', '2030-13-01'],
    ['date', '30/06/2030'],
    ['date_start', '2030-02-30'],
    ['total', 10.5],
    ['total', -1],
    ['total', '100'],
    ['currencies', 'ZZZ'],
    ['language', 'enUS'],
    ['pax', -1],
    ['suppliers', ['XX-1-ZZZ']],
    ['channels', 987654],
  ])('invalid %s=%j: 400 rest_invalid_param naming it', async (field, value) => {
    const body = expectError(await api(t, site, 'POST', 'bookings', bookingBody(channel.id, { [field]: value })), 400, 'rest_invalid_param');
    expect(Object.keys(body.data.params ?? {})).toContain(field);
  });

  it('RO fields on input are ignored', async () => {
    const booking = await makeBooking(t, site, channel.id, { id: 5, trust_id: 'x', status: 'paid', total_unpaid: 0, title: 'mine', author_id: 999, transaction_ids: [1], created: '2000-01-01 00:00:00', country: 'FR' });
    expect(booking.status).toBe('unpaid');
    expect(booking.total_unpaid).toBe(10000);
    expect(booking.trust_id).toBe(`${site.siteId}-${booking.id}`);
    expect(booking.title).not.toBe('mine');
    expect(booking.author_id).toBe(site.userId);
    expect(booking.transaction_ids).toEqual([]);
    expect(booking.created).not.toBe('2000-01-01 00:00:00');
  });

  it('PUT: any field, none required; total_unpaid follows total; currency rule still applies', async () => {
    const booking = await makeBooking(t, site, channel.id);
    const updated = expectStatus(await api(t, site, 'PUT', `bookings/${booking.id}`, { total: 12000, surname: 'Byron', pax: 3 }), 200);
    expect(updated).toMatchObject({ total: 12000, total_unpaid: 12000, surname: 'Byron', firstname: 'Ada' });
    expect(Number(updated.pax)).toBe(3);
    expect(updated.title).toContain('Byron');
    expectStatus(await api(t, site, 'PUT', `bookings/${booking.id}`, {}), 200);
    const bad = expectError(await api(t, site, 'PUT', `bookings/${booking.id}`, { currencies: 'USD' }), 400, 'rest_invalid_param');
    expect(bad.data.params).toBeDefined();
    expectError(await api(t, site, 'PUT', 'bookings/987654', { total: 1 }), 404, 'rest_post_invalid_id');
  });

  it('DELETE: {deleted:true}, then 404 rest_post_invalid_id', async () => {
    const booking = await makeBooking(t, site, channel.id);
    expect(expectStatus(await api(t, site, 'DELETE', `bookings/${booking.id}`), 200).deleted).toBe(true);
    expectError(await api(t, site, 'GET', `bookings/${booking.id}`), 404, 'rest_post_invalid_id');
  });

  it('a member may create bookings; a read_only user may not', async () => {
    const { addUser } = await import('../support/fixtures.js');
    const member = await addUser(t.db, site.siteId, { role: 'member' });
    expectStatus(await api(t, { path: site.path, headers: member.headers }, 'POST', 'bookings', bookingBody(channel.id)), 201);
    const reader = await addUser(t.db, site.siteId, { role: 'member', readOnly: true });
    expectError(await api(t, { path: site.path, headers: reader.headers }, 'POST', 'bookings', bookingBody(channel.id)), 403, 'rest_forbidden');
  });
});

describe('booking list filters', () => {
  let listSite: SiteFixture;
  let gbp: Json;
  let usd: Json;
  let bookings: Json[];
  beforeAll(async () => {
    listSite = await newSite(t);
    gbp = await makeChannel(t, listSite, { currencies: 'GBP' });
    usd = await makeChannel(t, listSite, { currencies: 'USD', name: 'US' });
    bookings = [
      await makeBooking(t, listSite, gbp.id, { surname: 'Smith', email: 's@example.com', reference: 'R1', date: '2030-01-10', countries: 'GB' }),
      await makeBooking(t, listSite, gbp.id, { surname: 'Jones', email: 'j@example.com', reference: 'R2', date: '2030-05-10', countries: 'FR' }),
      await makeBooking(t, listSite, usd.id, { surname: 'Smith', email: 'x@example.com', reference: 'R3', date: '2030-09-10', countries: 'US', currencies: 'USD' }),
    ];
  });
  const ids = (list: Json[]) => list.map((booking) => booking.id);
  const list = async (query: string) => expectStatus(await api(t, listSite, 'GET', `bookings${query}`), 200) as Json[];

  it('default list, pagination headers, include, order', async () => {
    const response = await api(t, listSite, 'GET', 'bookings');
    expect(ids(expectStatus(response, 200) as Json[])).toEqual(ids(bookings));
    expect(response.headers['x-site-total']).toBe('3');
    expect(response.headers['x-site-totalpages']).toBe('1');
    expect(ids(await list(`?include=${bookings[2]!.id},${bookings[0]!.id}`))).toEqual([bookings[0]!.id, bookings[2]!.id]);
    expect(ids(await list('?order=desc'))).toEqual(ids(bookings).reverse());
    expect(ids(await list('?per_page=2&page=2'))).toEqual([bookings[2]!.id]);
  });

  it('status, channels, countries, surname, email, reference', async () => {
    expect(ids(await list('?status=unpaid'))).toEqual(ids(bookings));
    expect(ids(await list('?status=paid'))).toEqual([]);
    expect(ids(await list('?status=paid,unpaid'))).toEqual(ids(bookings));
    expectError(await api(t, listSite, 'GET', 'bookings?status=bogus'), 400, 'rest_invalid_param');
    expect(ids(await list(`?channels=${usd.id}`))).toEqual([bookings[2]!.id]);
    expect(ids(await list('?countries=FR'))).toEqual([bookings[1]!.id]);
    expect(ids(await list('?surname=Smith'))).toEqual([bookings[0]!.id, bookings[2]!.id]);
    expect(ids(await list('?surname=smit'))).toEqual([]);
    expect(ids(await list('?email=j@example.com'))).toEqual([bookings[1]!.id]);
    expect(ids(await list('?reference=R3'))).toEqual([bookings[2]!.id]);
  });

  it('date_before / date_after (end date), before / after (publication)', async () => {
    expect(ids(await list('?date_before=2030-05-01'))).toEqual([bookings[0]!.id]);
    expect(ids(await list('?date_after=2030-05-01'))).toEqual([bookings[1]!.id, bookings[2]!.id]);
    expect(ids(await list('?date_after=2030-01-01T00:00:00Z&date_before=2030-06-01T00:00:00Z'))).toEqual([bookings[0]!.id, bookings[1]!.id]);
    expect(ids(await list('?after=2000-01-01T00:00:00Z'))).toEqual(ids(bookings));
    expect(ids(await list('?before=2000-01-01T00:00:00Z'))).toEqual([]);
    expect(ids(await list(`?after=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`))).toEqual([]);
    expectError(await api(t, listSite, 'GET', 'bookings?after=yesterday'), 400, 'rest_invalid_param');
  });

  it('compares before / after with `created` as shown, to the second: polling "after the last one seen" never returns it again', async () => {
    const last = bookings[2]!;
    const created = String(last.created);
    // Rows keep microseconds, the API shows whole seconds: this one was created half a second into its second.
    await t.db.query("UPDATE bookings SET created_at = date_trunc('second', created_at) + interval '0.5 second' WHERE id = $1", [last.id]);
    expect(ids(await list(`?after=${encodeURIComponent(created)}`))).not.toContain(last.id);
    expect(ids(await list(`?before=${encodeURIComponent(created)}`))).not.toContain(last.id);
    const secondBefore = new Date(Date.parse(`${created.replace(' ', 'T')}Z`) - 1000).toISOString();
    const secondAfter = new Date(Date.parse(`${created.replace(' ', 'T')}Z`) + 1000).toISOString();
    expect(ids(await list(`?after=${encodeURIComponent(secondBefore)}`))).toContain(last.id);
    expect(ids(await list(`?before=${encodeURIComponent(secondAfter)}`))).toContain(last.id);
    // A fraction in the filter: the shown second 05:24:38 is after 05:24:37.5 and before 05:24:38.5.
    const half = (offsetMs: number) => new Date(Date.parse(`${created.replace(' ', 'T')}Z`) + offsetMs).toISOString();
    expect(ids(await list(`?after=${encodeURIComponent(half(-500))}`))).toContain(last.id);
    expect(ids(await list(`?before=${encodeURIComponent(half(500))}`))).toContain(last.id);
    expect(ids(await list(`?after=${encodeURIComponent(half(500))}`))).not.toContain(last.id);
  });
});
