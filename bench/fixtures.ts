// The bench tenant: a site, a member_admin user and an API token (inserted like the tests do),
// then a test channel and a vaulted sandbox card made through the API itself.
import { randomBytes } from 'node:crypto';
import type { Db } from '../src/storage/db.js';
import { createSite } from '../test/support/fixtures.js';
import { sendMany } from './load.js';

export interface Tenant {
  siteId: number;
  path: string;
  apiPrefix: string;
  headers: { authorization: string };
  channelId: number;
  currency: string;
}

export interface ApiAnswer {
  status: number;
  text: string;
  json: any;
}

export async function call(baseUrl: string, method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<ApiAnswer> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: keep the text for the error message
  }
  return { status: response.status, text, json };
}

/** Calls the API and insists on a 2xx answer. */
export async function callOk(baseUrl: string, method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<ApiAnswer> {
  const answer = await call(baseUrl, method, path, options);
  if (answer.status < 200 || answer.status > 299) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
  return answer;
}

export async function createTenant(db: Db, baseUrl: string): Promise<Tenant> {
  const site = await createSite(db, { path: 'bench', role: 'member_admin' });
  const apiPrefix = `/${site.path}/site-json/vendor/v2`;
  const currency = 'USD';
  const channel = await callOk(baseUrl, 'POST', `${apiPrefix}/channels`, { headers: site.headers, body: { name: 'Bench channel', currencies: currency } });
  return { siteId: site.siteId, path: site.path, apiPrefix, headers: site.headers, channelId: Number(channel.json.id), currency };
}

/** Vaults the sandbox card `tok_visa` on the bench channel; returns the vault transaction id. */
export async function vaultTestCard(baseUrl: string, tenant: Tenant): Promise<number> {
  const vault = await callOk(baseUrl, 'POST', `${tenant.apiPrefix}/transactions`, {
    headers: tenant.headers,
    body: { transaction_types: 'vault', channels: tenant.channelId, currencies: tenant.currency, total: 0, token: 'tok_visa' },
  });
  if (vault.json.status !== 'complete') throw new Error(`the bench vault transaction is ${vault.json.status}: ${vault.text.slice(0, 500)}`);
  return Number(vault.json.id);
}

/** The body of POST bookings used by the bench (a realistic booking, about 300 bytes). */
export function bookingInput(tenant: Tenant): Record<string, unknown> {
  return {
    firstname: 'Ada',
    surname: 'Lovelace',
    email: 'ada.lovelace@example.com',
    date: '2027-06-30',
    date_start: '2027-06-20',
    pax: 2,
    total: bookingTotalCents,
    currencies: tenant.currency,
    countries: 'GB',
    channels: tenant.channelId,
    reference: 'BENCH-0001',
    language: 'enGB',
    content: 'Two nights in Lisbon, breakfast included.',
  };
}

/** Pays a whole booking with the vaulted card (the total does not end in a forced-decline code). */
export function retainedPurchaseInput(tenant: Tenant, options: { bookingId: number; vaultTransactionId: number }): Record<string, unknown> {
  return {
    transaction_types: 'retained_purchase',
    channels: tenant.channelId,
    currencies: tenant.currency,
    total: bookingTotalCents,
    linked_id: options.vaultTransactionId,
    bookings: [{ id: options.bookingId, currencies: tenant.currency, total: bookingTotalCents }],
  };
}

export const bookingTotalCents = 125_000;

/**
 * One retained purchase through the API with an Idempotency-Key (`<keyPrefix><random>`); its
 * answer is what the ceilings send back. Throws unless it ended `complete`: a sample that did
 * not would make every figure compare the wrong path.
 */
export async function samplePurchase(baseUrl: string, tenant: Tenant, options: { body: string; keyPrefix: string }): Promise<ApiAnswer> {
  const headers = { ...tenant.headers, 'idempotency-key': `${options.keyPrefix}${randomBytes(6).toString('hex')}` };
  const sample = await callOk(baseUrl, 'POST', `${tenant.apiPrefix}/transactions`, { headers, body: JSON.parse(options.body) });
  if (sample.json.status !== 'complete') throw new Error(`the sample retained_purchase is ${sample.json.status}: ${sample.text.slice(0, 500)}`);
  return sample;
}

/** Ids of this site's bookings that nothing has paid yet, oldest first. */
export async function unpaidBookingIds(db: Db, tenant: Tenant): Promise<number[]> {
  const rows = await db.query<{ id: number }>("SELECT id FROM bookings WHERE site_id = $1 AND status = 'unpaid' AND total_paid = 0 AND deleted_at IS NULL ORDER BY id", [tenant.siteId]);
  return rows.map((row) => row.id);
}

/**
 * `count` unpaid bookings of the bench site other than `excludedId` (the GET booking), oldest
 * first; the missing ones are created through the API (POST bookings), `connections` at a time.
 */
export async function freshBookingIds(db: Db, baseUrl: string, tenant: Tenant, options: { count: number; excludedId: number | null; connections: number; onCreate?: (count: number) => void }): Promise<number[]> {
  const unpaid = async () => (await unpaidBookingIds(db, tenant)).filter((id) => id !== options.excludedId);
  let ids = await unpaid();
  const missing = options.count - ids.length;
  if (missing > 0) {
    options.onCreate?.(missing);
    const body = JSON.stringify(bookingInput(tenant));
    await sendMany({ name: 'create bookings', description: '', baseUrl, method: 'POST', path: `${tenant.apiPrefix}/bookings`, headers: tenant.headers, body, requestBytes: 0, responseBytes: 0 }, options.connections, missing);
    ids = await unpaid();
  }
  return ids.slice(0, options.count);
}
