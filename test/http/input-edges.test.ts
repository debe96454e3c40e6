import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { createBooking, post, purchaseBody, shopContext, type Shop } from '../payments/support.js';

// Inputs a contract audit (session 29) found answered wrongly: a 500 for the year 0000, a schema's
// 400 for a long path id, a Link header that could not be followed, and error codes that depended
// on what else was wrong in the request.
let t: TestContext;
let shop: Shop;
beforeAll(async () => {
  ({ t, shop } = await shopContext());
});
afterAll(async () => t.close());

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: Record<string, unknown>) =>
  t.app.inject({ method, url: path.startsWith('/') ? path : `${shop.base}/${path}`, headers: shop.site.headers, ...(payload ? { payload } : {}) });

describe('the year 0000, which PostgreSQL dates do not have', () => {
  it.each([
    ['bookings?date_before=0000-01-01', 'date_before'],
    ['bookings?date_after=0000-01-01', 'date_after'],
    ['transactions?statement_date_after=0000-01-01', 'statement_date_after'],
    ['transactions?statement_date_before=0000-01-01T10:00:00Z', 'statement_date_before'],
  ])('GET %s is a 400 on the filter, not a 500', async (path, param) => {
    const response = await call('GET', path);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ code: 'rest_invalid_param', message: expect.any(String), data: { status: 400, params: { [param]: 'must be 0001-01-01 or later' } } });
  });

  it('an allocation statement_date of year 0000 is a 400 on allocations, and nothing is charged', async () => {
    const target = (await call('POST', 'channels', { name: 'Year zero', currencies: 'USD' })).json().id as number;
    const booking = await createBooking(t, shop, { total: 1000 });
    const response = await post(t, shop, purchaseBody(shop, booking, 1000, { allocations: [{ channels: target, total: 100, statement_date: '0000-01-01' }] }));
    expect(response.statusCode).toBe(400);
    expect(response.json().data.params).toEqual({ allocations: 'Allocation 0: statement_date must be a date, Y-m-d.' });
    expect((await t.db.query('SELECT 1 FROM transaction_bookings WHERE booking_id = $1', [booking])).length).toBe(0);
  });
});

describe('path ids', () => {
  const longId = '9'.repeat(70);
  it.each([`bookings/${longId}`, `channels/${longId}`, `transactions/${longId}`, `suppliers/${longId}`])('GET %s (70 digits) is 404 like any unknown id', async (path) => {
    const response = await call('GET', path);
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('rest_post_invalid_id');
  });

  it('DELETE api-tokens/<70 digits> is 404 like any unknown id', async () => {
    const response = await call('DELETE', `/${shop.site.path}/api-tokens/${longId}`);
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('rest_post_invalid_id');
  });
});

describe('the Link header of a page asked for as page[]', () => {
  it.each(['page[]=2', 'page%5B0%5D=2'])('%s: the links name the page once and can be followed', async (page) => {
    for (let index = 0; index < 3; index++) await createBooking(t, shop, { total: 100 + index });
    const response = await call('GET', `bookings?per_page=1&${page}`);
    expect(response.statusCode).toBe(200);
    const links = Object.fromEntries([...String(response.headers.link).matchAll(/<([^>]+)>; rel="(\w+)"/g)].map((match) => [match[2], new URL(match[1]!)]));
    expect(links.next!.searchParams.getAll('page')).toEqual(['3']);
    expect(links.prev!.searchParams.getAll('page')).toEqual(['1']);
    expect([...links.next!.searchParams.keys()].filter((name) => name.startsWith('page['))).toEqual([]);
    expect((await call('GET', `${links.next!.pathname}${links.next!.search}`)).statusCode).toBe(200);
  });
});

describe('errors of requests wrong in more than one way', () => {
  it('missing fields beside an invalid one: every field named, rest_invalid_param (the missing ones "is required")', async () => {
    const response = await call('POST', 'bookings', { firstname: 'A', total: -1 });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('rest_invalid_param');
    expect(response.json().data.params).toMatchObject({ surname: 'is required', email: 'is required', total: expect.any(String) });
  });

  it('PUT with an invalid end date and a start date: only the end date is named', async () => {
    const booking = await createBooking(t, shop, { total: 500 });
    const response = await call('PUT', `bookings/${booking}`, { date: '2030-02-30', date_start: '2030-03-01' });
    expect(response.statusCode).toBe(400);
    expect(response.json().data.params).toEqual({ date: 'names a day that does not exist (2030-02 has 28 days)' });
  });
});

const lists = ['channels', 'bookings', 'suppliers', 'transactions'] as const;
const list = (name: string, query: string) => call('GET', `${name}?${query}`);

// `offset` and `search`, which WordPress REST clients send, were ignored as unknown names: a client
// paging with `offset` got page 1 forever, one searching got the whole list (docs/resources.md "Lists").
describe('offset and search on the lists', () => {
  it.each(lists)('%s: offset is refused, pointing to page and per_page', async (name) => {
    const reply = await list(name, 'per_page=10&offset=10');
    expect(reply.statusCode).toBe(400);
    expect(reply.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { offset: expect.stringMatching(/page and per_page/) } } });
  });

  it.each(lists)('%s: search is refused, pointing to the list\'s filters', async (name) => {
    const reply = await list(name, 'search=ada');
    expect(reply.statusCode).toBe(400);
    expect(reply.json().data.params.search).toMatch(/filter/);
    // An empty search box searches for nothing, as in WordPress: the whole list.
    expect((await list(name, 'search=')).statusCode).toBe(200);
  });

  it('the API reference shows both parameters on the four lists', async () => {
    const document = (await t.app.inject({ url: '/openapi.json' })).json();
    for (const name of lists) {
      const parameters = document.paths[`/{path}/site-json/vendor/v2/${name}`].get.parameters.map((parameter: { name: string; description?: string }) => [parameter.name, parameter.description]);
      const described = Object.fromEntries(parameters);
      // They named the list as the thing not supported ("this list is not supported: page with ...").
      expect(described.offset, name).toBe('Refused with 400: offset is not supported: page with page and per_page (offset N is page N / per_page + 1), or follow the Link header.');
      expect(described.search, name).toMatch(/^Refused with 400 unless empty: search is not supported: filter with /);
    }
  });
});
