// How requests arrive, over real sockets: a body at and past limits.bodyBytesMax (with a length or
// chunked), a body sent a byte at a time (slowloris), many connections held open at once. Each
// bound is enforced with an answer in the error shape, and the server goes on serving others.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { limits } from '../../src/limits.js';
import { shopContext, type Shop } from '../payments/support.js';

let t: TestContext;
let shop: Shop;
let port: number;
beforeAll(async () => {
  ({ t, shop } = await shopContext());
  port = Number(new URL(await t.app.listen({ host: '127.0.0.1', port: 0 })).port);
});
afterAll(async () => t.close());

interface Exchange {
  socket: Socket;
  /** The answer, once the server closed the connection or `untilAnswer` saw a whole one. */
  answer: Promise<{ statusCode: number; head: string; body: string; closed: boolean }>;
}

/** Opens a connection and reads what comes back: until it closes, or (`untilAnswer`) until one whole answer arrived. */
function open(untilAnswer = false): Exchange {
  const socket = connect(port, '127.0.0.1');
  const answer = new Promise<{ statusCode: number; head: string; body: string; closed: boolean }>((resolve) => {
    let text = '';
    const done = (closed: boolean) => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ statusCode: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), head, body, closed });
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const length = Number(/^content-length: (\d+)$/im.exec(text)?.[1] ?? NaN);
      if (untilAnswer && text.includes('\r\n\r\n') && Buffer.byteLength(text.split('\r\n\r\n')[1]!) >= length) done(false);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => done(true));
  });
  return { socket, answer };
}

const bookingHead = (framing: string) =>
  `POST ${shop.base}/bookings HTTP/1.1\r\nHost: x\r\nAuthorization: ${shop.site.headers.authorization}\r\nContent-Type: application/json\r\n${framing}\r\n`;

/** A booking body padded with spaces to exactly `bytes` (JSON allows any whitespace). */
function bookingOf(bytes: number): string {
  const body = JSON.stringify({ firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2099-01-01', total: 100, currencies: 'USD', countries: 'GB', channels: shop.channelId });
  return `${body}${' '.repeat(bytes - Buffer.byteLength(body))}`;
}

describe('a body at and past limits.bodyBytesMax', () => {
  it('is taken at the limit and refused one byte past it with 413 rest_request_too_large, with a Content-Length or chunked', async () => {
    for (const chunked of [false, true]) {
      const answers = [];
      for (const bytes of [limits.bodyBytesMax, limits.bodyBytesMax + 1]) {
        const body = bookingOf(bytes);
        const { socket, answer } = open(true);
        socket.write(chunked ? `${bookingHead('Transfer-Encoding: chunked\r\n')}${bytes.toString(16)}\r\n${body}\r\n0\r\n\r\n` : `${bookingHead(`Content-Length: ${bytes}\r\n`)}${body}`);
        answers.push(await answer);
        socket.destroy();
      }
      expect(answers.map((answer) => answer.statusCode), `chunked: ${chunked}`).toEqual([201, 413]);
      expect(JSON.parse(answers[1]!.body)).toEqual({ code: 'rest_request_too_large', message: `The request body is too large: send at most ${limits.bodyBytesMax} bytes (${limits.bodyBytesMax / 1024} KB).`, data: { status: 413, max_bytes: limits.bodyBytesMax } });
    }
  });
});

describe('a body sent a byte at a time (slowloris)', () => {
  it('is bounded by limits.requestArrivalTimeoutMs: the connection is not held for as long as the client likes', () => {
    // Fastify's default is no bound at all (0), which left Node's headersTimeout guarding the headers alone.
    expect(t.app.server.requestTimeout).toBe(limits.requestArrivalTimeoutMs);
    expect(t.app.server.headersTimeout).toBeLessThanOrEqual(limits.requestArrivalTimeoutMs);
  });

  it('is answered 408 rest_request_timeout in the error shape when it does not arrive in time, and the connection closed', async () => {
    // The same server, its bound shortened so the test need not wait a minute (Node checks every connectionsCheckingInterval, 30 s by default).
    const { t: slow, shop: slowShop } = await shopContext();
    try {
      slow.app.server.connectionsCheckingInterval = 200;
      const slowPort = Number(new URL(await slow.app.listen({ host: '127.0.0.1', port: 0 })).port);
      slow.app.server.requestTimeout = 1_000;
      slow.app.server.headersTimeout = 1_000;
      const socket = connect(slowPort, '127.0.0.1');
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      const closed = new Promise((resolve) => socket.on('close', resolve));
      socket.on('error', () => undefined);
      socket.write(`POST ${slowShop.base}/bookings HTTP/1.1\r\nHost: x\r\nAuthorization: ${slowShop.site.headers.authorization}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
      const trickle = setInterval(() => !socket.destroyed && socket.write(' '), 100);
      const startedAt = Date.now();
      await closed;
      clearInterval(trickle);
      expect(Date.now() - startedAt).toBeLessThan(5_000);
      const [head = '', body = ''] = text.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(body)).toEqual({ code: 'rest_request_timeout', message: 'The request took too long to arrive.', data: { status: 408 } });
    } finally {
      await slow.close();
    }
  });
});

describe('many connections held open without a request', () => {
  it('do not keep the server from answering others', async () => {
    const idle = Array.from({ length: 500 }, () => open());
    await Promise.all(idle.map(({ socket }) => new Promise((resolve) => socket.once('connect', resolve))));
    try {
      const startedAt = Date.now();
      const response = await fetch(`http://127.0.0.1:${port}${shop.base}/bookings`, { headers: shop.site.headers });
      expect(response.status).toBe(200);
      expect(Date.now() - startedAt).toBeLessThan(2_000);
    } finally {
      for (const { socket } of idle) socket.destroy();
    }
  });
});
