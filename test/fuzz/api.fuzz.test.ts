/// <reference types="vite/client" />
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { addUser, createSite } from '../support/fixtures.js';
import { snapshotTables } from '../routes/channels/support.js';
import { fuzzEndpoints, type FuzzEndpoint, type FuzzFixture, type FuzzModule } from './endpoints.js';

/**
 * Sends malformed bodies and query strings to every endpoint of the table and checks, for each
 * request: no 5xx; every 4xx has the error shape `{code, message, data: {status}}` with the HTTP
 * status; a rejected request leaves every row of the watched tables as it was; nothing pollutes
 * Object.prototype.
 */

const extensions = import.meta.glob<FuzzModule>('./endpoints/*.ts', { eager: true });
const modules = Object.values(extensions);
// FUZZ_ONLY=<substring> narrows the run to matching endpoint names while working on one part.
const only = process.env.FUZZ_ONLY;
const endpoints: FuzzEndpoint[] = [...fuzzEndpoints, ...modules.flatMap((module) => module.endpoints ?? [])].filter((endpoint) => !only || endpoint.name.includes(only));
const tables = [...snapshotTables, ...modules.flatMap((module) => module.tables ?? [])];
/** Requests per endpoint; with 20+ endpoints that is well over 500 bodies and query strings. */
const runsPerEndpoint = 80;

let t: TestContext;
let fixture: FuzzFixture;

beforeAll(async () => {
  // Rate limits would turn most requests into 429s before they reach validation.
  t = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '10000000', LOGIN_RATE_LIMIT_PER_MINUTE: '10000000' } });
  const site = await createSite(t.db, { role: 'member_admin' });
  const sacrificial = await addUser(t.db, site.siteId, { role: 'member_admin' });
  const channel = await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Fuzz', currencies: 'GBP' } });
  const channelId = channel.json().id as number;
  const supplierId = 'GB-1-ACC';
  await t.db.query(`INSERT INTO suppliers (id, name, url, country, category) VALUES ($1, 'Fuzz Inn', 'https://inn.example', 'GB', 'ACC')`, [supplierId]);
  const booking = await t.app.inject({
    method: 'POST',
    url: `/${site.path}/site-json/vendor/v2/bookings`,
    headers: site.headers,
    payload: { firstname: 'F', surname: 'S', email: 'f@example.com', date: '2027-01-01', total: 1000, currencies: 'GBP', countries: 'GB', channels: channelId },
  });
  const bookingId = booking.json().id as number;
  // A linked transaction id keeps DELETE refused, so the fixtures outlive the fuzzing.
  await t.db.query(`UPDATE bookings SET transaction_ids = '{1}' WHERE id = $1`, [bookingId]);
  const token = await t.db.one<{ id: number }>('SELECT id FROM api_tokens WHERE user_id = $1', [sacrificial.userId]);
  fixture = { site, sacrificial, channelId, bookingId, supplierId, apiTokenId: token.id, extra: {} };
  for (const module of modules) Object.assign(fixture.extra, await module.prepare?.(t, fixture));
});
afterAll(async () => t?.close());

// ---------------------------------------------------------------------------------------------
// Generators.

const overlong = 'x'.repeat(5_000);
const junkScalars = [
  null, true, false, 0, -1, 1.5, -0.01, 1e308, -1e308, 2 ** 53 + 2, 2 ** 63, 1_000_000_000_001, '', ' ', '0', '-1', '1e3', 'NaN', 'null', 'true', '[]', '{}',
  '\u0000', '😀', 'Ω≈ç√∫', '\u202e\u0631', "'; DROP TABLE bookings; --", '../../etc/passwd', '%00', '2026-02-30', '9999-99-99', '2026-01-01T25:61:00Z',
  'GB', 'gbp', 'XXX', 'test', 'live', '__proto__', 'constructor', 'a@b', overlong,
];

const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...junkScalars) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true }) },
  { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) },
);

const pollutionBodies = [
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"name":"x","currencies":"GBP","__proto__":{"isAdmin":true}}',
  '{"__proto__":[],"total":1}',
];

const invalidJsonTexts = ['{', '{"a":', 'nul', '[1,2', '{"total": 01}', "{'a':1}", '\u0000', '{"a":1}}', '{"a":NaN}', '"\\ud800"', '{"a":1e999999}', ' '];

type Body = { text: string; contentType: string } | null;

/** Values close to a valid one (same kind, just wrong), which reach deeper than random junk. */
function nearMisses(valid: unknown): unknown[] {
  if (typeof valid === 'number') return [-1, 0, 1.5, valid + 0.5, -valid, 2 ** 31, 2 ** 53, 1_000_000_000_001, Number.MAX_SAFE_INTEGER, String(valid), null];
  if (typeof valid === 'boolean') return ['true', 1, 0, null, 'false'];
  if (Array.isArray(valid)) return [[], [null], [''], ['GB-9999999999-ACC'], [overlong], valid.map(String).map((item) => item.toLowerCase()), 'x', Array(60).fill(valid[0])];
  if (typeof valid === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(valid)) return ['2026-02-30', '2026-13-01', '0000-01-01', '2026-1-1', '2026-02-29', '1899-12-31', '9999-12-31', `${valid}T00:00:00Z`, ''];
  if (typeof valid === 'string') return ['', ' ', valid.toLowerCase(), valid.toUpperCase(), ` ${valid} `, `${valid}\u0000`, overlong, `${valid},`, `,${valid}`, `${valid}@`, 'a@b.c,,d@e.f'];
  return [null];
}

function bodyFor(endpoint: FuzzEndpoint): fc.Arbitrary<Body> {
  const valid = endpoint.validBody?.(fixture) ?? {};
  const fields = [...Object.keys(valid), 'id', 'status', 'extra_field'];
  const valueFor = (key: string) =>
    fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...nearMisses(valid[key])) }, { weight: 3, arbitrary: junkValue }, { weight: 1, arbitrary: fc.constant(undefined) });
  const mutated = fc.constantFrom(...fields).chain((key) => fc.tuple(fc.constant(key), valueFor(key))).map(([key, value]) => {
    const body: Record<string, unknown> = { ...valid };
    if (value === undefined) delete body[key];
    else body[key] = value;
    return JSON.stringify(body);
  });
  const json = fc.oneof(
    { weight: 12, arbitrary: mutated },
    { weight: 2, arbitrary: fc.dictionary(fc.constantFrom(...fields), junkValue, { maxKeys: 6 }).map((body) => JSON.stringify(body)) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.constantFrom(...pollutionBodies) },
    { weight: 2, arbitrary: fc.constantFrom(...invalidJsonTexts) },
    { weight: 1, arbitrary: fc.string({ maxLength: 50 }) },
  );
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant('application/json') },
    { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'multipart/form-data; boundary=x', '') },
  );
  const withBody = fc.record({ text: json, contentType });
  // Bodies go to every method; GET and DELETE mostly without one.
  return endpoint.method === 'POST' || endpoint.method === 'PUT' ? withBody : fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: withBody });
}

const listNames = ['include', 'exclude', 'page', 'per_page', 'order', 'orderby'];

function queryFor(endpoint: FuzzEndpoint): fc.Arbitrary<string> {
  const names = [...new Set([...(endpoint.queryParams ?? []), ...listNames, '__proto__', 'constructor', 'include[]', 'a[b]'])];
  const value = fc.oneof(
    fc.constantFrom(...junkScalars.map((scalar) => (typeof scalar === 'string' ? scalar : JSON.stringify(scalar)))),
    fc.string({ maxLength: 20 }),
    fc.integer().map(String),
    fc.double().map(String),
    fc.constantFrom('1,2,3', ',', ',,', '1,,2', 'asc', 'desc', 'id', 'paid,unpaid', '2026-01-01', '2026-01-01T00:00:00+0500', 'GB,FR', 'ACC', '101', '100000001'),
  );
  const encoded = fc.array(fc.tuple(fc.constantFrom(...names), value), { maxLength: 6 }).map((pairs) => pairs.map(([name, item]) => `${encodeURIComponent(name)}=${encodeURIComponent(item)}`).join('&'));
  const raw = fc.constantFrom('%zz', '&&&', '=&=', 'page=1&page=2', 'per_page=%ff', 'include=%00', 'a=%E0%A4%A', `name=${'%41'.repeat(500)}`, 'order[]=asc');
  return fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 5, arbitrary: encoded }, { weight: 1, arbitrary: raw });
}

function idFor(endpoint: FuzzEndpoint): fc.Arbitrary<string> {
  const junkIds = fc.constantFrom('0', '-1', 'abc', '1e3', '1.5', '99999999999999999999', '%00', '%20', encodeURIComponent('😀'), encodeURIComponent("1' OR 1=1"), 'GB-1-ACC', '9007199254740993');
  const real = endpoint.id ? fc.constant(endpoint.id(fixture)) : junkIds;
  return fc.oneof({ weight: 4, arbitrary: real }, { weight: 1, arbitrary: junkIds }, { weight: 1, arbitrary: fc.nat().map(String) });
}

function headersFor(endpoint: FuzzEndpoint): fc.Arbitrary<Record<string, string>> {
  const own: Record<string, string> = endpoint.auth === 'admin' ? fixture.site.headers : endpoint.auth === 'sacrificial' ? fixture.sacrificial.headers : {};
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(own) },
    { weight: 1, arbitrary: fc.constantFrom<Record<string, string>>({}, { authorization: 'Bearer tfat_invalid' }, { authorization: 'Bearer a.b.c' }, { authorization: `Bearer ${'x'.repeat(5000)}` }, { authorization: 'Basic Zm9vOmJhcg==' }) },
  );
}

const requestArb = (endpoint: FuzzEndpoint) =>
  fc.record({ endpoint: fc.constant(endpoint), body: bodyFor(endpoint), query: queryFor(endpoint), id: idFor(endpoint), headers: headersFor(endpoint) });

// ---------------------------------------------------------------------------------------------

async function snapshot(): Promise<string> {
  const parts: string[] = [];
  for (const table of tables) {
    // API tokens' last_used_at legitimately changes on any use (login failures are counted in
    // login_failures, which is not snapshotted).
    const rows = await t.db.query<{ row: string }>(`SELECT (to_jsonb(x) - 'last_used_at')::text AS row FROM ${table} x`);
    parts.push(`${table}: ${rows.map((row) => row.row).sort().join('\n')}`);
  }
  return parts.join('\n');
}

const statuses = new Map<number, number>();

/** One request; throws (failing the property) on a 5xx, a malformed error or a changed database. */
async function exercise({ endpoint, body, query, id, headers }: { endpoint: FuzzEndpoint; body: Body; query: string; id: string; headers: Record<string, string> }, state: { baseline: string }): Promise<void> {
  const path = endpoint.path.replace('{path}', fixture.site.path).replace('{id}', id);
  const url = query ? `${path}?${query}` : path;
  const response = await t.app.inject({
    method: endpoint.method,
    url,
    headers: { ...headers, ...(body && body.contentType ? { 'content-type': body.contentType } : {}) },
    ...(body ? { payload: body.text } : {}),
  });
  statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
  const where = `${endpoint.method} ${url} body=${body?.text.slice(0, 300)} -> ${response.statusCode} ${response.body.slice(0, 300)}`;
  expect(response.statusCode, where).toBeLessThan(500);
  expect(({} as Record<string, unknown>).polluted, 'Object.prototype polluted').toBeUndefined();
  expect(({} as Record<string, unknown>).isAdmin, 'Object.prototype polluted').toBeUndefined();
  if (response.statusCode >= 400) {
    expect(response.json(), where).toEqual({ code: expect.any(String), message: expect.any(String), data: expect.objectContaining({ status: response.statusCode }) });
    expect(await snapshot(), `rejected request changed the database: ${where}`).toBe(state.baseline);
  } else {
    state.baseline = await snapshot();
  }
}

describe('API fuzz: malformed bodies and query strings', () => {
  for (const endpoint of endpoints) {
    it(`${endpoint.name} (${endpoint.method} ${endpoint.path}): ${runsPerEndpoint} requests, no 5xx, error shape, nothing changed`, async () => {
      const state = { baseline: await snapshot() };
      await fc.assert(fc.asyncProperty(requestArb(endpoint), (request) => exercise(request, state)), { numRuns: runsPerEndpoint });
    }, 300_000);
  }

  it('sent well over 500 requests, most of them rejected', () => {
    const total = [...statuses.values()].reduce((sum, count) => sum + count, 0);
    const rejected = [...statuses].filter(([status]) => status >= 400).reduce((sum, [, count]) => sum + count, 0);
    expect(total).toBeGreaterThanOrEqual(Math.min(500, runsPerEndpoint * endpoints.length));
    expect(rejected).toBeGreaterThan(total / 2);
  });
});
