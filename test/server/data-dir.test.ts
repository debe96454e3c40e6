import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { killServers, spawnServer } from '../support/server-process.js';

// A start that cannot write in DATA_DIR (development secrets, the embedded PostgreSQL's password
// and cluster): one line naming the directory, the system's code and what to do, exit 1. Each
// printed a stack trace (ENOTDIR at mkdir, ENOSPC at write, EACCES, initdb's own error).
const scratch = mkdtempSync(path.join(os.tmpdir(), 'trustfare-data-dir-'));
// The embedded PostgreSQL runs as its own account when the tests run as root: it passes through.
chmodSync(scratch, 0o711);
const mounts: string[] = [];

afterAll(() => {
  killServers();
  for (const mount of mounts) execFileSync('umount', [mount]);
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs the server with DATA_DIR `dataDir` (the test secrets, or none: `generated`) to its exit. */
async function startIn(dataDir: string, options: { generated?: boolean; uid?: number } = {}) {
  const noSecrets = { JWT_SECRET: '', CARD_KEYS: '', CARD_FINGERPRINT_KEY: '', SIGNING_SECRET: '' };
  const server = await spawnServer({ DATA_DIR: dataDir, ...(options.generated ? noSecrets : {}) }, options.uid === undefined ? {} : { uid: options.uid, gid: options.uid });
  const code = await server.exited;
  return { code, output: server.output() };
}

function expectOneLine(started: { code: number | null; output: string }, dataDir: string, cause: string) {
  expect(started.code, started.output).toBe(1);
  const lines = started.output.split('\n').filter((line) => line !== '' && !line.includes('TrustfareWarning') && !line.includes('--trace-warnings'));
  expect(lines).toEqual([expect.stringMatching(new RegExp(`^trustfare: cannot write in DATA_DIR ${dataDir} \\(${cause}[,)].*: .*DATA_DIR.*\\.$`))]);
  expect(started.output).not.toMatch(/^\s+at /m);
}

// A small file system of the test's own (root only): full, or too small for initdb.
function tmpfs(name: string, size: string): string | null {
  const dir = path.join(scratch, name);
  mkdirSync(dir);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    return null;
  }
  mounts.push(dir);
  return dir;
}

describe('a DATA_DIR the server cannot write in', () => {
  it('under a file (ENOTDIR): for the development secrets and for the embedded PostgreSQL', async () => {
    writeFileSync(path.join(scratch, 'a-file'), '');
    const dataDir = path.join(scratch, 'a-file', 'data');
    expectOneLine(await startIn(dataDir, { generated: true }), dataDir, 'ENOTDIR');
    expectOneLine(await startIn(dataDir), dataDir, 'ENOTDIR');
  }, 60_000);

  it.skipIf(process.getuid?.() !== 0)('owned by another account (EACCES)', async () => {
    const parent = path.join(scratch, 'root-only');
    mkdirSync(parent, { mode: 0o755 });
    const dataDir = path.join(parent, 'data');
    expectOneLine(await startIn(dataDir, { uid: 65534 }), dataDir, 'EACCES');
  }, 60_000);

  it('on a full disk (ENOSPC): writing the secrets, and PostgreSQL initialising its cluster', async (context) => {
    const full = tmpfs('full', '64k');
    const small = tmpfs('small', '8m');
    if (!full || !small) return context.skip();
    execFileSync('dd', ['if=/dev/zero', `of=${path.join(full, 'filler')}`, 'bs=1k', 'count=64'], { stdio: 'ignore' });
    expectOneLine(await startIn(path.join(full, 'data'), { generated: true }), path.join(full, 'data'), 'ENOSPC');
    // Room for the password file, not for the cluster: initdb fails on its WAL.
    expectOneLine(await startIn(path.join(small, 'data')), path.join(small, 'data'), 'ENOSPC');
  }, 90_000);

  it('on a disk that filled up and has room again: the next start serves (the full disk left an empty lock file, which held every later start for 2 minutes and failed it)', async (context) => {
    const disk = tmpfs('refilled', '80m');
    if (!disk) return context.skip();
    const dataDir = path.join(disk, 'data');
    const first = await spawnServer({ DATA_DIR: dataDir });
    await vi.waitFor(async () => expect((await fetch(`${first.baseUrl}/readyz`)).status).toBe(200), { timeout: 60_000, interval: 100 });
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const filler = path.join(disk, 'filler');
    // dd fails once the disk is full, as it is meant to.
    spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M', 'count=100'], { stdio: 'ignore' });
    expect((await startIn(dataDir)).code).toBe(1);

    rmSync(filler);
    const next = await spawnServer({ DATA_DIR: dataDir });
    await vi.waitFor(async () => expect((await fetch(`${next.baseUrl}/readyz`)).status).toBe(200), { timeout: 60_000, interval: 100 });
    next.child.kill('SIGTERM');
    expect(await next.exited).toBe(0);
  }, 180_000);

  // With WORKERS=2 each worker reaches the primary's cluster through DATABASE_URL, as it would an external one.
  it.for(['1', '2'])('filling up under a running server (WORKERS=%s): /readyz 503 while the embedded PostgreSQL has no room to write (it said ready while every booking and payment failed), 200 once there is room again', { timeout: 120_000 }, async (workers, context) => {
    const disk = tmpfs(`filling-${workers}`, '80m');
    if (!disk) return context.skip();
    const server = await spawnServer({ DATA_DIR: path.join(disk, 'data'), WORKERS: workers });
    await vi.waitFor(async () => expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200), { timeout: 60_000, interval: 100 });
    // Every worker asked: the primary hands connections out in turn.
    const probes = async (url: string) => {
      const answers = [];
      for (let index = 0; index < 4; index++) {
        const response = await fetch(`${server.baseUrl}${url}`, { headers: { connection: 'close' } });
        answers.push([response.status, await response.json()]);
      }
      return answers;
    };
    const filler = path.join(disk, 'filler');
    // dd fails once the disk is full, as it is meant to.
    spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M', 'count=100'], { stdio: 'ignore' });
    expect(await probes('/readyz')).toEqual(Array(4).fill([503, { status: 'disk_full' }]));
    // Alive all the same: the process is not restarted for it.
    expect(await probes('/healthz')).toEqual(Array(4).fill([200, { status: 'ok' }]));

    rmSync(filler);
    expect(await probes('/readyz')).toEqual(Array(4).fill([200, { status: 'ready' }]));
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it.skipIf(process.getuid?.() !== 0)('that the embedded PostgreSQL cannot reach (its account, postgres, may not pass a directory above it)', async () => {
    const closed = path.join(scratch, 'closed');
    mkdirSync(closed, { mode: 0o700 });
    const dataDir = path.join(closed, 'data');
    const started = await startIn(dataDir);
    expectOneLine(started, dataDir, 'EACCES');
    expect(started.output).toMatch(/the account PostgreSQL runs as .* \(chmod o\+x\)/);
  }, 60_000);
});
