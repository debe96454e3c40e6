import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, testEnv } from '../support/context.js';
import { freePort } from '../../src/net.js';
import { limits } from '../../src/limits.js';
import { createSite } from '../support/fixtures.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-server-'));
const children: ChildProcess[] = [];
const embeddedDirs: string[] = [];

interface Started {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  exited: Promise<{ code: number | null; stderr: string }>;
}

/** Starts `node dist/server.js` with only the given environment (no inherited DATABASE_URL or NODE_ENV). */
async function start(env: Record<string, string>, listenPort?: number): Promise<Started> {
  const port = listenPort ?? (await freePort());
  const child = spawn(process.execPath, ['dist/server.js'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  // 'close', not 'exit': the output is complete only once the pipes have closed (a cluster's
  // workers write their last lines to the same pipe just before the primary exits).
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
  return { child, baseUrl: `http://127.0.0.1:${port}`, output: () => stdout, exited };
}

/**
 * Polls /readyz (bounded) until it answers and the process's own output says it serves: the
 * banner in development, Fastify's "listening" log line in production (JSON logs, no banner).
 * A /readyz answer alone may come from another test's server that was handed the same free
 * port. Fails early if the process exits.
 */
async function waitUntilReady(server: Started, options: { banner: boolean } = { banner: true }): Promise<void> {
  const ownLine = options.banner ? 'trustfare is running' : `"msg":"Server listening at ${server.baseUrl}"`;
  let exitedEarly = false;
  void server.exited.then(() => (exitedEarly = true));
  // Asked often, so a test can signal a cluster while its other workers are still starting;
  // bounded in time (inside the tests' own timeouts), whatever the poll costs.
  const deadline = Date.now() + 50_000;
  while (!exitedEarly && Date.now() < deadline) {
    const ready = await fetch(`${server.baseUrl}/readyz`).then((response) => response.ok, () => false);
    if (ready && server.output().includes(ownLine)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`server did not become ready: ${(await Promise.race([server.exited, Promise.resolve({ stderr: 'still running' })])).stderr}`);
}

/** Exit code 0; on failure the message carries what the process printed, the only trace of why. */
async function expectCleanExit(server: Started): Promise<void> {
  const { code, stderr } = await server.exited;
  expect(code, `exit code ${code}\n--- stderr\n${stderr}\n--- stdout\n${server.output()}`).toBe(0);
}

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of [dataDir, ...embeddedDirs]) rmSync(dir, { recursive: true, force: true });
});

describe('development start on the embedded database', () => {
  let apiToken = '';

  it('seeds an empty database once, prints a banner whose curl line works, and stops cleanly', async () => {
    const server = await start({ NODE_ENV: 'development', DATA_DIR: dataDir });
    await waitUntilReady(server);
    const banner = server.output();
    expect(banner).toContain(`trustfare is running at ${server.baseUrl}`);
    expect(banner).toMatch(/site\s+demo/);
    expect(banner).toMatch(/password\s+\S{16}/);
    apiToken = /API token\s+(tfat_\S+)/.exec(banner)![1]!;
    const curl = banner.split('\n').map((line) => line.trim()).find((line) => line.startsWith('curl '))!;
    expect(curl).toContain(apiToken);

    const { stdout } = await run('sh', ['-c', `${curl} --silent --show-error --fail`]);
    const channels = JSON.parse(stdout);
    expect(channels).toHaveLength(1);
    expect(channels[0]).toMatchObject({ name: 'Demo test channel', currencies: 'USD', account_mode: 'test' });

    const password = /password\s+(\S+)/.exec(banner)![1]!;
    const login = await fetch(`${server.baseUrl}/demo/site-json/jwt-auth/v1/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'demo', password }) });
    expect(login.status).toBe(200);
    expect((await login.json()).default_site).toMatchObject({ path: 'demo', usertype: 'member_admin', channel_count: 1 });

    server.child.kill('SIGTERM');
    await expectCleanExit(server);
    // The embedded PostgreSQL was stopped too: its pid file is gone.
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, 180_000);

  it('reuses the data on the next start without seeding again', async () => {
    const server = await start({ NODE_ENV: 'development', DATA_DIR: dataDir });
    await waitUntilReady(server);
    const banner = server.output();
    expect(banner).toContain('Using the existing data');
    expect(banner).toContain(`DATA_DIR=${dataDir} PORT=${new URL(server.baseUrl).port} npm run -s cli -- token create`);
    expect(banner).toContain('/demo/site-json/jwt-auth/v1/token');
    expect(banner).not.toMatch(/tfat_/);
    const response = await fetch(`${server.baseUrl}/demo/site-json/vendor/v2/channels`, { headers: { authorization: `Bearer ${apiToken}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toHaveLength(1);
    server.child.kill('SIGTERM');
    await expectCleanExit(server);
  }, 180_000);

  it('after a crash, the next server takes the orphaned database over and stops it on Ctrl-C', async () => {
    const crashed = await start({ NODE_ENV: 'development', DATA_DIR: dataDir });
    await waitUntilReady(crashed);
    crashed.child.kill('SIGKILL');
    await crashed.exited;
    const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
    expect(existsSync(pidFile)).toBe(true); // left running by the crash
    const next = await start({ NODE_ENV: 'development', DATA_DIR: dataDir });
    await waitUntilReady(next);
    next.child.kill('SIGINT');
    await expectCleanExit(next);
    expect(existsSync(pidFile)).toBe(false);
  }, 180_000);
});

describe('a port already in use', () => {
  it('exits 1 saying so and creates nothing, so the next start shows the one-time credentials', async () => {
    const { db, url } = await createTestDatabase();
    const blocker = createServer();
    try {
      const port = await freePort();
      await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
      const env = { NODE_ENV: 'development', DATABASE_URL: url, DATA_DIR: path.join(dataDir, 'port-in-use') };
      const refused = await start(env, port);
      const { code, stderr } = await refused.exited;
      expect(code).toBe(1);
      expect(stderr).toContain(`trustfare: cannot listen on 127.0.0.1:${port} (EADDRINUSE): another trustfare, or another server, listens there.`);
      expect(stderr).not.toContain('    at ');
      expect((await db.query('SELECT 1 FROM sites')).length).toBe(0);

      await new Promise<void>((resolve) => blocker.close(() => resolve()));
      const server = await start(env, port);
      await waitUntilReady(server);
      expect(server.output()).toMatch(/API token\s+tfat_\S+/);
      expect(server.output()).toMatch(/password\s+\S{16}/);
      server.child.kill('SIGTERM');
      await expectCleanExit(server);
    } finally {
      if (blocker.listening) blocker.close();
      await db.close();
    }
  }, 60_000);
});

describe('a port already in use, on the embedded database', () => {
  it('stops the PostgreSQL it started before exiting 1', async () => {
    const blocker = createServer();
    try {
      const port = await freePort();
      await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
      // Its own directory, as DATA_DIR itself: the app opens DATA_DIR (not its parents) to PostgreSQL's user.
      const embeddedDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-port-in-use-'));
      embeddedDirs.push(embeddedDir);
      const refused = await start({ NODE_ENV: 'development', DATA_DIR: embeddedDir }, port);
      const { code, stderr } = await refused.exited;
      expect(code).toBe(1);
      expect(stderr).toContain(`trustfare: cannot listen on 127.0.0.1:${port} (EADDRINUSE): another trustfare, or another server, listens there.`);
      // The cluster was made and started (initdb ran), and is stopped again: no pid file.
      expect(existsSync(path.join(embeddedDir, 'pg', 'PG_VERSION'))).toBe(true);
      expect(existsSync(path.join(embeddedDir, 'pg', 'postmaster.pid'))).toBe(false);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  }, 120_000);
});

describe('an address it cannot listen on', () => {
  // Each was reported as something else: a HOST no resolver knows as an unreachable PostgreSQL
  // ("Check DATABASE_URL"), an address of no interface as a raw listen stack.
  it('exits 1 naming HOST:PORT, the system\'s code and what to set, and creates nothing', async () => {
    const { db, url } = await createTestDatabase();
    try {
      const cases = [
        { host: 'nonexistent.invalid', says: /\((ENOTFOUND|EAI_AGAIN)\): HOST (is a name this machine cannot resolve|could not be resolved)/ },
        // TEST-NET-1 (RFC 5737): an address no interface of a test machine has.
        { host: '192.0.2.1', says: /\(EADDRNOTAVAIL\): HOST is not an address of this machine\. Set HOST to one of its addresses/ },
      ];
      for (const { host, says } of cases) {
        const port = await freePort();
        const server = await start({ NODE_ENV: 'development', HOST: host, DATABASE_URL: url, DATA_DIR: path.join(dataDir, 'cannot-listen') }, port);
        const { code, stderr } = await server.exited;
        expect(code, stderr).toBe(1);
        expect(stderr).toContain(`trustfare: cannot listen on ${host}:${port} (`);
        expect(stderr).toMatch(says);
        expect(stderr).not.toContain('PostgreSQL');
        expect(stderr).not.toContain('    at ');
      }
      expect((await db.query('SELECT 1 FROM sites')).length).toBe(0);
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe('a database that cannot be reached', () => {
  it('exits 1 with one line naming where it looked and what to check', async () => {
    const closedPort = await freePort();
    const server = await start({ NODE_ENV: 'development', DATABASE_URL: `postgres://postgres:pw-hunter2@127.0.0.1:${closedPort}/trustfare`, DATA_DIR: path.join(dataDir, 'unreachable') });
    const { code, stderr } = await server.exited;
    expect(code).toBe(1);
    expect(stderr).toContain(`trustfare: cannot reach PostgreSQL at 127.0.0.1:${closedPort} (ECONNREFUSED). Check DATABASE_URL`);
    expect(stderr).not.toContain('pw-hunter2');
    expect(stderr).not.toContain('    at ');
  }, 60_000);

  it('says why PostgreSQL refused it (here: no such database)', async () => {
    const { url } = await createTestDatabase();
    const missing = new URL(url);
    missing.pathname = '/trustfare_no_such_database';
    const server = await start({ NODE_ENV: 'development', DATABASE_URL: missing.toString(), DATA_DIR: path.join(dataDir, 'unreachable') });
    const { code, stderr } = await server.exited;
    expect(code).toBe(1);
    expect(stderr).toContain('trustfare: PostgreSQL refused the connection: database "trustfare_no_such_database" does not exist. Check DATABASE_URL.');
  }, 60_000);
});

describe('production', () => {
  // What production cannot start without: the four secrets and BASE_URL.
  const secrets = Object.fromEntries(['JWT_SECRET', 'CARD_KEYS', 'CARD_FINGERPRINT_KEY', 'SIGNING_SECRET', 'BASE_URL'].map((name) => [name, testEnv[name]!]));

  it('refuses to start without real secrets: message on stderr, exit code 1', async () => {
    const server = await start({ NODE_ENV: 'production', DATA_DIR: path.join(dataDir, 'production') });
    const { code, stderr } = await server.exited;
    expect(code).toBe(1);
    // That line alone: the operator reads the reason, not library notices around it.
    expect(stderr).toBe('trustfare: NODE_ENV=production requires JWT_SECRET, CARD_KEYS, CARD_FINGERPRINT_KEY, SIGNING_SECRET; refusing to start with generated keys\n');
    expect(existsSync(path.join(dataDir, 'production', 'dev-secrets.json'))).toBe(false);
  }, 60_000);

  it('never seeds, even on an empty database, and warns that live channels take no card payments on the sandbox', async () => {
    const { db, url } = await createTestDatabase();
    try {
      const server = await start({ NODE_ENV: 'production', DATABASE_URL: url, DATA_DIR: path.join(dataDir, 'production'), ...secrets });
      await waitUntilReady(server, { banner: false });
      expect(server.output()).not.toContain('trustfare is running');
      expect((await db.query('SELECT 1 FROM sites')).length).toBe(0);
      // Logged right after "listening"; the pipe may bring it a moment later.
      await vi.waitFor(() => expect(server.output()).toMatch(/"level":40,.*"msg":"no live payment processor is configured \(PROCESSOR=sandbox moves no money\)/), { timeout: 10_000 });
      // testEnv's BASE_URL is plain http on a public name.
      expect(server.output()).toMatch(/"level":40,.*"msg":"BASE_URL is http:\/\/trustfare.test, plain http: /);
      server.child.kill('SIGTERM');
      await expectCleanExit(server);
    } finally {
      await db.close();
    }
  }, 60_000);

  it('lets a payment waiting for the processor finish on SIGTERM, even one waiting longer than the grace period alone', async () => {
    const { db, url } = await createTestDatabase();
    try {
      const shop = await createSite(db, { role: 'member_admin' });
      // The processor timeout is above limits.shutdownGraceMs: the grace is counted beyond it.
      const server = await start({ NODE_ENV: 'production', DATABASE_URL: url, DATA_DIR: path.join(dataDir, 'production'), PROCESSOR_TIMEOUT_MS: String(limits.shutdownGraceMs + 1_000), SANDBOX_NO_ANSWER_MS: '60000', ...secrets });
      await waitUntilReady(server, { banner: false });
      const api = (rest: string, body: unknown) => fetch(`${server.baseUrl}/${shop.path}/site-json/vendor/v2/${rest}`, { method: 'POST', headers: { ...shop.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (response) => ({ status: response.status, json: await response.json() as Record<string, any> }));
      const channel = (await api('channels', { name: 'Tours', currencies: 'USD' })).json;
      const booking = (await api('bookings', { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 4_000, currencies: 'USD', countries: 'GB', channels: channel.id })).json;
      const payment = api('transactions', { transaction_types: 'purchase', channels: channel.id, currencies: 'USD', total: 4_000, token: 'tok_visa_no_answer', bookings: [{ id: booking.id, currencies: 'USD', total: 4_000 }] });
      await new Promise((resolve) => setTimeout(resolve, 500));
      server.child.kill('SIGTERM');
      expect(await payment).toMatchObject({ status: 201, json: { status: 'incomplete' } });
      await expectCleanExit(server);
    } finally {
      await db.close();
    }
  }, 60_000);

  it('stops taking requests at SIGTERM while a job batch is still running (a mail to a relay that never answers)', async () => {
    const { db, url } = await createTestDatabase();
    // A relay that accepts connections and never sends its greeting: the send hangs until the SMTP timeout.
    const relayConnections: number[] = [];
    const relay = createServer((socket) => relayConnections.push(Date.now()) && socket.on('error', () => undefined));
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    try {
      const shop = await createSite(db, { role: 'member_admin' });
      const relayPort = (relay.address() as { port: number }).port;
      const server = await start({ NODE_ENV: 'production', DATABASE_URL: url, DATA_DIR: path.join(dataDir, 'production'), SMTP_URL: `smtp://127.0.0.1:${relayPort}`, ...secrets });
      await waitUntilReady(server, { banner: false });
      const api = (rest: string, body: unknown) => fetch(`${server.baseUrl}/${shop.path}/site-json/vendor/v2/${rest}`, { method: 'POST', headers: { ...shop.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (response) => (await response.json()) as Record<string, any>);
      const channel = await api('channels', { name: 'Tours', currencies: 'USD', primary_mail: 'office@example.com' });
      const booking = await api('bookings', { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 4_000, currencies: 'USD', countries: 'GB', channels: channel.id });
      expect(await api('transactions', { transaction_types: 'purchase', channels: channel.id, currencies: 'USD', total: 4_000, token: 'tok_visa', bookings: [{ id: booking.id, currencies: 'USD', total: 4_000 }] })).toMatchObject({ status: 'complete' });
      // The mail job's batch is under way once the relay has its connection.
      await vi.waitFor(() => expect(relayConnections.length).toBeGreaterThan(0), { timeout: 20_000, interval: 50 });
      server.child.kill('SIGTERM');
      // Before session 29 the server went on answering until the batch ended (the SMTP timeout).
      await vi.waitFor(() => expect(fetch(`${server.baseUrl}/readyz`)).rejects.toThrow(), { timeout: 3_000, interval: 100 });
      expect(server.child.exitCode).toBeNull();
      server.child.kill('SIGKILL');
    } finally {
      relay.close();
      await db.close();
    }
  }, 60_000);

  it('warns at start when WORKERS may open more connections than the database allows, and starts all the same', async () => {
    const { db, url } = await createTestDatabase();
    try {
      // 8 × 13 + 1 = 105 connections; the test server allows 100 less its reserved slots.
      const server = await start({ NODE_ENV: 'production', WORKERS: '8', DATABASE_URL: url, DATA_DIR: path.join(dataDir, 'production'), ...secrets });
      const warningOf = () => server.output().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number; role?: string; msg: string })
        .find((line) => line.msg.startsWith('WORKERS=8 may open 105 connections to PostgreSQL'));
      // Logged by the primary before it forks the workers (eight starting workers take long on a busy machine: not awaited).
      await vi.waitFor(() => expect(warningOf()).toMatchObject({ level: 40, role: 'primary' }), { timeout: 30_000, interval: 50 });
      const warning = warningOf();
      expect(warning!.msg).toMatch(/Set WORKERS to [0-9] or fewer, raise max_connections by [0-9]+, or put PgBouncer in front/);
      server.child.kill('SIGTERM');
      await expectCleanExit(server);
    } finally {
      await db.close();
    }
  }, 60_000);

  it('stops workers that were still starting when SIGTERM came: each shuts down itself, none is killed', async () => {
    const { db, url } = await createTestDatabase();
    try {
      const server = await start({ NODE_ENV: 'production', WORKERS: '4', DATABASE_URL: url, DATA_DIR: path.join(dataDir, 'production'), ...secrets });
      // The first worker to listen answers; the others are still starting.
      await waitUntilReady(server, { banner: false });
      server.child.kill('SIGTERM');
      await expectCleanExit(server);
      const lines = server.output().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { pid: number; msg: string });
      expect(lines.filter((line) => line.msg === 'workers still running at the end of the grace period; killing them')).toEqual([]);
      const listening = new Set(lines.filter((line) => line.msg.startsWith('Server listening at')).map((line) => line.pid));
      const stopped = new Set(lines.filter((line) => line.msg === 'shutting down').map((line) => line.pid));
      // A worker the signal reached before it loaded anything ends without a word; every one that listened stops itself.
      for (const pid of listening) expect(stopped).toContain(pid);
    } finally {
      await db.close();
    }
  }, 60_000);
});
