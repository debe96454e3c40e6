import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase } from '../support/context.js';
import { killServers, spawnServer } from '../support/server-process.js';
import { createSite } from '../support/fixtures.js';
import { clientConnectionsCap, openFilesSoftLimit } from '../../src/net.js';
import { limits } from '../../src/limits.js';

// Clients holding connections open (idle keep-alives, a slow-client attack) must not take the
// descriptors the server needs for itself: past its cap, new connections are closed as they
// arrive, and the database pool can still grow for the requests it serves.
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-connections-'));

afterAll(() => {
  killServers();
  rmSync(dataDir, { recursive: true, force: true });
});

/** `count` connections opened at once; resolves once each is open or refused. */
async function holdConnections(port: number, count: number): Promise<{ sockets: Socket[]; closedByServer: () => number }> {
  let closed = 0;
  const sockets: Socket[] = [];
  await Promise.all(Array.from({ length: count }, () => new Promise<void>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => resolve());
    socket.on('error', () => resolve());
    socket.on('close', () => (closed += 1));
    sockets.push(socket);
  })));
  return { sockets, closedByServer: () => closed };
}

describe('client connections past the cap', () => {
  it('are closed as they arrive, so requests already connected still get database connections; the operator is told', async () => {
    const openFilesMax = 200;
    const cap = clientConnectionsCap(openFilesMax);
    expect(cap).toBe(openFilesMax - limits.fileDescriptorsReservedCount);
    const { db, url } = await createTestDatabase(2);
    try {
      const shop = await createSite(db, { role: 'member_admin' });
      const server = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: url }, { openFilesMax });
      await vi.waitFor(async () => expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200), { timeout: 30_000, interval: 50 });
      const port = Number(new URL(server.baseUrl).port);
      const base = `${server.baseUrl}/${shop.path}/site-json/vendor/v2`;
      const channel = await (await fetch(`${base}/channels`, { method: 'POST', headers: { ...shop.headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Tours', currencies: 'USD' }) })).json();

      // Ten clients connect first (each request on a connection of its own), then idle
      // connections arrive by the hundred and stay open.
      const clients = await holdConnections(port, 10);
      const idle = await holdConnections(port, 3 * openFilesMax);
      await vi.waitFor(() => expect(idle.closedByServer()).toBeGreaterThanOrEqual(3 * openFilesMax - cap), { timeout: 10_000, interval: 50 });

      // The ten connected clients book at once: the pool opens its connections for them.
      const body = JSON.stringify({ firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 1_000, currencies: 'USD', countries: 'GB', channels: channel.id });
      const request = [
        `POST /${shop.path}/site-json/vendor/v2/bookings HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', 'Content-Type: application/json',
        ...Object.entries(shop.headers).map(([name, value]) => `${name}: ${value}`), `Content-Length: ${Buffer.byteLength(body)}`, '', body,
      ].join('\r\n');
      const answers = await Promise.all(clients.sockets.map((socket) => new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (chunk) => (text += chunk));
        socket.on('close', () => resolve(text));
        socket.write(request);
      })));
      expect(answers.map((answer) => answer.split('\r\n')[0])).toEqual(Array(10).fill('HTTP/1.1 201 Created'));
      expect(await db.query(`SELECT id FROM bookings WHERE site_id = $1`, [shop.siteId])).toHaveLength(10);

      for (const socket of idle.sockets) socket.destroy();
      expect((await fetch(`${base}/channels`, { headers: shop.headers })).status).toBe(200);
      const output = server.output();
      expect(output).toContain(`client connections are capped at ${cap}: this process may open ${openFilesMax} files (ulimit -n)`);
      expect(output).toContain('client connections over the cap were closed as they arrived');
      expect(output).not.toMatch(/EMFILE/);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe('the open-file limit', () => {
  it('is read from /proc on Linux, and a limit as high as the cap leaves the cap as it is', () => {
    expect(openFilesSoftLimit()).toBeGreaterThan(0);
    expect(openFilesSoftLimit('/nonexistent/limits')).toBeNull();
    expect(clientConnectionsCap(null)).toBe(limits.clientConnectionsMax);
    expect(clientConnectionsCap(1_000_000)).toBe(limits.clientConnectionsMax);
  });
});
