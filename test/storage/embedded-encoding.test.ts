// The embedded cluster holds text in UTF-8 whatever locale the machine's environment names
// (src/storage/embedded.ts initdbFlags): with LANG unset or C, initdb made a SQL_ASCII cluster,
// which keeps bytes without knowing characters: lengths, lower() and migration 042's NFC were wrong.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/storage/embedded.js';
import { tempDirForFile } from '../support/temp-dir.js';

const localeNames = ['LANG', 'LC_ALL', 'LC_CTYPE', 'LC_COLLATE'] as const;
const saved = Object.fromEntries(localeNames.map((name) => [name, process.env[name]]));
afterAll(() => {
  for (const name of localeNames) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe('the embedded cluster made under a C locale', () => {
  it('keeps its databases in UTF-8, so a name is as long as its characters', async () => {
    for (const name of localeNames) delete process.env[name];
    process.env.LANG = 'C';
    const embedded = await startEmbeddedPostgres(tempDirForFile('pg-encoding'));
    const client = new pg.Client({ connectionString: embedded.url });
    try {
      await client.connect();
      const row = (await client.query(`SELECT current_setting('server_encoding') AS encoding, length('Müller') AS length`)).rows[0];
      expect(row).toEqual({ encoding: 'UTF8', length: 6 });
    } finally {
      await client.end();
      await embedded.stop();
    }
  }, 120_000);
});
