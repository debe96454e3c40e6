import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDirForFile } from '../support/temp-dir.js';
import { createTestContext, testEnv, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { createChannel } from '../../src/domain/channels.js';
import { limits } from '../../src/limits.js';
import { createDb } from '../../src/storage/db.js';
import { cli } from './helpers.js';

const run = promisify(execFile);
let t: TestContext;
let url: string;
let site: SiteFixture;
let channelId: number;
const dir = tempDirForFile('cli');

beforeAll(async () => {
  t = await createTestContext();
  url = t.config.databaseUrl!;
  site = await createSite(t.db);
  channelId = (await createChannel(t.db, { siteId: site.siteId, name: 'Main', currency: 'USD' })).id;
});
afterAll(async () => t.close());

describe('channel set', () => {
  it('sets admin-only fields that the API shows', async () => {
    const result = await cli(url, [
      'channel', 'set', '--site', site.path, '--id', String(channelId), '--account-mode', 'live', '--channel-status', 'full-processing',
      '--account-type', 'protected-processing', '--settlement-currency', 'EUR', '--payout-minimum', '5000', '--descriptor', 'ACME TRAVEL',
      '--cardholder-present', 'true', '--server-to-server', 'false', '--statement-period', 'week', '--protection-type', 'vendor-management', '--beneficiary-id', 'BEN-1',
    ]);
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ id: channelId, account_mode: 'live', channel_status: 'full-processing', account_type: 'protected-processing', settlement_currency: 'EUR', payout_minimum: 5000, descriptor: 'ACME TRAVEL', cardholder_present: true, statement_period: 'week', protection_type: 'vendor-management', beneficiary_id: 'BEN-1' });
    const row = await t.db.one('SELECT account_mode, channel_status, payout_minimum, descriptor FROM channels WHERE id = $1', [channelId]);
    expect(row).toEqual({ account_mode: 'live', channel_status: 'full-processing', payout_minimum: 5000, descriptor: 'ACME TRAVEL' });
  });

  it('refuses unknown enum values, bad numbers and other sites’ channels, changing nothing', async () => {
    const other = await createSite(t.db);
    const cases: [string[], RegExp][] = [
      [['--account-mode', 'sleeping'], /--account-mode must be one of test, draft, live, closed, affiliate/],
      [['--channel-status', 'nope'], /--channel-status must be one of/],
      [['--settlement-currency', 'MXN'], /--settlement-currency must be one of/],
      [['--payout-minimum', '12.5'], /--payout-minimum must be whole minor units/],
      [['--cardholder-present', 'yes'], /true or false/],
      [['--descriptor', 'X'.repeat(23)], /at most 22/],
      [['--account-mode', 'closed', '--payout-minimum=-1'], /--payout-minimum must be whole/],
    ];
    for (const [extra, message] of cases) {
      const result = await cli(url, ['channel', 'set', '--site', site.path, '--id', String(channelId), ...extra]);
      expect(result.code, extra.join(' ')).toBe(1);
      expect(result.stderr, extra.join(' ')).toMatch(message);
    }
    const elsewhere = await cli(url, ['channel', 'set', '--site', other.path, '--id', String(channelId), '--account-mode', 'closed']);
    expect(elsewhere.stderr).toMatch(/no channel/);
    expect((await t.db.one('SELECT account_mode FROM channels WHERE id = $1', [channelId])).account_mode).toBe('live');
  });

  it('warns in production that a live channel takes no card payments, and sets the mode', async () => {
    const channel = (await createChannel(t.db, { siteId: site.siteId, name: 'Live', currency: 'USD' })).id;
    const production = { NODE_ENV: 'production' };
    const live = await cli(url, ['channel', 'set', '--site', site.path, '--id', String(channel), '--account-mode', 'live'], production);
    expect(live.code).toBe(0);
    expect(live.json.account_mode).toBe('live');
    expect(live.stderr).toMatch(new RegExp(`^trustfare channel set: warning: channel ${channel} is now live, but no live payment processor is configured`));
    // Back to test, or the same change in development: nothing to warn about.
    expect((await cli(url, ['channel', 'set', '--site', site.path, '--id', String(channel), '--account-mode', 'test'], production)).stderr).toBe('');
    expect((await cli(url, ['channel', 'set', '--site', site.path, '--id', String(channel), '--account-mode', 'live'])).stderr).toBe('');
  });

  it('warns when it moves a channel holding test money to a mode taking real cards, and sets the mode', async () => {
    const channel = (await createChannel(t.db, { siteId: site.siteId, name: 'Tested', currency: 'USD' })).id;
    const vault = await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/transactions`, headers: site.headers, payload: { transaction_types: 'vault', channels: channel, currencies: 'USD', total: 0, token: 'tok_visa' } });
    expect(vault.json().status).toBe('complete');
    const live = await cli(url, ['channel', 'set', '--site', site.path, '--id', String(channel), '--account-mode', 'live']);
    expect(live.code).toBe(0);
    expect(live.json.account_mode).toBe('live');
    expect(live.stderr).toMatch(new RegExp(`^trustfare channel set: warning: channel ${channel} holds test money or sandbox cards`));
    // A channel without money history moves without a word.
    const fresh = (await createChannel(t.db, { siteId: site.siteId, name: 'Fresh', currency: 'USD' })).id;
    expect((await cli(url, ['channel', 'set', '--site', site.path, '--id', String(fresh), '--account-mode', 'live'])).stderr).toBe('');
  });

  it('links suppliers to a channel (the RO `suppliers` the API shows), refuses unknown ones, clears with an empty value', async () => {
    await t.db.query("INSERT INTO suppliers (id, name, url, country, category) VALUES ('IT-55-TOU', 'Giro', '', 'IT', 'TOU'), ('ES-8-ACT', 'Ruta', '', 'ES', 'ACT')");
    const channel = (await createChannel(t.db, { siteId: site.siteId, name: 'With suppliers', currency: 'USD' })).id;
    const read = async () => (await t.app.inject({ method: 'GET', url: `/${site.path}/site-json/vendor/v2/channels/${channel}`, headers: site.headers })).json().suppliers;
    const set = (value: string) => cli(url, ['channel', 'set', '--site', site.path, '--id', String(channel), `--suppliers=${value}`]);

    const linked = await set('IT-55-TOU, ES-8-ACT,IT-55-TOU');
    expect(linked.code, linked.stderr).toBe(0);
    expect(linked.json.suppliers).toEqual(['ES-8-ACT', 'IT-55-TOU']);
    expect(await read()).toEqual(['ES-8-ACT', 'IT-55-TOU']);

    const unknown = await set('IT-55-TOU,GB-999-ACC');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/unknown supplier id\(s\): GB-999-ACC/);
    const malformed = await set('hotel');
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/--suppliers must be supplier ids such as GB-1042-ACC/);
    expect(await read()).toEqual(['ES-8-ACT', 'IT-55-TOU']);

    const replaced = await set('IT-55-TOU');
    expect(replaced.json.suppliers).toEqual(['IT-55-TOU']);
    expect((await set('')).json.suppliers).toEqual([]);
    expect(await read()).toEqual([]);
  });

  it('sets the quote_code the API shows, refuses control characters, clears it with an empty value', async () => {
    const read = async () => (await t.app.inject({ url: `/${site.path}/site-json/vendor/v2/channels/${channelId}`, headers: site.headers })).json().quote_code;
    const set = (value: string) => cli(url, ['channel', 'set', '--site', site.path, '--id', String(channelId), `--quote-code=${value}`]);
    const result = await set('Q-ACME-7');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.quote_code).toBe('Q-ACME-7');
    expect(await read()).toBe('Q-ACME-7');
    const refused = await set('Q\u0007');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--quote-code must be/);
    expect(await read()).toBe('Q-ACME-7');
    expect((await set('')).json.quote_code).toBe('');
    expect(await read()).toBe('');
  });

  it('clears the descriptor with an empty value', async () => {
    const result = await cli(url, ['channel', 'set', '--site', site.path, '--id', String(channelId), '--descriptor', '']);
    expect(result.json.descriptor).toBeNull();
  });
});

describe('suppliers import', () => {
  it('upserts a CSV file and reports counts and rejected rows', async () => {
    const file = path.join(dir, 'suppliers.csv');
    writeFileSync(file, [
      'id,name,url,country,category',
      'GB-1042-ACC,"Hotel Bristol, London",https://bristol.example,GB,ACC',
      'FR-7-AIR,Air Paris,,FR,AIR',
      'XX-1-ACC,Nowhere Inn,,XX,ACC',
      'GB-9-FOO,Odd,,GB,FOO',
      'GB-3-ACC,Mismatch,,FR,ACC',
      'GB-4-TOU,Bad URL,javascript:alert(1),GB,TOU',
      'FR-7-AIR,Air Paris again,,FR,AIR',
      '',
    ].join('\r\n'));
    const first = await cli(url, ['suppliers', 'import', file]);
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ rows: 7, inserted: 2, updated: 0, unchanged: 0, rejected_count: 5 });
    expect(first.json.rejected.map((row: { row: number }) => row.row)).toEqual([3, 4, 5, 6, 7]);
    expect(first.json.rejected[4].reason).toMatch(/duplicate of row 2/);
    const stored = await t.db.one("SELECT name, url, country, category FROM suppliers WHERE id = 'GB-1042-ACC'");
    expect(stored).toEqual({ name: 'Hotel Bristol, London', url: 'https://bristol.example', country: 'GB', category: 'ACC' });

    const json = path.join(dir, 'suppliers.json');
    writeFileSync(json, JSON.stringify([
      { id: 'GB-1042-ACC', name: 'Hotel Bristol', url: 'https://bristol.example', country: 'GB', category: 'ACC' },
      { id: 'FR-7-AIR', name: 'Air Paris', url: '', country: 'FR', category: 'AIR' },
      { id: 'US-55-CRU', name: 'Sea Line', country: 'US', category: 'CRU' },
      { id: 12, name: 'Number id', country: 'US', category: 'CRU' },
    ]));
    const second = await cli(url, ['suppliers', 'import', json]);
    expect(second.json).toMatchObject({ rows: 4, inserted: 1, updated: 1, unchanged: 1, rejected_count: 1 });
    expect((await t.db.one("SELECT name FROM suppliers WHERE id = 'GB-1042-ACC'")).name).toBe('Hotel Bristol');
  });

  it('refuses unreadable files with a clear message', async () => {
    const badHeader = path.join(dir, 'bad.csv');
    writeFileSync(badHeader, 'id,title\nGB-1-ACC,x\n');
    expect((await cli(url, ['suppliers', 'import', badHeader])).stderr).toMatch(/header must name id,name,url,country,category; missing name, url, country, category/);
    const badJson = path.join(dir, 'bad.json');
    writeFileSync(badJson, '[{"id": ');
    expect((await cli(url, ['suppliers', 'import', badJson])).stderr).toMatch(/invalid JSON/);
    const missing = await cli(url, ['suppliers', 'import', path.join(dir, 'missing.csv')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/ENOENT/);
    const noFile = await cli(url, ['suppliers', 'import']);
    expect([noFile.code, noFile.stderr]).toEqual([2, 'trustfare suppliers import: the FILE argument is required (`trustfare suppliers import --help` lists its options)']);
  });
});

describe('numbers in options', () => {
  it('are digits alone: 1e0, 0x1, 1.0 and " 1" are refused with the option named, not read as 1', async () => {
    for (const value of ['1e0', '0x1', '1.0', ' 1']) {
      const statement = await cli(url, ['statement', '--site', site.path, '--channel', value, '--from', '2026-01-01', '--to', '2026-01-02']);
      expect([statement.code, statement.stderr], value).toEqual([1, 'trustfare statement: --channel must be a channel id']);
      const deliver = await cli(url, ['mail', 'deliver', '--batch-size', value]);
      expect([deliver.code, deliver.stderr], value).toEqual([1, 'trustfare mail deliver: --batch-size must be an integer from 1 to 200']);
      const rotate = await cli(url, ['keys', 'rotate', '--batch-size', value]);
      expect([rotate.code, rotate.stderr], value).toEqual([1, 'trustfare keys rotate: --batch-size must be an integer from 1 to 10000']);
    }
  });
});

describe('a command whose statement runs longer than the API\'s statement timeout', () => {
  it('ledger verify waits it out and answers (on a large installation its scans take that long)', async () => {
    // A statement held up past the API's 10 s, as a full scan of a large ledger is: here by a lock.
    const holder = createDb(url, 1);
    try {
      const held = holder.transaction(async (tx) => {
        await tx.query('SET LOCAL statement_timeout = 0');
        await tx.query('LOCK TABLE ledger_entries IN ACCESS EXCLUSIVE MODE');
        await tx.query(`SELECT pg_sleep(${limits.dbStatementTimeoutMs / 1000 + 1})`);
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const result = await cli(url, ['ledger', 'verify']);
      await held;
      expect([result.code, result.stderr]).toEqual([0, '']);
      expect(result.json).toMatchObject({ ok: true });
    } finally {
      await holder.close();
    }
  }, 60_000);
});

describe('the installed binary', () => {
  it('runs `node bin/trustfare.mjs` against DATABASE_URL and prints JSON', async () => {
    const env = { ...process.env, ...testEnv, DATABASE_URL: url };
    const { stdout } = await run(process.execPath, ['bin/trustfare.mjs', 'site', 'create', '--path', 'spawned', '--name', 'Spawned Site'], { env });
    expect(JSON.parse(stdout)).toMatchObject({ path: 'spawned', name: 'Spawned Site' });
    const failure = await run(process.execPath, ['bin/trustfare.mjs', 'site', 'create', '--path', 'spawned', '--name', 'Again'], { env }).catch((error: { code: number; stderr: string }) => error);
    expect((failure as { code: number }).code).toBe(1);
    expect((failure as { stderr: string }).stderr).toContain('trustfare site create: site spawned already exists');
  }, 60_000);
});
