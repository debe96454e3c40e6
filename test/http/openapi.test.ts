import { randomUUID } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closed, documentAjv as ajv } from '../support/openapi.js';
import type { App } from '../../src/app.js';
import { signAuthString } from '../../src/domain/hosted/auth-string.js';
import { createHostedSession } from '../../src/domain/hosted/sessions.js';
import { buildWebBundles } from '../e2e/support.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { addUser, createSite } from '../support/fixtures.js';
import { createBooking, createShop, paymentsContext, purchaseBody, type Shop } from '../payments/support.js';
import { limits } from '../../src/limits.js';

/**
 * The served OpenAPI document against the server itself: every route the server registers is
 * documented, with the credential it really takes, the success statuses it really sends and the
 * error statuses it answers; and real answers match their documented schemas.
 */

type Json = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  operation: Json;
}

/** Routes deliberately left out of the document (`hide: true`), and why. */
const undocumented = new Map([
  ['GET /openapi.json', 'the document itself'],
  ['GET /docs', 'the document rendered as HTML'],
  ['GET /sandbox/3ds/{id}', "the sandbox issuer's challenge page, standing in for a bank's"],
  ['POST /sandbox/3ds/{id}', "the sandbox issuer's challenge page, standing in for a bank's"],
]);

/** Routes whose handlers take no credential: their document must say `security: []`. */
const credentialFree = new Set([
  'GET /healthz',
  'GET /readyz',
  'POST /{path}/site-json/jwt-auth/v1/token',
  'POST /{path}/site-json/jwt-auth/v1/token/cardvaultuser',
  'GET /3ds/return/{uuid}',
  'GET /vault/{version}',
  'GET /vault/{version}/{file}',
  'GET /modal/{version}/{file}',
  'POST /hosted/modal/sessions',
  'GET /hosted/assets/{file}',
  'GET /pay/{token}',
  'GET /hosted/3ds-return',
]);

/** Fastify's `/vault/:version/` is the document's `/vault/{version}/`; trailing slashes are ignored by the router. */
const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/(.)\/$/, '$1');
const keyOf = (method: string, path: string) => `${method.toUpperCase()} ${openApiPath(path)}`;

/**
 * Every method and path the router holds (Fastify has no route list after start-up; its printed
 * tree is the router's own view): `├── /a (GET, HEAD)` lines, children indented four characters.
 */
function registeredRoutes(app: App): string[] {
  const stack: string[] = [];
  const keys: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const start = line.indexOf('/');
    if (start < 0) continue;
    const depth = start / 4;
    const match = /^(\S+)(?: \(([^)]*)\))?$/.exec(line.slice(start).trim());
    if (!match) throw new Error(`unexpected route line: ${line}`);
    stack.length = depth - 1;
    stack.push(match[1]!);
    const path = stack.join('');
    for (const method of (match[2] ?? '').split(', ').filter(Boolean)) if (method !== 'HEAD') keys.push(keyOf(method, path));
  }
  return keys;
}

function operationsOf(document: Json): Operation[] {
  return Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation: operation as Json })),
  );
}

let t: TestContext;
let document: Json;
let operations: Operation[];
let shop: Shop;
let channelSecret: string;
/** Every answer the tests below received, by operation, for the schema check at the end. */
const answers: Array<{ key: string; response: LightMyRequestResponse }> = [];

function find(method: string, path: string): Json {
  const operation = document.paths[path]?.[method.toLowerCase()] as Json | undefined;
  if (!operation) throw new Error(`${method} ${path} is not documented`);
  return operation;
}

async function call(key: string, options: InjectOptions): Promise<LightMyRequestResponse> {
  const response = await t.app.inject(options);
  answers.push({ key, response });
  return response;
}

beforeAll(async () => {
  await buildWebBundles();
  t = await paymentsContext();
  shop = await createShop(t);
  channelSecret = (await t.db.one<{ channel_secret: string }>('SELECT channel_secret FROM channels WHERE id = $1', [shop.channelId])).channel_secret;
  document = (await t.app.inject({ url: '/openapi.json' })).json();
  operations = operationsOf(document);
});
afterAll(async () => t.close());

describe('the OpenAPI document and the registered routes', () => {
  it('documents every route the server registers, and nothing it does not', () => {
    const registered = registeredRoutes(t.app);
    expect(registered.length).toBeGreaterThan(30);
    const documented = operations.map((op) => keyOf(op.method, op.path));
    expect(documented.filter((key) => !registered.includes(key))).toEqual([]);
    expect(registered.filter((key) => !documented.includes(key) && !undocumented.has(key))).toEqual([]);
  });

  it('names every operation with a unique camelCase operationId and a summary, as client generators and linters need', () => {
    const ids = operations.map(({ operation }) => operation.operationId as unknown);
    expect(operations.filter(({ operation }) => typeof operation.operationId !== 'string' || !/^[a-z][A-Za-z0-9]*$/.test(operation.operationId)).map(({ method, path }) => keyOf(method, path))).toEqual([]);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    expect(operations.filter(({ operation }) => typeof operation.summary !== 'string').map(({ method, path }) => keyOf(method, path))).toEqual([]);
    expect(find('GET', '/{path}/site-json/vendor/v2/bookings').operationId).toBe('listBookings');
    expect(find('POST', '/{path}/site-json/vendor/v2/transactions').operationId).toBe('createTransaction');
    expect(document.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
  });

  it('says `security: []` exactly on the routes that take no credential, and names only defined schemes', () => {
    const schemes = Object.keys(document.components.securitySchemes);
    for (const { method, path, operation } of operations) {
      const key = keyOf(method, path);
      if (credentialFree.has(key)) {
        expect(operation.security, key).toEqual([]);
        continue;
      }
      const security = (operation.security ?? document.security) as Array<Record<string, string[]>>;
      expect(security.length, key).toBeGreaterThan(0);
      for (const requirement of security) for (const scheme of Object.keys(requirement)) expect(schemes, key).toContain(scheme);
    }
    expect(find('POST', '/hosted/payments').security).toEqual([{ hostedSession: [] }]);
    expect(find('POST', '/{path}/site-json/vendor/v2/cards').security).toEqual([{ cardVaultUser: [] }, { hostedSession: [] }]);
  });

  it('refuses a request without a credential on every route that documents one', async () => {
    for (const { method, path } of operations) {
      const key = keyOf(method, path);
      if (credentialFree.has(key)) continue;
      // Some routes check the body before the credential: send them a valid one.
      const payload = validBodies[key] ?? (method === 'GET' || method === 'DELETE' ? undefined : {});
      const response = await call(key, { method: method as 'GET', url: sampleUrl(path), ...(payload ? { payload } : {}) });
      expect([401, 403], `${key}: ${response.body}`).toContain(response.statusCode);
    }
  });
});

const sampleCard = { channels: 1, card_number: '4111 1111 1111 1111', expiry_month: 12, expiry_year: 2031, cvv: '123', name: 'Ada Lovelace' };

const validBodies: Record<string, object> = {
  'POST /{path}/site-json/vendor/v2/cards': sampleCard,
  'POST /{path}/api-tokens': { name: 'laptop' },
  'POST /hosted/payments': { card_token: 'tok_visa' },
};

/** A JSON body one byte over the body limit. */
const tooLarge = `{"a":"${'x'.repeat(limits.bodyBytesMax - 7)}"}`;

/** A URL for a documented path, with parameters that name nothing in particular. */
function sampleUrl(path: string, sitePath = shop.site.path): string {
  const values: Record<string, string> = { path: sitePath, id: '999999', token_id: '999999', version: '1.8.0', file: 'app.js', uuid: randomUUID(), token: 'not-a-link' };
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, (_whole, name: string) => values[name] ?? 'x');
}

describe('error statuses', () => {
  it('documents every error status the routes answer: bad credentials, unknown sites and items, roles, read-only users, malformed JSON, other media types, bodies too large', async () => {
    const readOnly = await addUser(t.db, shop.site.siteId, { role: 'member_admin', readOnly: true });
    const member = await addUser(t.db, shop.site.siteId, { role: 'member' });
    // Its own admin: DELETE api-tokens deletes the caller's tokens.
    const admin = await addUser(t.db, shop.site.siteId, { role: 'member_admin' });
    const other = await createSite(t.db);
    const seen: string[] = [];
    const undocumentedAnswers: string[] = [];
    for (const { method, path, operation } of operations) {
      const key = keyOf(method, path);
      const documented = Object.keys(operation.responses);
      const cases: Array<{ label: string; url: string; headers?: Record<string, string>; payload?: string }> = [
        { label: 'no credential', url: sampleUrl(path) },
        { label: 'a bogus credential', url: sampleUrl(path), headers: { authorization: 'Bearer tfat_nothing' } },
        { label: 'malformed JSON', url: sampleUrl(path), headers: { ...admin.headers, 'content-type': 'application/json' }, payload: '{"a":' },
        { label: 'another media type', url: sampleUrl(path), headers: { ...admin.headers, 'content-type': 'text/plain' }, payload: 'a' },
        { label: 'a body over the size limit', url: sampleUrl(path), headers: { ...admin.headers, 'content-type': 'application/json' }, payload: tooLarge },
      ];
      if (path.startsWith('/{path}/')) {
        cases.push(
          { label: 'an unknown site', url: sampleUrl(path, 'no-such-site'), headers: admin.headers },
          { label: "another site's credential", url: sampleUrl(path, other.path), headers: admin.headers },
          { label: 'a read-only member', url: sampleUrl(path), headers: readOnly.headers },
          { label: 'a member (not member_admin)', url: sampleUrl(path), headers: member.headers },
          { label: 'an unknown item', url: sampleUrl(path), headers: admin.headers },
        );
      }
      for (const sample of cases) {
        if (sample.payload !== undefined && method === 'GET') continue;
        const response = await call(key, { method: method as 'GET', url: sample.url, headers: sample.headers ?? {}, ...(sample.payload !== undefined ? { payload: sample.payload } : {}) });
        seen.push(`${response.statusCode}`);
        if (!documented.includes(String(response.statusCode))) undocumentedAnswers.push(`${key} with ${sample.label}: ${response.statusCode} ${response.body.slice(0, 120)}`);
      }
    }
    expect(undocumentedAnswers).toEqual([]);
    // The cases did reach the refusals they are meant to.
    for (const status of ['400', '401', '403', '404', '413', '415']) expect(seen).toContain(status);
  });

  it('documents 413 and 415 on every route that takes a body, and on no route that never reads one', () => {
    for (const { method, path, operation } of operations) {
      const statuses = Object.keys(operation.responses).filter((status) => status === '413' || status === '415');
      expect([keyOf(method, path), statuses]).toEqual([keyOf(method, path), method === 'GET' ? [] : ['413', '415']]);
    }
  });

  it('documents 400 on every route, and answers it there: a NUL in the URL is refused before any route', async () => {
    for (const { method, path, operation } of operations) expect([keyOf(method, path), Object.keys(operation.responses)]).toEqual([keyOf(method, path), expect.arrayContaining(['400'])]);
    for (const url of ['/healthz?zz=%00', '/pay/%00']) {
      const answer = await t.app.inject({ url });
      expect([url, answer.statusCode, answer.json().code]).toEqual([url, 400, 'rest_invalid_param']);
    }
  });

  it('documents 429 wherever the rate limit applies (every route but the probes)', async () => {
    const limited = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '1', LOGIN_RATE_LIMIT_PER_MINUTE: '1' } });
    const undocumentedAnswers: string[] = [];
    try {
      let address = 1;
      for (const { method, path, operation } of operations) {
        const key = keyOf(method, path);
        if (key === 'GET /healthz' || key === 'GET /readyz') continue;
        const remoteAddress = `10.0.${Math.floor(address / 250)}.${(address++ % 250) + 1}`;
        const send = () => limited.app.inject({ method: method as 'GET', url: sampleUrl(path, 'any-site'), remoteAddress });
        await send();
        const over = await send();
        expect(over.statusCode, key).toBe(429);
        if (!Object.keys(operation.responses).includes('429')) undocumentedAnswers.push(key);
      }
    } finally {
      await limited.close();
    }
    expect(undocumentedAnswers).toEqual([]);
  });

  it('documents the error statuses of the site API on transactions and card capture', () => {
    for (const [method, path] of [['POST', '/transactions'], ['GET', '/transactions'], ['GET', '/transactions/{id}'], ['POST', '/cards']] as const) {
      const responses = find(method, `/{path}/site-json/vendor/v2${path}`).responses as Json;
      for (const status of ['400', '401', '403', '404', '409', '429']) {
        expect(responses[status]?.content?.['application/json']?.schema?.properties, `${method} ${path} ${status}`).toHaveProperty('code');
      }
    }
  });
});

describe('success statuses', () => {
  /** The 2xx and 3xx statuses an operation documents. */
  const successes = (operation: Json) => Object.keys(operation.responses).filter((status) => /^[23]/.test(status)).sort();

  it('documents the statuses the hosted pages, their APIs and the 3-D Secure return really send', async () => {
    const sent = new Map<string, Set<string>>();
    const record = async (key: string, options: InjectOptions) => {
      const response = await call(key, options);
      expect(response.statusCode, `${key}: ${response.body.slice(0, 300)}`).toBeLessThan(400);
      if (!sent.has(key)) sent.set(key, new Set());
      sent.get(key)!.add(String(response.statusCode));
      return response;
    };
    const site = shop.site;
    // The vaulting app, opened with a vaulting-app JWT in its query, and its files.
    const vaultToken = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token/cardvaultuser`, payload: { username: site.username, password: site.password } })).json().token as string;
    await record('GET /vault/{version}', { url: `/vault/1.8.0/?auth=${vaultToken}&channels=${shop.channelId}&env=test` });
    await record('GET /vault/{version}/{file}', { url: '/vault/1.8.0/app.js' });
    await record('GET /hosted/assets/{file}', { url: '/hosted/assets/pages.css' });
    await record('GET /hosted/3ds-return', { url: '/hosted/3ds-return' });
    await record('GET /modal/{version}/{file}', { url: '/modal/1.0.0/payment-modal.js' });
    await record('GET /modal/{version}/{file}', { url: '/modal/1.0.0/frame?origin=https%3A%2F%2Fshop.example' });

    // The modal: a session from the integrator's auth string, then a payment with it.
    const total = 2_500;
    const auth = signAuthString({ channels: shop.channelId, currencies: 'USD', total }, channelSecret, new Date());
    const booking = { booking_id: 0, firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-01-01', countries: 'GB' };
    const opened = await record('POST /hosted/modal/sessions', { method: 'POST', url: '/hosted/modal/sessions', payload: { path: site.path, channels: shop.channelId, currencies: 'USD', total, auth, booking, origin: 'https://shop.example' } });
    const session = { authorization: `Bearer ${opened.json().session as string}` };
    await record('POST /{path}/site-json/vendor/v2/cards', {
      method: 'POST', url: `/${site.path}/site-json/vendor/v2/cards`, headers: session,
      payload: { ...sampleCard, channels: shop.channelId },
    });
    await record('POST /hosted/payments', { method: 'POST', url: '/hosted/payments', headers: session, payload: { card_token: 'tok_visa_declined' } });
    await record('GET /hosted/payments/current', { url: '/hosted/payments/current', headers: session });

    // The payment request page and its currency choice.
    const linked = (await t.app.inject({
      method: 'POST', url: `${shop.base}/bookings`, headers: site.headers,
      payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 3_000, currencies: 'USD', countries: 'GB', channels: shop.channelId, payment_request_url: true },
    })).json();
    await record('GET /pay/{token}', { url: new URL(linked._links.self[0].payment_request as string).pathname });
    const pay = await createHostedSession(t.db, { kind: 'pay', siteId: site.siteId, channelId: shop.channelId, userId: site.userId, bookingId: linked.id, amount: 3_000, currency: 'USD', language: 'enGB' }, new Date());
    await record('GET /hosted/payments/currencies', { url: '/hosted/payments/currencies', headers: { authorization: `Bearer ${pay.token}` } });

    // 3-D Secure: back with a redirect_url (303), and without one (a page).
    for (const redirect of [{ redirect_url: 'https://shop.example/done' }, {}]) {
      const bookingId = await createBooking(t, shop, { total: 1_200 });
      const created = await record('POST /{path}/site-json/vendor/v2/transactions', {
        method: 'POST', url: `${shop.base}/transactions`, headers: site.headers,
        payload: purchaseBody(shop, bookingId, 1_200, { token: 'tok_visa_3ds_challenge', attempt_3ds: true, ...redirect }),
      });
      const transaction = created.json();
      await t.app.inject({ method: 'POST', url: new URL(transaction['3ds_response'].challenge_url as string).pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'result=authenticate' });
      await record('GET /3ds/return/{uuid}', { url: `/3ds/return/${transaction.uuid as string}` });
      await record('GET /{path}/site-json/vendor/v2/transactions/{id}', { url: `${shop.base}/transactions/${transaction.id as number}`, headers: site.headers });
    }
    await record('GET /{path}/site-json/vendor/v2/transactions', { url: `${shop.base}/transactions`, headers: site.headers });

    expect(Object.fromEntries([...sent].map(([key, statuses]) => [key, [...statuses].sort()]))).toEqual({
      'GET /vault/{version}': ['200'],
      'GET /vault/{version}/{file}': ['200'],
      'GET /hosted/assets/{file}': ['200'],
      'GET /hosted/3ds-return': ['200'],
      'GET /modal/{version}/{file}': ['200'],
      'POST /hosted/modal/sessions': ['201'],
      'POST /{path}/site-json/vendor/v2/cards': ['201'],
      'POST /hosted/payments': ['201'],
      'GET /hosted/payments/current': ['200'],
      'GET /pay/{token}': ['200'],
      'GET /hosted/payments/currencies': ['200'],
      'POST /{path}/site-json/vendor/v2/transactions': ['201'],
      'GET /3ds/return/{uuid}': ['200', '303'],
      'GET /{path}/site-json/vendor/v2/transactions/{id}': ['200'],
      'GET /{path}/site-json/vendor/v2/transactions': ['200'],
    });
    // What the document says of each: exactly the statuses sent.
    for (const [key, statuses] of sent) {
      const operation = operations.find((op) => keyOf(op.method, op.path) === key)!;
      expect(successes(operation.operation), key).toEqual([...statuses].sort());
    }
  });
});

describe('documented schemas', () => {
  it('shows the limits the server applies: the spec country list on bookings, percent allocations in basis points', async () => {
    for (const method of ['post', 'put'] as const) {
      const path = method === 'post' ? '/{path}/site-json/vendor/v2/bookings' : '/{path}/site-json/vendor/v2/bookings/{id}';
      const countries = document.paths[path][method].requestBody.content['application/json'].schema.properties.countries;
      expect(countries.enum).toContain('GB');
      expect(countries.enum).not.toContain('XX');
    }
    const allocation = find('POST', '/{path}/site-json/vendor/v2/transactions').requestBody.content['application/json'].schema.properties.allocations.items;
    const validate = ajv.compile(allocation);
    expect(validate({ channels: 2, total: 10_000, operator: 'percent' })).toBe(true);
    expect(validate({ channels: 2, total: 10_001, operator: 'percent' })).toBe(false);
    expect(validate({ channels: 2, total: 10_001 })).toBe(true);
    // And the server refuses what the document refuses, naming the field.
    const bookingId = await createBooking(t, shop, { total: 1_000 });
    const refused = await t.app.inject({ method: 'POST', url: `${shop.base}/transactions`, headers: shop.site.headers, payload: purchaseBody(shop, bookingId, 1_000, { allocations: [{ channels: shop.channelId + 1, total: 10_001, operator: 'percent' }] }) });
    expect(refused.json()).toEqual({ code: 'rest_invalid_param', message: 'Invalid parameter(s): allocations.0.total', data: { status: 400, params: { 'allocations.0.total': 'must be <= 10000' } } });
    const unknownCountry = await t.app.inject({ method: 'POST', url: `${shop.base}/bookings`, headers: shop.site.headers, payload: { firstname: 'A', surname: 'B', email: 'a@example.com', date: '2031-01-01', total: 100, currencies: 'USD', countries: 'XX', channels: shop.channelId } });
    expect(unknownCountry.json().data.params).toEqual({ countries: 'must be a country code of the ISO 3166-1 alpha-2 list, in capitals, such as GB' });
  });

  it('matches every JSON answer received above, field by field', () => {
    expect(answers.length).toBeGreaterThan(100);
    let checked = 0;
    const mismatches: unknown[] = [];
    const validators = new Map<string, ReturnType<typeof ajv.compile>>();
    for (const { key, response } of answers) {
      const [method, path] = key.split(' ') as [string, string];
      const operation = operations.find((op) => op.method === method && openApiPath(op.path) === path)!.operation;
      const documented = operation.responses[String(response.statusCode)] as Json | undefined;
      expect(documented, `${key} ${response.statusCode}`).toBeDefined();
      const type = String(response.headers['content-type'] ?? '').split(';')[0]!;
      if (response.statusCode === 303) {
        expect(response.headers.location, key).toBeTruthy();
        expect(documented!.headers?.location, key).toBeDefined();
        continue;
      }
      expect(Object.keys(documented!.content ?? {}), `${key} ${response.statusCode} sent ${type}`).toContain(type);
      if (type !== 'application/json') continue;
      const schemaKey = `${key} ${response.statusCode}`;
      if (!validators.has(schemaKey)) validators.set(schemaKey, ajv.compile(closed(documented!.content[type].schema) as object));
      const validate = validators.get(schemaKey)!;
      if (!validate(response.json())) mismatches.push({ answer: `${key} ${response.statusCode}`, errors: validate.errors });
      checked++;
    }
    expect(mismatches).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });
});
