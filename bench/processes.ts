// Child processes of the bench: the service (`node dist/server.js`) and the ceiling server,
// each with its output in a log file, plus what /proc tells about them.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Child {
  pid: number;
  process: ChildProcess;
  logFile: string;
  /** SIGTERM, then wait for the exit; SIGKILL after `graceMs`. Resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
  exited: Promise<number | null>;
}

export function startChild(command: string, args: string[], options: { env: Record<string, string | undefined>; cwd: string; logFile: string }): Child {
  const log = openSync(options.logFile, 'a');
  const child = spawn(command, args, { cwd: options.cwd, env: options.env as NodeJS.ProcessEnv, stdio: ['ignore', log, log] });
  closeSync(log);
  if (!child.pid) throw new Error(`could not start ${command} ${args.join(' ')}`);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  return {
    pid: child.pid,
    process: child,
    logFile: options.logFile,
    exited,
    async stop(graceMs = 15_000) {
      if (exitCode !== undefined) return exitCode;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
  };
}

/** Polls `url` until it answers 200; returns the milliseconds since `startedAtMs`. */
export async function waitForOk(url: string, options: { startedAtMs: number; timeoutMs: number; child?: Child }): Promise<number> {
  let exited = false;
  void options.child?.exited.then(() => (exited = true));
  while (performance.now() - options.startedAtMs < options.timeoutMs) {
    if (exited) throw new Error(`${url}: the process exited before it was ready (see ${options.child?.logFile})`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - options.startedAtMs;
    } catch {
      // not listening yet
    }
    await sleep(10);
  }
  throw new Error(`${url} not ready after ${options.timeoutMs} ms${options.child ? ` (see ${options.child.logFile})` : ''}`);
}

/** Resident set size of a process in bytes (VmRSS in /proc/<pid>/status). */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

/** Direct children of a process (the cluster workers of a primary). */
export function childPids(pid: number): number[] {
  const file = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

export function commandLine(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
}

export { freePort } from '../src/net.js';

export function tail(file: string, lines = 20): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}
