import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { testEnv } from './context.js';
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
    ...account,
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, baseUrl: `http://127.0.0.1:${port}`, output: () => output, exited };
}

/** For afterAll: kills every server spawned here that still runs. */
export function killServers(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
