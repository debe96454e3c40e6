import type { TestContext } from '../support/context.js';
import type { SiteFixture } from '../support/fixtures.js';

/**
 * The endpoint table of the API fuzz test. Another part adds its endpoints either by adding rows
 * here or, without touching this file, with a module `test/fuzz/endpoints/<name>.ts` exporting
 * `endpoints: FuzzEndpoint[]` and optionally `prepare(t, fixture)` (extra fixture values, e.g. a
 * vault transaction id, returned into `fixture.extra`) and `tables` (more tables whose rows a
 * rejected request must leave unchanged).
 */

export interface FuzzFixture {
  site: SiteFixture;
  /** A second member_admin of the site whose tokens destructive endpoints may delete. */
  sacrificial: { headers: { authorization: string }; username: string; password: string };
  /** A channel that has bookings (so DELETE is refused). */
  channelId: number;
  /** A booking with a linked transaction id (so DELETE is refused). */
  bookingId: number;
  supplierId: string;
  apiTokenId: number;
  extra: Record<string, unknown>;
}

export type FuzzAuth = 'admin' | 'sacrificial' | 'none';

export interface FuzzEndpoint {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path with `{id}` where an item id goes (fuzzed too); `{path}` is the site path. */
  path: string;
  /** The real id put in `{id}` on some runs. */
  id?: (fixture: FuzzFixture) => string;
  auth: FuzzAuth;
  /** A valid body, which the fuzzer mutates one field at a time. */
  validBody?: (fixture: FuzzFixture) => Record<string, unknown>;
  /** Query parameter names the endpoint reads. */
  queryParams?: readonly string[];
}

const listParams = ['include', 'exclude', 'page', 'per_page', 'order', 'orderby'];
const api = '/{path}/site-json/vendor/v2';
const jwt = '/{path}/site-json/jwt-auth/v1';

export const fuzzEndpoints: FuzzEndpoint[] = [
  // Channels.
  { name: 'list channels', method: 'GET', path: `${api}/channels`, auth: 'admin', queryParams: [...listParams, 'account_mode', 'account_type', 'currencies', 'external_id', 'name', 'statement_period'] },
  { name: 'get channel', method: 'GET', path: `${api}/channels/{id}`, id: (f) => String(f.channelId), auth: 'admin' },
  {
    name: 'create channel',
    method: 'POST',
    path: `${api}/channels`,
    auth: 'admin',
    validBody: () => ({ name: 'Fuzz', currencies: 'GBP', account_mode: 'test', language: 'enGB', primary_mail: 'a@example.com', mail_failures: false, receipt_label: 'R', external_id: 'e', chargeback_mail: 'c@example.com' }),
  },
  { name: 'update channel', method: 'PUT', path: `${api}/channels/{id}`, id: (f) => String(f.channelId), auth: 'admin', validBody: () => ({ name: 'Renamed', language: 'frFR', mail_bcc_transactional_mails: true }) },
  { name: 'delete channel', method: 'DELETE', path: `${api}/channels/{id}`, id: (f) => String(f.channelId), auth: 'admin' },
  // Bookings.
  {
    name: 'list bookings',
    method: 'GET',
    path: `${api}/bookings`,
    auth: 'admin',
    queryParams: [...listParams, 'before', 'after', 'status', 'channels', 'countries', 'surname', 'email', 'date_before', 'date_after', 'reference'],
  },
  { name: 'get booking', method: 'GET', path: `${api}/bookings/{id}`, id: (f) => String(f.bookingId), auth: 'admin' },
  {
    name: 'create booking',
    method: 'POST',
    path: `${api}/bookings`,
    auth: 'admin',
    queryParams: ['payment_request_url'],
    validBody: (f) => ({
      firstname: 'F', surname: 'S', email: 'f@example.com', date: '2027-01-01', date_start: '2026-12-20', total: 1000, currencies: 'GBP', countries: 'GB', channels: f.channelId,
      pax: 2, reference: 'R', language: 'enGB', suppliers: [f.supplierId], payment_request_url: true, content: 'c',
    }),
  },
  {
    name: 'update booking',
    method: 'PUT',
    path: `${api}/bookings/{id}`,
    id: (f) => String(f.bookingId),
    auth: 'admin',
    queryParams: ['payment_request_url'],
    validBody: (f) => ({ total: 5000, date: '2027-02-01', surname: 'T', channels: f.channelId, currencies: 'GBP', pax: 3 }),
  },
  { name: 'delete booking', method: 'DELETE', path: `${api}/bookings/{id}`, id: (f) => String(f.bookingId), auth: 'admin' },
  // Suppliers.
  { name: 'list suppliers', method: 'GET', path: `${api}/suppliers`, auth: 'admin', queryParams: ['include', 'page', 'per_page', 'order', 'orderby', 'name', 'url', 'countries', 'categories'] },
  { name: 'get supplier', method: 'GET', path: `${api}/suppliers/{id}`, id: (f) => f.supplierId, auth: 'admin' },
  // API tokens.
  { name: 'list api tokens', method: 'GET', path: '/{path}/api-tokens', auth: 'admin' },
  { name: 'create api token', method: 'POST', path: '/{path}/api-tokens', auth: 'admin', validBody: () => ({ name: 'fuzz', expires_at: '2030-01-01' }) },
  { name: 'delete api token', method: 'DELETE', path: '/{path}/api-tokens/{id}', id: (f) => String(f.apiTokenId), auth: 'sacrificial' },
  { name: 'delete all api tokens', method: 'DELETE', path: '/{path}/api-tokens', auth: 'sacrificial' },
  // Token endpoints.
  { name: 'log in', method: 'POST', path: `${jwt}/token`, auth: 'none', validBody: (f) => ({ username: f.sacrificial.username, password: f.sacrificial.password }) },
  { name: 'card vault token', method: 'POST', path: `${jwt}/token/cardvaultuser`, auth: 'none', validBody: (f) => ({ username: f.sacrificial.username, password: f.sacrificial.password }) },
  { name: 'refresh', method: 'POST', path: `${jwt}/token/refresh`, auth: 'sacrificial' },
  { name: 'revoke refresh', method: 'DELETE', path: `${jwt}/token/refresh`, auth: 'sacrificial' },
];

export interface FuzzModule {
  endpoints?: FuzzEndpoint[];
  prepare?: (t: TestContext, fixture: FuzzFixture) => Promise<Record<string, unknown>>;
  tables?: string[];
}
