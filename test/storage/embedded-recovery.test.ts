// What a crash or a killed first start leaves in DATA_DIR, and a pid reused since: the next start
// must recover without touching other processes (src/storage/embedded.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/storage/embedded.js';
import { tempDirForFile } from '../support/temp-dir.js';
import { answers } from '../support/cluster.js';

const dataDir = tempDirForFile('pg-recovery');
const clusterDir = path.join(dataDir, 'pg');
const pidFile = path.join(clusterDir, 'postmaster.pid');
const bystanders: ChildProcess[] = [];
afterAll(() => {
  for (const child of bystanders) child.kill('SIGKILL');
});

/** Another process of the machine, which must come to no harm; whether it is still running. */
function bystander(): { pid: number; alive: () => boolean } {
  const child = spawn('sleep', ['120'], { stdio: 'ignore' });
  bystanders.push(child);
  return { pid: child.pid!, alive: () => child.exitCode === null && child.signalCode === null };
}

describe('the embedded cluster after a crash', () => {
  it('a postmaster.pid naming a pid another process has since been given: starts, and that process is left alone', async () => {
    const first = await startEmbeddedPostgres(dataDir);
    await first.stop();
    const other = bystander();
    // As a crash leaves it, the pid since reused: pid, directory, start time, port, ...
    writeFileSync(pidFile, `${other.pid}\n${clusterDir}\n1700000000\n1\n`);
    const next = await startEmbeddedPostgres(dataDir);
    expect(await answers(next.url)).toBe(true);
    await next.stop();
    expect(existsSync(pidFile)).toBe(false);
    expect(other.alive()).toBe(true);
  }, 120_000);

  it('a registration of a user whose pid another process has since been given does not keep the cluster running', async () => {
    const other = bystander();
    mkdirSync(path.join(dataDir, 'pg-users'), { recursive: true });
    writeFileSync(path.join(dataDir, 'pg-users', `${other.pid}-1-1`), '');
    const user = await startEmbeddedPostgres(dataDir);
    const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    await user.stop();
    expect(existsSync(pidFile)).toBe(false);
    expect(() => process.kill(postmaster, 0)).toThrow();
    expect(readdirSync(path.join(dataDir, 'pg-users'))).toEqual([]);
    expect(other.alive()).toBe(true);
  }, 120_000);
});

describe('the embedded cluster after a first start killed during initdb', () => {
  it('makes the cluster again, where every later start failed ("database postgres does not exist")', async () => {
    const fresh = tempDirForFile('pg-initdb-killed');
    // What initdb leaves when killed part-way: PG_VERSION written, the rest missing.
    mkdirSync(path.join(fresh, 'pg', 'base'), { recursive: true });
    writeFileSync(path.join(fresh, 'pg', 'PG_VERSION'), '18\n');
    writeFileSync(path.join(fresh, 'pg-initdb-unfinished'), '');
    const started = await startEmbeddedPostgres(fresh);
    try {
      expect(await answers(started.url)).toBe(true);
      expect(existsSync(path.join(fresh, 'pg-initdb-unfinished'))).toBe(false);
      expect(existsSync(path.join(fresh, 'pg-init'))).toBe(false);
    } finally {
      await started.stop();
    }
  }, 120_000);
});
