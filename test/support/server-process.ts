import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { expect, vi } from 'vitest';
import { testEnv } from './context.js';
import type { SiteFixture } from './fixtures.js';
import { freePort } from '../../src/net.js';

const root = path.resolve(import.meta.dirname, '../..');
const children: ChildProcess[] = [];

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything it wrote so far, stdout and stderr together (JSON log lines at LOG_LEVEL info). */
  output(): string;
  /** Its exit code, once its pipes have closed. */
  exited: Promise<number | null>;
}

/**
 * `node dist/server.js` on a free port with the test secrets, `env` over them; not awaited to
 * listen. `as`: another account's uid and gid. `openFilesMax`: its open-file limit (prlimit).
 */
export async function spawnServer(env: Record<string, string>, as: { uid?: number; gid?: number; openFilesMax?: number } = {}): Promise<ServerProcess> {
  const port = await freePort();
  const { openFilesMax, ...account } = as;
  const command = openFilesMax === undefined ? [process.execPath] : ['prlimit', `--nofile=${openFilesMax}:${openFilesMax}`, process.execPath];
  const child = spawn(command[0]!, [...command.slice(1), 'dist/server.js'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', HOST: '127.0.0.1', PORT: String(port), ...testEnv, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so killServers takes its embedded PostgreSQL with it (below).
    detached: true,
    ...account,
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, baseUrl: `http://127.0.0.1:${port}`, output: () => output, exited };
}

/**
 * For afterAll: kills every server spawned here with its process group, also once the server
 * itself is gone (a test killed it): the embedded PostgreSQL it started lives on once the server
 * alone is killed (a tmpfs data directory then cannot be unmounted, and the postmaster runs until
 * the machine stops).
 */
export function killServers(): void {
  for (const child of children) {
    if (child.pid === undefined) continue;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // ESRCH: nothing of the group is left.
    }
  }
}

/** spawnServer, awaited until /readyz answers 200. */
export async function startReadyServer(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer(env);
  await vi.waitFor(async () => expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200), { timeout: 30_000, interval: 50 });
  return server;
}

export interface ApiAnswer {
  status: number;
  headers: Record<string, string>;
  json: any;
}

/** Calls the site's API on a server process over a real socket; an answer that is not JSON is kept as text. */
export function siteApi(baseUrl: string, shop: SiteFixture) {
  return async (method: string, rest: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer> => {
    const response = await fetch(`${baseUrl}/${shop.path}/site-json/vendor/v2/${rest}`, {
      method, headers: { ...shop.headers, ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      // Not JSON: kept as text, which a test's assertions refuse.
    }
    return { status: response.status, headers: Object.fromEntries(response.headers), json };
  };
}
