import { Writable } from 'node:stream';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, redactUrl } from '../../src/app.js';
import { signPaymentRequestToken } from '../../src/domain/payment-request-link.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';

let t: TestContext;
let site: SiteFixture;
beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db);
});
afterAll(async () => t.close());

describe('URLs in the logs', () => {
  it('hide the capability token of a payment request link (whoever holds it can pay and read the booking)', async () => {
    const token = signPaymentRequestToken(t.config.secrets.signingSecret, { siteId: site.siteId, bookingId: 1, expiresAt: new Date(Date.now() + 86_400_000) });
    const signature = token.split('.').at(-1)!;
    expect(redactUrl(`/pay/${token}`)).toBe('/pay/[redacted]');
    expect(redactUrl(`/pay/${token}?lang=fr`)).toBe('/pay/[redacted]?lang=fr');
    const lines: string[] = [];
    const stream = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
    const app = await buildApp({ context: { ...t.context, config: { ...t.config, logLevel: 'trace' } }, logStream: stream });
    try {
      await app.inject({ url: `/pay/${token}` });
      const log = lines.join('');
      expect(log).toContain('incoming request');
      expect(log).not.toContain(signature);
    } finally {
      await app.close();
    }
  });

  it('hide a card number pasted into any query parameter, however it is spaced', () => {
    expect(redactUrl('/vault/1.8.0/?name=4111111111111111&channels=1')).toBe('/vault/1.8.0/?name=[redacted]&channels=1');
    expect(redactUrl('/vault/1.8.0/?zip=4111+1111+1111+1111')).toBe('/vault/1.8.0/?zip=[redacted]');
    expect(redactUrl('/vault/1.8.0/?city=5555%205555%205555%204444&env=test')).toBe('/vault/1.8.0/?city=[redacted]&env=test');
    expect(redactUrl('/x?address=3782-822463-10005')).toBe('/x?address=[redacted]');
    expect(redactUrl('/x?ref=4111.1111.1111.1111')).toBe('/x?ref=[redacted]');
    expect(redactUrl('/x?ref=4111_1111_1111_1111&a=1')).toBe('/x?ref=[redacted]&a=1');
    expect(redactUrl('/x?ref=4111%2B1111%2B1111%2B1111')).toBe('/x?ref=[redacted]');
    // Long numbers that are not card numbers stay: ids, timestamps.
    expect(redactUrl('/demo/site-json/vendor/v2/transactions?include=1234567890123&_=1700000000000')).toBe('/demo/site-json/vendor/v2/transactions?include=1234567890123&_=1700000000000');
  });

  it('hide a credential sent as a list parameter, which the query string parser reads as the plain name', () => {
    expect(redactUrl('/vault/1.8.0/?auth[]=eyJ.x.y&channels=1')).toBe('/vault/1.8.0/?auth[]=[redacted]&channels=1');
    expect(redactUrl('/vault/1.8.0/?channels=1&AUTH%5B0%5D=eyJ.x.y')).toBe('/vault/1.8.0/?channels=1&AUTH%5B0%5D=[redacted]');
  });

  it('hide a credential whose name is percent-encoded, as the query string parser reads it', async () => {
    expect(redactUrl('/vault/1.8.0/?a%75th=eyJ.x.y&channels=1')).toBe('/vault/1.8.0/?a%75th=[redacted]&channels=1');
    expect(redactUrl('/vault/1.8.0/?channels=1&%61uth=eyJ.x.y')).toBe('/vault/1.8.0/?channels=1&%61uth=[redacted]');
    expect(redactUrl('/vault/1.8.0/?%61%75%74%68%5B%5D=eyJ.x.y')).toBe('/vault/1.8.0/?%61%75%74%68%5B%5D=[redacted]');
    expect(redactUrl('/x?p%61ssword=hunter2&t%6Fken=abc&na%6De=Ada')).toBe('/x?p%61ssword=[redacted]&t%6Fken=[redacted]&na%6De=Ada');
    // Names that decode to something else, or not at all, stay as they are.
    expect(redactUrl('/x?a%20uth=1&%E0%A4%A=2&name=a%75th')).toBe('/x?a%20uth=1&%E0%A4%A=2&name=a%75th');

    // What the vaulting app reads as its `auth` never reaches the log, however its name is spelt.
    const jwt = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token/cardvaultuser`, payload: { username: site.username, password: site.password } })).json().token as string;
    const channel = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Logs', currencies: 'USD' } })).json();
    const lines: string[] = [];
    const stream = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
    const app = await buildApp({ context: { ...t.context, config: { ...t.config, logLevel: 'trace' } }, logStream: stream });
    try {
      for (const name of ['a%75th', '%61uth', '%61%75%74%68']) {
        const page = await app.inject({ url: `/vault/1.8.0/?${name}=${jwt}&channels=${channel.id}&env=test` });
        expect(page.statusCode, `${name}: ${page.body.slice(0, 200)}`).toBe(200);
      }
      const log = lines.join('');
      expect(log).toContain('incoming request');
      expect(log).not.toContain(jwt.split('.').at(-1)!);
    } finally {
      await app.close();
    }
  });

  it("hide this service's credentials under any name, and under the names integrators use for them", () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
    const apiToken = 'tfat_frwRtSjEb9SgyMfGG9rLeA-f6zihxrWr8N7alDcME3w';
    expect(redactUrl(`/demo/site-json/vendor/v2/channels?t=${apiToken}&x=${jwt}&page=2`)).toBe('/demo/site-json/vendor/v2/channels?t=[redacted]&x=[redacted]&page=2');
    expect(redactUrl('/x?api_token=abc&apikey=abc&api_key=abc&jwt=abc&pass=abc&passwd=abc&name=Ada')).toBe('/x?api_token=[redacted]&apikey=[redacted]&api_key=[redacted]&jwt=[redacted]&pass=[redacted]&passwd=[redacted]&name=Ada');
    expect(redactUrl(`/hosted/payments?session=hps_${'a'.repeat(43)}`)).toBe('/hosted/payments?session=[redacted]');
  });

  it('keep ordinary URLs readable', () => {
    expect(redactUrl('/demo/site-json/vendor/v2/bookings?page=2')).toBe('/demo/site-json/vendor/v2/bookings?page=2');
    expect(redactUrl('/payments/x')).toBe('/payments/x');
  });
});

describe('requests the HTTP parser refuses', () => {
  it('are logged by their error code only: not the bytes received, which hold the headers and the card in the body', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
    const app = await buildApp({ context: { ...t.context, config: { ...t.config, logLevel: 'trace' } }, logStream: stream });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const port = (app.server.address() as AddressInfo).port;
      const body = '{"channels":1,"card_number":"4242424242424242","expiry_month":"04","expiry_year":2029,"cvv":"918"}';
      // A space in a header name: Node's parser refuses the request after reading the whole chunk.
      const request = `POST /${site.path}/site-json/vendor/v2/cards HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${site.token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nX Bad: y\r\n\r\n${body}`;
      const answer = await new Promise<string>((resolve, reject) => {
        let received = '';
        const socket = connect(port, '127.0.0.1', () => socket.write(request));
        socket.on('data', (chunk) => (received += chunk));
        socket.on('close', () => resolve(received));
        socket.on('error', reject);
      });
      expect(answer).toContain('400 Bad Request');
      const log = lines.join('');
      expect(log).toContain('"code":"HPE_INVALID_HEADER_TOKEN"');
      expect(log).not.toContain('rawPacket');
      for (const secret of ['4242424242424242', site.token]) expect(log).not.toContain(secret);
    } finally {
      await app.close();
    }
  });
});
