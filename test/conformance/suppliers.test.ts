import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import type { SiteFixture } from '../support/fixtures.js';
import { api, expectError, expectFields, expectStatus, newSite, seedSuppliers, type Json } from './support.js';

let t: TestContext;
let site: SiteFixture;
beforeAll(async () => {
  t = await createTestContext();
  site = await newSite(t, { role: 'member' });
  await seedSuppliers(t, [
    { id: 'GB-1042-ACC', name: 'Grand Hotel', url: 'https://grand.example', country: 'GB', category: 'ACC' },
    { id: 'FR-7-AIR', name: 'Air Sept', url: 'https://air.example', country: 'FR', category: 'AIR' },
    { id: 'GB-9-TRN', name: 'Rail Link', url: 'https://rail.example', country: 'GB', category: 'TRN' },
  ]);
});
afterAll(async () => t?.close());

const ids = (list: Json[]) => list.map((supplier) => supplier.id);
const list = async (query: string) => expectStatus(await api(t, site, 'GET', `suppliers${query}`), 200) as Json[];

describe('suppliers', () => {
  it('list: every field as a string, pagination headers', async () => {
    const response = await api(t, site, 'GET', 'suppliers');
    const body = expectStatus(response, 200) as Json[];
    expect(ids(body)).toEqual(['FR-7-AIR', 'GB-1042-ACC', 'GB-9-TRN']);
    for (const supplier of body) {
      expectFields(supplier, { id: 'string', name: 'string', url: 'string', country: 'string', category: 'string' });
      expect(supplier.id).toMatch(/^[A-Z]{2}-\d+-[A-Z]{3}$/);
    }
    expect(response.headers['x-site-total']).toBe('3');
    expect(response.headers['x-site-totalpages']).toBe('1');
  });

  it('item and 404', async () => {
    const supplier = expectStatus(await api(t, site, 'GET', 'suppliers/GB-1042-ACC'), 200);
    expect(supplier).toEqual({ id: 'GB-1042-ACC', name: 'Grand Hotel', url: 'https://grand.example', country: 'GB', category: 'ACC' });
    expectError(await api(t, site, 'GET', 'suppliers/GB-1-ZZZ'), 404, 'rest_post_invalid_id');
  });

  it('filters: include, name wildcard, url, countries, categories, order, paging', async () => {
    expect(ids(await list('?include=GB-9-TRN,FR-7-AIR'))).toEqual(['FR-7-AIR', 'GB-9-TRN']);
    expect(ids(await list('?name=Grand*'))).toEqual(['GB-1042-ACC']);
    expect(ids(await list('?url=https://air.example'))).toEqual(['FR-7-AIR']);
    expect(ids(await list('?countries=GB'))).toEqual(['GB-1042-ACC', 'GB-9-TRN']);
    expect(ids(await list('?categories=AIR,TRN'))).toEqual(['FR-7-AIR', 'GB-9-TRN']);
    expect(ids(await list('?order=desc'))).toEqual(['GB-9-TRN', 'GB-1042-ACC', 'FR-7-AIR']);
    expect(ids(await list('?orderby=name'))).toEqual(['FR-7-AIR', 'GB-1042-ACC', 'GB-9-TRN']);
    expect(ids(await list('?per_page=2&page=2'))).toEqual(['GB-9-TRN']);
  });

  it('read-only: POST/PUT/DELETE are not routes', async () => {
    for (const method of ['POST', 'PUT', 'DELETE'] as const) {
      const response = await api(t, site, method, method === 'POST' ? 'suppliers' : 'suppliers/GB-1042-ACC', method === 'DELETE' ? undefined : { name: 'x' });
      expect([404, 405]).toContain(response.statusCode);
      expectError(response, response.statusCode);
    }
  });

  it('requires authentication', async () => {
    expectError(await t.app.inject({ method: 'GET', url: `/${site.path}/site-json/vendor/v2/suppliers` }), 401, 'rest_not_logged_in');
  });
});
