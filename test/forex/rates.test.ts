import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDirForFile } from '../support/temp-dir.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite } from '../support/fixtures.js';
import { createChannel } from '../../src/domain/channels.js';
import { commands as rateCommands } from '../../src/cli/commands/rates.js';
import { channelRates, convertAtQuote, currentQuote, ForexRefusal, offeredForUsdAndMxn, sandboxRate } from '../../src/domain/forex/index.js';
import type { AppContext } from '../../src/context.js';

let t: TestContext;
let clock = new Date('2026-11-21T10:00:00Z');
const dir = tempDirForFile('rates');
const setRates = rateCommands.find((command) => command.name === 'rates set')!;

function file(name: string, text: string): string {
  const target = path.join(dir, name);
  writeFileSync(target, text);
  return target;
}

async function load(name: string, text: string, options: Record<string, string> = {}) {
  return setRates.run(t.context, options, [file(name, text)]) as Promise<{ loaded: number; provider: string; format: string; quote_ids: { first: number; last: number } }>;
}

beforeAll(async () => {
  t = await createTestContext({ now: () => clock });
});
afterAll(async () => t.close());

const ecb = `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
  <Cube>
    <Cube time='2026-11-20'>
      <Cube currency='USD' rate='1.0812'/>
      <Cube currency='JPY' rate='162.45'/>
      <Cube currency='BGN' rate='1.9558'/>
      <Cube currency='GBP' rate='0.8563'/>
    </Cube>
  </Cube>
</gesmes:Envelope>`;

describe('rates set', () => {
  it('loads an ECB file with cross rates for every base and skips unknown currencies', async () => {
    const result = (await load('ecb.xml', ecb)) as unknown as { loaded: number; provider: string; skipped: string[]; bases: string[] };
    expect(result.provider).toBe('ecb');
    expect(result.skipped).toEqual(['BGN']);
    expect(result.bases).toEqual(['EUR', 'GBP', 'JPY', 'USD']);
    expect(result.loaded).toBe(12);
    const site = await createSite(t.db);
    const live = await createChannel(t.db, { siteId: site.siteId, name: 'Live USD', currency: 'USD' });
    await t.db.query("UPDATE channels SET account_mode = 'live' WHERE id = $1", [live.id]);
    const rates = await channelRates(t.context, { currency: 'USD', accountMode: 'live' });
    // 0.8563 / 1.0812, 12 places, half-up
    expect(rates.GBP).toMatchObject({ rate: 0.791990381058, provider: 'ecb', symbol: '£', expires: '2026-11-22 10:00:00', modified: '2026-11-21 10:00:00' });
    expect(rates.EUR!.rate).toBe(0.924898261191);
    // A live channel has no rates but the loaded ones.
    expect(Object.keys(rates).sort()).toEqual(['EUR', 'GBP', 'JPY']);
    const eurRates = await channelRates(t.context, { currency: 'EUR', accountMode: 'live' });
    expect(eurRates.USD!.rate).toBe(1.0812);
  });

  it('loads CSV and JSON; the newest quote of a pair wins and keeps its own quote_id', async () => {
    const csv = await load('rates.csv', 'base,currency,rate,expires\nUSD,EUR,0.9234,2026-11-21 12:00:00\nUSD,KWD,0.30712\n', { provider: 'manual' });
    expect(csv).toMatchObject({ loaded: 2, provider: 'manual', format: 'csv' });
    const json = await load('rates.json', JSON.stringify({ base: 'USD', rates: { CHF: '0.8811', SEK: 10.4 } }), { 'expires-hours': '2' });
    expect(json).toMatchObject({ loaded: 2, provider: 'file', format: 'json' });
    const rates = await channelRates(t.context, { currency: 'USD', accountMode: 'live' });
    expect(rates.EUR).toMatchObject({ rate: 0.9234, provider: 'manual', quote_id: csv.quote_ids.first, expires: '2026-11-21 12:00:00' });
    expect(rates.CHF).toMatchObject({ rate: 0.8811, expires: '2026-11-21 12:00:00' });
    expect(rates.SEK!.rate).toBe(10.4);
    // KWD is not offered for USD channels, so the feed leaves it out even with a quote.
    expect(rates.KWD).toBeUndefined();
  });

  it('refuses malformed files with a message naming the place, and stores nothing', async () => {
    const before = await t.db.one<{ count: number }>('SELECT count(*)::bigint AS count FROM rate_quotes');
    await expect(load('bad.csv', 'USD,EUR,abc\n')).rejects.toThrow(/line 1: rate must be a positive decimal/);
    await expect(load('bad2.csv', 'USD,XXX,1.2\n')).rejects.toThrow(/line 1: currency must be a supported ISO 4217 code/);
    await expect(load('bad3.json', '[{"base":"USD","currency":"EUR","rate":"0.9","expires":"2020-01-01 00:00:00"}]')).rejects.toThrow(/not in the future/);
    await expect(load('dup.csv', 'USD,EUR,1\nUSD,EUR,2\n')).rejects.toThrow(/appears twice/);
    // An ECB file giving a currency twice, or a rate for EUR (its anchor, 1), is refused likewise.
    await expect(load('dup.xml', ecb.replace(`<Cube currency='GBP' rate='0.8563'/>`, `<Cube currency='GBP' rate='0.8563'/><Cube currency='USD' rate='2.5'/>`))).rejects.toThrow(/the rate of USD appears twice in one day/);
    await expect(load('eur.xml', ecb.replace(`<Cube currency='GBP' rate='0.8563'/>`, `<Cube currency='GBP' rate='0.8563'/><Cube currency='EUR' rate='2'/>`))).rejects.toThrow(/a rate for EUR/);
    // A date that does not exist is refused, not rolled over to another one (Feb 30 → Mar 2).
    await expect(load('feb30.csv', 'USD,EUR,0.9,2026-11-30 24:00:00\n')).rejects.toThrow(/line 1: expires 2026-11-30 24:00:00 is not a valid date and time/);
    await expect(load('feb30.json', '[{"base":"USD","currency":"EUR","rate":"0.9","expires":"2027-02-30T10:00:00+01:00"}]')).rejects.toThrow(/is not a valid date and time/);
    await expect(load('ok.csv', 'USD,EUR,1\n', { provider: 'sandbox' })).rejects.toThrow(/--provider/);
    const after = await t.db.one<{ count: number }>('SELECT count(*)::bigint AS count FROM rate_quotes');
    expect(after.count).toBe(before.count);
  });

  it('refuses an expired quote with an error naming the currency', async () => {
    const context: AppContext = { ...t.context, now: () => new Date('2026-11-21T12:30:00Z') };
    const channel = { currency: 'USD', accountMode: 'live' };
    const error = await currentQuote(context, t.db, { channel, currency: 'EUR' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ForexRefusal);
    expect((error as ForexRefusal).reason).toBe('expired');
    expect((error as ForexRefusal).message).toMatch(/USD to EUR .* expired at 2026-11-21 12:00:00 GMT/);
    // Even a test channel is not silently given sandbox numbers for a pair the operator quoted.
    await expect(currentQuote(context, t.db, { channel: { currency: 'USD', accountMode: 'test' }, currency: 'EUR' })).rejects.toThrow(/EUR/);
    // convertAtQuote refuses it too.
    const quote = await currentQuote(t.context, t.db, { channel, currency: 'EUR' });
    expect(convertAtQuote({ amount: 10000, quote, now: clock })).toBe(9234);
    expect(() => convertAtQuote({ amount: 10000, quote, now: new Date('2026-11-21T13:00:00Z') })).toThrow(/EUR/);
    // A currency without any quote on a live channel, and one not offered at all.
    await expect(currentQuote(context, t.db, { channel, currency: 'BRL' })).rejects.toThrow(/No exchange rate from USD to BRL/);
    await expect(currentQuote(context, t.db, { channel, currency: 'KWD' })).rejects.toThrow(/KWD is not offered/);
  });
});

describe('sandbox provider', () => {
  it('gives test channels every offered currency at the documented table, stable within a GMT day', async () => {
    const rates = await channelRates(t.context, { currency: 'MXN', accountMode: 'test' });
    expect(Object.keys(rates).sort()).toEqual(offeredForUsdAndMxn.filter((currency) => currency !== 'MXN'));
    expect(rates.USD).toMatchObject({ provider: 'sandbox', rate: Number(sandboxRate({ base: 'MXN', currency: 'USD' })), expires: '2026-11-22 00:00:00', modified: '2026-11-21 00:00:00' });
    expect(rates.ILS!.symbol).toBe('₪');
    const again = await channelRates({ ...t.context, now: () => new Date('2026-11-21T23:59:59Z') }, { currency: 'MXN', accountMode: 'test' });
    expect(again.USD!.quote_id).toBe(rates.USD!.quote_id);
    const nextDay = await channelRates({ ...t.context, now: () => new Date('2026-11-22T00:00:01Z') }, { currency: 'MXN', accountMode: 'test' });
    expect(nextDay.USD!.quote_id).not.toBe(rates.USD!.quote_id);
    expect(nextDay.USD!.rate).toBe(rates.USD!.rate);
    // A KWD channel (3 decimals) offers the list; sandbox USD→KWD is the table's 0.307.
    const kwd = await channelRates(t.context, { currency: 'KWD', accountMode: 'test' });
    expect(kwd.USD!.rate).toBe(Number(sandboxRate({ base: 'KWD', currency: 'USD' })));
    expect(sandboxRate({ base: 'USD', currency: 'KWD' })).toBe('0.307');
    expect(sandboxRate({ base: 'USD', currency: 'EUR' })).toBe('0.92');
  });

  it('gives draft channels none of its numbers: a draft channel takes real cards, so it pays at loaded rates only', async () => {
    const rates = await channelRates(t.context, { currency: 'MXN', accountMode: 'draft' });
    expect(Object.values(rates).filter((rate) => rate.provider === 'sandbox')).toEqual([]);
    await expect(currentQuote(t.context, t.db, { channel: { currency: 'MXN', accountMode: 'draft' }, currency: 'ILS' })).rejects.toThrow('No exchange rate from MXN to ILS is available.');
  });
});
