import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/net.js';

// `npm start` as `docker stop`, systemd or `kill <pid>` stop it: SIGTERM to npm alone, not to its
// process group (Ctrl-C in a terminal signals the whole group, which hid this). npm passes the
// signal to the script's process: when that was a shell running `build && node dist/server.js`,
// the shell died and the server, with its embedded PostgreSQL, ran on, holding the port.
const root = path.resolve(import.meta.dirname, '../..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-npm-start-'));
let npm: ChildProcess | undefined;

afterAll(() => {
  // The whole group (npm, the server, PostgreSQL), whatever the test left running.
  if (npm?.pid) {
    try {
      process.kill(-npm.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
});

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => (socket.destroy(), resolve(true)));
    socket.on('error', () => resolve(false));
  });

async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe('npm start', () => {
  it('passes SIGTERM on to the server: it stops, frees its port and stops its embedded PostgreSQL', async () => {
    const port = await freePort();
    npm = spawn('npm', ['start'], {
      cwd: root,
      // Its own process group, as a container's PID 1 is: the signal below reaches npm alone.
      detached: true,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', HOST: '127.0.0.1', PORT: String(port), NODE_ENV: 'development', DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout!.on('data', (chunk) => (output += chunk));
    npm.stderr!.on('data', (chunk) => (output += chunk));
    // 'exit', not 'close': a server left running would hold the pipes open.
    const exited = new Promise<void>((resolve) => npm!.on('exit', () => resolve()));
    expect(await within(120_000, async () => output.includes('trustfare is running') && (await listening(port))), output).toBe(true);
    npm.kill('SIGTERM');
    await exited;
    expect(await within(30_000, async () => !(await listening(port))), `port ${port} still served after npm exited`).toBe(true);
    expect(await within(30_000, async () => !existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))), 'the embedded PostgreSQL still runs').toBe(true);
  }, 200_000);
});
