/**
 * Black-box conformance helpers: everything goes through HTTP (app.inject). Only site and user
 * set-up (which has no HTTP endpoint: operators use the CLI) and supplier reference data
 * (imported by the operator) touch the database directly.
 */
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { upsertSuppliers, type SupplierInput } from '../../src/cli/commands/suppliers.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type Site = Pick<SiteFixture, 'path' | 'headers'> & Partial<SiteFixture>;
export type Json = Record<string, any>;

export const apiPrefix = (path: string) => `/${path}/site-json/vendor/v2`;
export const authPrefix = (path: string) => `/${path}/site-json/jwt-auth/v1`;

export async function send(t: TestContext, method: Method, url: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return t.app.inject({ method, url, headers, ...(options.body === undefined ? {} : { payload: JSON.stringify(options.body) }) });
}

/** A REST call under {api_prefix} as the site's user. */
export async function api(t: TestContext, site: Site, method: Method, rest: string, body?: unknown, headers: Record<string, string> = {}) {
  return send(t, method, `${apiPrefix(site.path)}/${rest}`, { headers: { ...site.headers, ...headers }, body });
}

/** The spec's error shape: {code, message, data: {status}} with data.status equal to the HTTP status. */
export function expectError(response: LightMyRequestResponse, status: number, code?: string | string[]): Json {
  expect(response.statusCode, response.body).toBe(status);
  const body = response.json() as Json;
  expect(typeof body.code).toBe('string');
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  expect(typeof body.data).toBe('object');
  expect(body.data.status).toBe(status);
  if (typeof code === 'string') expect(body.code).toBe(code);
  if (Array.isArray(code)) expect(code).toContain(body.code);
  return body;
}

export function expectStatus(response: LightMyRequestResponse, status: number): Json {
  expect(response.statusCode, response.body).toBe(status);
  return response.json() as Json;
}

export const gmtDateTime = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
export const ymd = /^\d{4}-\d{2}-\d{2}$/;

export async function newSite(t: TestContext, options: Parameters<typeof createSite>[1] = {}): Promise<SiteFixture> {
  return createSite(t.db, options);
}

export async function makeChannel(t: TestContext, site: Site, body: Json = {}): Promise<Json> {
  return expectStatus(await api(t, site, 'POST', 'channels', { name: 'Main channel', currencies: 'GBP', ...body }), 201);
}

export const bookingBody = (channelId: number, extra: Json = {}): Json => ({
  firstname: 'Ada',
  surname: 'Lovelace',
  email: 'ada@example.com',
  date: '2030-06-30',
  total: 10000,
  currencies: 'GBP',
  countries: 'GB',
  channels: channelId,
  ...extra,
});

export async function makeBooking(t: TestContext, site: Site, channelId: number, extra: Json = {}): Promise<Json> {
  return expectStatus(await api(t, site, 'POST', 'bookings', bookingBody(channelId, extra)), 201);
}

/** A vault transaction (total 0) on a test channel with the sandbox token. */
export async function vault(t: TestContext, site: Site, channel: Json, token = 'tok_visa'): Promise<Json> {
  return expectStatus(await api(t, site, 'POST', 'transactions', { transaction_types: 'vault', channels: channel.id, currencies: channel.currencies, total: 0, token }), 201);
}

/** Where the payments conformance files start: a new site with a GBP test channel and a card vaulted on it. */
export async function payingSite(t: TestContext): Promise<{ site: SiteFixture; channel: Json; card: Json }> {
  const site = await newSite(t);
  const channel = await makeChannel(t, site, { currencies: 'GBP' });
  return { site, channel, card: await vault(t, site, channel) };
}

export async function retained(t: TestContext, site: Site, channel: Json, booking: Json, total: number, extra: Json = {}): Promise<LightMyRequestResponse> {
  return api(t, site, 'POST', 'transactions', {
    transaction_types: 'retained_purchase',
    channels: channel.id,
    currencies: channel.currencies,
    total,
    bookings: [{ id: booking.id, currencies: channel.currencies, total }],
    ...extra,
  });
}

export async function seedSuppliers(t: TestContext, suppliers: SupplierInput[]): Promise<void> {
  await upsertSuppliers(t.db, suppliers);
}

/** Type tags as a black-box judge checks them. */
export function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Every key present with one of the allowed types. */
export function expectFields(object: Json, fields: Record<string, string | string[]>): void {
  for (const [key, allowed] of Object.entries(fields)) {
    expect(Object.keys(object), `missing field ${key}`).toContain(key);
    const types = Array.isArray(allowed) ? allowed : [allowed];
    expect(types, `field ${key} = ${JSON.stringify(object[key])}`).toContain(typeOf(object[key]));
  }
}
