import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../support/context.js';
import { addUser, createSite, type SiteFixture } from '../../support/fixtures.js';
import { api, call, snapshot } from '../channels/support.js';
import { upsertSuppliers, validateSupplier, type SupplierInput } from '../../../src/cli/commands/suppliers.js';

let t: TestContext;
let site: SiteFixture;
let other: SiteFixture;
let readOnly: Pick<SiteFixture, 'path' | 'headers'>;

const suppliers = [
  { id: 'GB-1042-ACC', name: 'Grand Hotel Edinburgh', url: 'https://grand.example/edinburgh', country: 'GB', category: 'ACC' },
  { id: 'FR-7-AIR', name: 'Air Provence', url: 'https://air-provence.example', country: 'FR', category: 'AIR' },
  { id: 'GB-88-TRN', name: 'Highland Coaches', url: '', country: 'GB', category: 'TRN' },
  { id: 'IT-3-ACC', name: 'Hotel 100% Roma', url: 'https://roma.example', country: 'IT', category: 'ACC' },
];

beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db, { role: 'member' });
  other = await createSite(t.db);
  readOnly = { path: site.path, headers: (await addUser(t.db, site.siteId, { role: 'member', readOnly: true })).headers };
  for (const supplier of suppliers) {
    await t.db.query('INSERT INTO suppliers (id, name, url, country, category) VALUES ($1, $2, $3, $4, $5)', [supplier.id, supplier.name, supplier.url, supplier.country, supplier.category]);
  }
});
afterAll(async () => t.close());

const ids = async (query: string) => {
  const response = await call(t, site, 'GET', `suppliers?${query}`);
  expect(response.statusCode, query).toBe(200);
  return (response.json() as { id: string }[]).map((item) => item.id);
};

describe('suppliers: happy paths', () => {
  it('finds an imported name however its accents were encoded (kept and searched in NFC)', async () => {
    // A decomposed é (e + U+0301), as some exports write it, is the composed one.
    const imported = validateSupplier({ id: 'FR-9-ACC', name: 'Hôtel Cafe\u0301', url: 'https://cafe\u0301.example', country: 'FR', category: 'ACC' }) as SupplierInput;
    await upsertSuppliers(t.db, [imported]);
    expect((await call(t, site, 'GET', 'suppliers/FR-9-ACC')).json()).toMatchObject({ name: 'Hôtel Café', url: 'https://café.example' });
    for (const query of ['name=café', `name=${encodeURIComponent('cafe\u0301')}`, 'url=café']) expect(await ids(query), query).toEqual(['FR-9-ACC']);
    await t.db.query("DELETE FROM suppliers WHERE id = 'FR-9-ACC'");
  });

  it('reads one supplier with every field', async () => {
    const response = await call(t, readOnly, 'GET', 'suppliers/GB-1042-ACC');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(suppliers[0]);
  });

  it('lists the directory for every site, with filters, order and pagination', async () => {
    expect(await ids('')).toEqual(['FR-7-AIR', 'GB-1042-ACC', 'GB-88-TRN', 'IT-3-ACC']);
    const fromOtherSite = await call(t, other, 'GET', 'suppliers');
    expect(fromOtherSite.json()).toHaveLength(4);
    expect(await ids('order=desc')).toEqual(['IT-3-ACC', 'GB-88-TRN', 'GB-1042-ACC', 'FR-7-AIR']);
    expect(await ids('orderby=name')).toEqual(['FR-7-AIR', 'GB-1042-ACC', 'GB-88-TRN', 'IT-3-ACC']);
    expect(await ids('include=IT-3-ACC,FR-7-AIR')).toEqual(['FR-7-AIR', 'IT-3-ACC']);
    // `exclude`, as on the channels, bookings and transactions lists: it was ignored here, and the whole directory came back.
    expect(await ids('exclude=IT-3-ACC,FR-7-AIR')).toEqual(['GB-1042-ACC', 'GB-88-TRN']);
    expect(await ids('exclude=IT-3-ACC&exclude=FR-7-AIR&include=IT-3-ACC,GB-88-TRN')).toEqual(['GB-88-TRN']);
    expect(await ids('name=hotel')).toEqual(['GB-1042-ACC', 'IT-3-ACC']);
    expect(await ids('name=Hotel*')).toEqual(['IT-3-ACC']);
    expect(await ids('name=100%25')).toEqual(['IT-3-ACC']);
    expect(await ids('name=_')).toEqual([]);
    expect(await ids('url=grand.example')).toEqual(['GB-1042-ACC']);
    expect(await ids('countries=GB')).toEqual(['GB-1042-ACC', 'GB-88-TRN']);
    expect(await ids('countries=GB,IT&categories=ACC')).toEqual(['GB-1042-ACC', 'IT-3-ACC']);
    expect(await ids('categories=AIR,TRN')).toEqual(['FR-7-AIR', 'GB-88-TRN']);
    const page = await call(t, site, 'GET', 'suppliers?per_page=3&page=2');
    expect(page.json().map((item: { id: string }) => item.id)).toEqual(['IT-3-ACC']);
    expect(page.headers['x-site-total']).toBe('4');
    expect(page.headers['x-site-totalpages']).toBe('2');
    expect(page.headers.link).toContain('rel="prev"');
    expect(page.headers.link).not.toContain('rel="next"');
  });
});

describe('suppliers: errors and security', () => {
  it('answers 404 rest_post_invalid_id for unknown or malformed ids', async () => {
    for (const id of ['GB-1-OTH', 'nope', '1', "GB-1'--"]) {
      const response = await call(t, site, 'GET', `suppliers/${encodeURIComponent(id)}`);
      expect(response.statusCode, id).toBe(404);
      expect(response.json()).toEqual({ code: 'rest_post_invalid_id', message: expect.any(String), data: { status: 404 } });
    }
  });

  it('refuses malformed list parameters', async () => {
    for (const query of ['categories=XYZ', 'countries=gbr', 'include=1,2', 'exclude=gb-1042-acc', 'per_page=101', 'orderby=imported_at']) {
      const response = await call(t, site, 'GET', `suppliers?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.json().code).toBe('rest_invalid_param');
    }
  });

  it('is read-only and needs a token', async () => {
    const before = await snapshot(t);
    expect((await t.app.inject({ method: 'GET', url: api(site, 'suppliers') })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: api(site, 'suppliers/GB-1042-ACC') })).statusCode).toBe(401);
    for (const method of ['POST', 'PUT', 'DELETE'] as const) {
      const response = await call(t, site, method, method === 'POST' ? 'suppliers' : 'suppliers/GB-1042-ACC', method === 'DELETE' ? undefined : { name: 'x' });
      expect(response.statusCode, method).toBe(404);
      expect(response.json().code).toBe('rest_no_route');
    }
    // Another site's token on this site's path: the site is not theirs.
    const cross = await t.app.inject({ method: 'GET', url: api(site, 'suppliers'), headers: other.headers });
    expect(cross.statusCode).toBe(404);
    expect(cross.json().code).toBe('rest_post_invalid_id');
    expect(await snapshot(t)).toBe(before);
  });
});
