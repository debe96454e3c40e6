// Requests malformed at the edge (path, query string, media type, HTTP framing): each gets an
// answer in the error shape `{code, message, data: {status}}`, never a 500 or Fastify's own shape.
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../../src/domain/credentials.js';
import type { TestContext } from '../support/context.js';
import { createBooking, createShop, post, purchaseBody, shopContext, type Shop } from '../payments/support.js';

let t: TestContext;
let shop: Shop;
beforeAll(async () => ({ t, shop } = await shopContext()));
afterAll(async () => t.close());

type Answer = { statusCode: number; json(): unknown };

function expectError(answer: Answer, status: number, code?: string) {
  expect(answer.statusCode).toBe(status);
  expect(answer.json()).toMatchObject({ ...(code ? { code } : {}), message: expect.any(String), data: { status } });
}

describe('a NUL character in the site part of the URL', () => {
  const bookings = (path: string) => `/${path}/site-json/vendor/v2/bookings`;
  const nulPath = () => `${shop.site.path.slice(0, 2)}%00${shop.site.path.slice(2)}`;

  it('gets the answer of an unknown site, whatever the credential', async () => {
    const jwt = await signJwt(t.config.secrets.jwtSecret, { userId: shop.site.userId, kind: 'user' }, new Date(Date.now() + 2_000));
    for (const authorization of ['Bearer tfat_fake', shop.site.headers.authorization, `Bearer ${jwt}`, undefined]) {
      const headers = authorization ? { authorization } : {};
      for (const method of ['GET', 'POST'] as const) {
        const payload = method === 'POST' ? {} : undefined;
        const unknown = await t.app.inject({ method, url: bookings('no-such-site'), headers, ...(payload ? { payload } : {}) });
        const nul = await t.app.inject({ method, url: bookings(nulPath()), headers, ...(payload ? { payload } : {}) });
        expect(unknown.statusCode).toBeLessThan(500);
        expect({ status: nul.statusCode, body: nul.json() }).toEqual({ status: unknown.statusCode, body: unknown.json() });
      }
    }
  });
});

describe('a deeply nested read-only field with an Idempotency-Key', () => {
  /** `body` as JSON with `field` set to `depth` nested arrays (written as text: JSON.stringify itself recurses). */
  const withNested = (body: Record<string, unknown>, field: string, depth: number) =>
    JSON.stringify({ ...body, [field]: 0 }).replace(`"${field}":0`, `"${field}":${'['.repeat(depth)}${']'.repeat(depth)}`);
  const send = (resource: string, payload: string, key: string) =>
    t.app.inject({ method: 'POST', url: `${shop.base}/${resource}`, headers: { ...shop.site.headers, 'content-type': 'application/json', 'idempotency-key': key }, payload });

  it('is ignored as any read-only field, and the key replays the answer', async () => {
    // 100,000 nested arrays: 200 KB, within the body limit.
    const body = withNested({ firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2099-01-01', total: 100, currencies: 'USD', countries: 'GB', channels: shop.channelId }, 'title', 100_000);
    const first = await send('bookings', body, 'deep-booking');
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ title: expect.stringContaining('Lovelace') });
    const again = await send('bookings', body, 'deep-booking');
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
  });

  it('on a payment too', async () => {
    const booking = await createBooking(t, shop, { total: 1000 });
    const answer = await send('transactions', withNested(purchaseBody(shop, booking, 1000), 'hash', 5000), 'deep-payment');
    expect(answer.statusCode).toBe(201);
    expect(answer.json()).toMatchObject({ status: 'complete' });
  });
});

describe('list parameters written with brackets (`status[]=`)', () => {
  // A site of its own: exactly these two transactions.
  let listed: Shop;
  let failed: number;
  let complete: number;
  beforeAll(async () => {
    listed = await createShop(t);
    const booking = await createBooking(t, listed, { total: 10_000 });
    complete = (await post(t, listed, purchaseBody(listed, booking, 1000))).json().id;
    failed = (await post(t, listed, purchaseBody(listed, booking, 1000, { token: 'tok_visa_declined' }))).json().id;
  });
  const list = async (query: string) => {
    const answer = await t.app.inject({ url: `${listed.base}/transactions?${query}`, headers: listed.site.headers });
    expect(answer.statusCode).toBe(200);
    return (answer.json() as { id: number }[]).map((item) => item.id);
  };

  it('filter the list as the plain name does', async () => {
    expect(await list('status=failed')).toEqual([failed]);
    expect(await list('status[]=failed')).toEqual([failed]);
    expect(await list('status%5B%5D=failed')).toEqual([failed]);
    expect(await list('status[0]=failed')).toEqual([failed]);
    expect(await list(`include[]=${complete}`)).toEqual([complete]);
    expect(await list('transaction_types[]=void')).toEqual([]);
    expect(await list('channels[]=999999')).toEqual([]);
    expect(await list('per_page[]=1')).toHaveLength(1);
  });

  it('join the plain name and repeat, and are refused as it is', async () => {
    expect((await list('status[]=failed&status[]=complete')).sort()).toEqual([complete, failed].sort());
    expect((await list('status=complete&status[]=failed')).sort()).toEqual([complete, failed].sort());
    expectError(await t.app.inject({ url: `${listed.base}/transactions?per_page[]=0`, headers: listed.site.headers }), 400, 'rest_invalid_param');
  });
});

describe('bodies of another media type or encoding', () => {
  it('text/plain is 415', async () => {
    const answer = await t.app.inject({ method: 'POST', url: `${shop.base}/bookings`, headers: { ...shop.site.headers, 'content-type': 'text/plain' }, payload: '{"firstname":"Ada"}' });
    expectError(answer, 415, 'rest_unsupported_media_type');
  });

  it('a compressed body is 415, not invalid JSON', async () => {
    const payload = gzipSync(JSON.stringify({ firstname: 'Ada' }));
    const answer = await t.app.inject({ method: 'POST', url: `${shop.base}/bookings`, headers: { ...shop.site.headers, 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload });
    expectError(answer, 415, 'rest_unsupported_media_type');
  });
});

describe('requests refused before a route takes them', () => {
  it('a path part that does not decode is 400 in the error shape', async () => {
    const answer = await t.app.inject({ url: `${shop.base}/bookings/%E0%A4%A`, headers: shop.site.headers });
    expectError(answer, 400, 'rest_invalid_request');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['x-request-id']).toEqual(expect.any(String));
  });

  describe('by the HTTP parser, over a real socket', () => {
    let port: number;
    beforeAll(async () => {
      port = Number(new URL(await t.app.listen({ host: '127.0.0.1', port: 0 })).port);
    });

    /** Writes `request` as it is and reads the answer until the server closes the connection. */
    function exchange(request: string): Promise<{ statusCode: number; headers: string; json(): unknown }> {
      return new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.end(request));
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('error', reject);
        socket.on('close', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const [head = '', body = ''] = text.split('\r\n\r\n');
          resolve({ statusCode: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), headers: head, json: () => JSON.parse(body) });
        });
      });
    }

    it('a query string past 16 KB is 431', async () => {
      const answer = await exchange(`GET ${shop.base}/bookings?x=${'a'.repeat(17_000)} HTTP/1.1\r\nHost: x\r\n${`Authorization: ${shop.site.headers.authorization}`}\r\n\r\n`);
      expectError(answer, 431, 'rest_request_headers_too_large');
      // The JSON answers' security headers, though no Fastify hook wrote them (client-errors.ts).
      expect(answer.headers).toMatch(/^X-Content-Type-Options: nosniff$/m);
      expect(answer.headers).toMatch(/^X-Frame-Options: DENY$/m);
      expect(answer.headers).toMatch(/^Content-Security-Policy: default-src 'none'; frame-ancestors 'none'$/m);
    });

    it('a space in a header name is 400', async () => {
      expectError(await exchange(`GET ${shop.base}/bookings HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n`), 400, 'rest_invalid_request');
    });

    it('both Content-Length and Transfer-Encoding is 400', async () => {
      const answer = await exchange(`POST ${shop.base}/bookings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`);
      expectError(answer, 400, 'rest_invalid_request');
    });
  });
});

describe('names that Object.prototype holds (`constructor`, `toString`, `__proto__`, ...)', () => {
  const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];

  it('name no hosted file, vaulting app or modal version: 404, never 500', async () => {
    for (const name of names) {
      for (const url of [`/hosted/assets/${name}`, `/vault/${name}/app.js`, `/vault/1.8.0/${name}`, `/modal/${name}/frame.js`, `/modal/1.0.0/${name}`]) {
        expectError(await t.app.inject({ url }), 404, 'rest_no_route');
      }
      expect((await t.app.inject({ url: `/modal/${name}/frame` })).statusCode, name).toBe(404);
    }
  });

  it('name no vaulting app version, even with a valid auth: the 404 page, and no page session opened', async () => {
    const jwt = await signJwt(t.config.secrets.jwtSecret, { userId: shop.site.userId, kind: 'cardvaultuser', siteId: shop.site.siteId });
    const sessions = async () => (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM hosted_sessions')).count;
    const before = await sessions();
    for (const name of names) {
      const page = await t.app.inject({ url: `/vault/${name}/?auth=${encodeURIComponent(jwt)}&channels=${shop.channelId}` });
      expect(page.statusCode, name).toBe(404);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
    }
    expect(await sessions()).toBe(before);
    // The vaulting app's forced decline code is no such name either.
    const failCode = await t.app.inject({ url: `/vault/1.8.0/?auth=${encodeURIComponent(jwt)}&channels=${shop.channelId}&fail_code=constructor` });
    expect(failCode.statusCode).toBe(400);
    expect(failCode.body).toContain('fail_code');
  });

  it('are body fields like any other: an unknown one is named in the refusal', async () => {
    const body = { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 100, currencies: 'USD', countries: 'GB', channels: shop.channelId };
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      const answer = await t.app.inject({ method: 'POST', url: `${shop.base}/bookings`, headers: shop.site.headers, payload: { ...body, [name]: 1 } });
      expectError(answer, 400, 'rest_invalid_param');
      expect(answer.json()).toMatchObject({ message: `Invalid parameter(s): ${name}`, data: { params: { [name]: `unknown field ${name}` } } });
    }
  });
});

describe('a Bearer credential that is no token', () => {
  it('longer than 4096 characters, or in words, is an invalid token, not a request without one', async () => {
    const jwt = await signJwt(t.config.secrets.jwtSecret, { userId: shop.site.userId, kind: 'user' });
    for (const authorization of [`Bearer ${'a'.repeat(5000)}`, `Bearer ${jwt}${'a'.repeat(4096)}`, `Bearer tfat_${'x'.repeat(4100)}`, 'Bearer two words']) {
      expectError(await t.app.inject({ url: `${shop.base}/bookings`, headers: { authorization } }), 401, 'jwt_auth_invalid_token');
      expectError(await t.app.inject({ method: 'POST', url: `/${shop.site.path}/site-json/jwt-auth/v1/token/refresh`, headers: { authorization } }), 401, 'jwt_auth_invalid_token');
    }
    // No credential is still no credential.
    for (const headers of [{}, { authorization: 'Basic dXNlcjpwdw==' }, { authorization: 'Bearer ' }]) {
      expectError(await t.app.inject({ url: `${shop.base}/bookings`, headers }), 401, 'rest_not_logged_in');
    }
  });
});

describe('a request that arrives while the server stops', () => {
  it('is 503 in the error shape, with Connection: close, while the request in flight on that connection finishes', async () => {
    // Its own server: this one is stopped. Each processor call takes 1 s, so a payment is in flight when the stop begins.
    const { t: stopping, shop: stoppingShop } = await shopContext({ env: { SANDBOX_LATENCY_MS: '1000' } });
    try {
      const port = Number(new URL(await stopping.app.listen({ host: '127.0.0.1', port: 0 })).port);
      const bookingId = await createBooking(stopping, stoppingShop, { total: 4_000 });
      const body = JSON.stringify(purchaseBody(stoppingShop, bookingId, 4_000));
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
      const ended = new Promise((resolve) => socket.on('close', resolve));
      await new Promise((resolve) => socket.once('connect', resolve));
      // A keep-alive client (an integrator's HTTP pool): a payment, then, once the stop has begun, the next request on the same connection.
      socket.write(`POST ${stoppingShop.base}/transactions HTTP/1.1\r\nHost: x\r\nAuthorization: ${stoppingShop.site.headers.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const closed = stopping.app.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.write(`GET ${stoppingShop.base}/bookings/${bookingId} HTTP/1.1\r\nHost: x\r\nAuthorization: ${stoppingShop.site.headers.authorization}\r\n\r\n`);
      await closed;
      await ended;
      const [payment, refused] = received.split(/(?=HTTP\/1\.1 )/);
      expect(payment).toMatch(/^HTTP\/1\.1 201 /);
      expect(refused).toMatch(/^HTTP\/1\.1 503 /);
      expect(refused).toMatch(/^connection: close$/im);
      expect(refused).toMatch(/^x-content-type-options: nosniff$/im);
      expect(JSON.parse(refused!.split('\r\n\r\n')[1]!)).toEqual({ code: 'rest_internal_error', message: expect.stringMatching(/shutting down.*again/), data: { status: 503 } });
    } finally {
      await stopping.close();
    }
  }, 30_000);
});
