import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testEnv } from '../support/context.js';
import { processAlive } from '../support/cluster.js';
import { childPids, freePort } from '../../bench/processes.js';

// One cluster, started like `npm start` with WORKERS=2 on the embedded PostgreSQL (from source
// through tsx, so no build is needed): the case where the primary must start the database once.
const root = path.resolve(import.meta.dirname, '../..');

interface Started {
  child: ChildProcess;
  port: number;
  dataDir: string;
  output: () => string;
  exit: Promise<number | null>;
}

let server: Started;

beforeAll(async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-cluster-'));
  const port = await freePort();
  const env = { ...process.env, ...testEnv, DATA_DIR: dataDir, PORT: String(port), WORKERS: '2', LOG_LEVEL: 'info', DATABASE_URL: '' };
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/server.ts')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  server = { child, port, dataDir, output: () => output, exit };
  await waitUntil(async () => (await get(port, '/readyz')).status === 200, 90_000, () => output);
}, 120_000);

afterAll(async () => {
  if (server.child.exitCode === null) server.child.kill('SIGKILL');
  rmSync(server.dataDir, { recursive: true, force: true });
});

describe('WORKERS=2', () => {
  it('starts one embedded PostgreSQL in the primary and serves requests from two worker processes', async () => {
    const primaryPid = server.child.pid!;
    expect(postmasters(server.dataDir)).toHaveLength(1);
    const workers = workerPids(primaryPid);
    expect(workers).toHaveLength(2);

    // A fresh connection per request: the primary hands connections to the workers in turn.
    // The second worker may start listening a moment after the first answered /readyz, so keep
    // asking (bounded) until both have answered; log lines travel through a pipe and may trail.
    await waitUntil(async () => {
      expect((await get(server.port, '/healthz')).status).toBe(200);
      return new Set(requestLogPids(server.output())).size >= 2;
    }, 30_000, server.output);
    const servingPids = new Set(requestLogPids(server.output()));
    expect([...servingPids].sort()).toEqual([...workers].sort());
  });

  it('replaces a worker that dies', async () => {
    const [victim] = workerPids(server.child.pid!);
    process.kill(victim!, 'SIGKILL');
    await waitUntil(async () => {
      const pids = workerPids(server.child.pid!);
      return pids.length === 2 && !pids.includes(victim!);
    }, 30_000, server.output);
    await waitUntil(async () => (await get(server.port, '/readyz')).status === 200, 30_000, server.output);
  });

  it('resets at once the connection a killed worker was being handed, instead of leaving its client waiting', async () => {
    // The worker is stopped, so the connection the primary hands it stays unanswered, as when a
    // worker dies (SIGKILL, the OOM killer) in the moment between being handed a connection and
    // taking it. The other connections go to the other worker.
    const [victim, other] = workerPids(server.child.pid!);
    process.kill(victim!, 'SIGSTOP');
    const outcomes: string[] = [];
    const clients = Array.from({ length: 6 }, () => rawGet(server.port, '/healthz').then((outcome) => outcomes.push(outcome)));
    await waitUntil(async () => outcomes.length === 5, 30_000, server.output);
    expect(outcomes).toEqual(Array(5).fill('HTTP/1.1 200 OK'));
    process.kill(victim!, 'SIGKILL');
    // Before the fix the sixth connection stayed open, unanswered, for as long as the client waited.
    await waitUntil(async () => outcomes.length === 6, 20_000, () => `outcomes ${JSON.stringify(outcomes)}\n${server.output()}`);
    await Promise.all(clients);
    expect(outcomes[5]).toBe('closed without an answer');
    await waitUntil(async () => workerPids(server.child.pid!).length === 2, 30_000, server.output);
    expect(workerPids(server.child.pid!)).toContain(other);
  });

  it('stops the workers, then the database, on SIGTERM and exits 0', async () => {
    const workers = workerPids(server.child.pid!);
    server.child.kill('SIGTERM');
    expect(await server.exit).toBe(0);
    for (const pid of workers) expect(processAlive(pid)).toBe(false);
    expect(existsSync(path.join(server.dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    expect(postmasters(server.dataDir)).toHaveLength(0);
  }, 30_000);
});

function workerPids(primaryPid: number): number[] {
  return childPids(primaryPid).filter((pid) => commandLine(pid).includes('src/server.ts'));
}

/** PostgreSQL server processes (postmasters) running on this data directory. */
function postmasters(dataDir: string): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number).filter((pid) => {
    const command = commandLine(pid);
    return /\/bin\/postgres\b/.test(command) && command.includes(dataDir);
  });
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Pids of the pino "request completed" lines (complete lines only: the last may be partial). */
function requestLogPids(output: string): number[] {
  const lines = output.split('\n').slice(0, -1);
  return lines.filter((line) => line.startsWith('{') && line.includes('"request completed"')).map((line) => (JSON.parse(line) as { pid: number }).pid);
}

function get(port: number, urlPath: string): Promise<{ status: number }> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
    });
    request.on('error', () => resolve({ status: 0 }));
  });
}

/** A GET on a fresh connection: the status line of its answer, or that the connection closed without one. */
function rawGet(port: number, urlPath: string): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(received === '' ? 'closed without an answer' : received.split('\r\n')[0]!));
  });
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`timed out; server output:\n${output().slice(-3000)}`);
}

describe('WORKERS=2 on a port already in use', () => {
  it('exits 1 saying so, and seeds nothing', async () => {
    const { db, url } = await createTestDatabase();
    const blocker = http.createServer();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-cluster-busy-'));
    try {
      const port = await freePort();
      await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
      const env = { ...process.env, ...testEnv, NODE_ENV: 'development', DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), WORKERS: '2', DATABASE_URL: url };
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/server.ts')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      // 'close': the worker's message is complete only once the pipes have closed.
      const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
      expect(code).toBe(1);
      expect(output).toContain(`cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
      expect(output).not.toContain('API token');
      expect((await db.query('SELECT 1 FROM sites')).length).toBe(0);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
