import { openSync, readSync, closeSync, fstatSync } from 'node:fs';
import type { Command } from '../command.js';
import { required } from '../command.js';
import { limits } from '../../limits.js';
import { gmtDateTime } from '../../domain/gmt.js';
import { isCurrencyCode } from '../../domain/money.js';
import { insertQuotes, latestLoadedQuotes, offeredCurrencies, parseRatesFile, sandboxProviderName } from '../../domain/forex/index.js';
import { currencyCodes } from '../../domain/money.js';

const providerPattern = /^[a-z0-9][a-z0-9_.-]{0,39}$/;

/** Reads at most `limits.rateFileBytesMax` bytes; a larger file is refused, not truncated. */
function readRatesFile(file: string): string {
  const descriptor = openSync(file, 'r');
  try {
    const size = fstatSync(descriptor).size;
    if (size > limits.rateFileBytesMax) throw new Error(`${file} is ${size} bytes, more than ${limits.rateFileBytesMax}`);
    const buffer = Buffer.alloc(size);
    readSync(descriptor, buffer, 0, size, 0);
    return buffer.toString('utf8');
  } finally {
    closeSync(descriptor);
  }
}

function lifetimeHoursOf(value: string | boolean | undefined): number {
  if (value === undefined) return limits.rateLifetimeHoursDefault;
  const hours = Number(value);
  if (typeof value !== 'string' || !/^\d+(\.\d+)?$/.test(value) || hours <= 0 || hours > limits.rateLifetimeHoursMax) {
    throw new Error(`--expires-hours must be a number of hours above 0 and at most ${limits.rateLifetimeHoursMax}`);
  }
  return hours;
}

const setRates: Command = {
  name: 'rates set',
  summary: 'load forex rates from a JSON, CSV or ECB XML file',
  options: { provider: { type: 'string' }, 'expires-hours': { type: 'string' } },
  positionals: 1,
  async run(context, options, positionals) {
    const file = positionals[0]!; // runCli refuses a command line without it (Command.positionals)
    const now = context.now();
    const parsed = parseRatesFile(readRatesFile(file), { now, lifetimeHours: lifetimeHoursOf(options['expires-hours']) });
    const provider = typeof options.provider === 'string' ? options.provider : parsed.format === 'ecb' ? 'ecb' : 'file';
    if (!providerPattern.test(provider) || provider === sandboxProviderName) {
      throw new Error(`--provider must match ${providerPattern.source} and not be "${sandboxProviderName}"`);
    }
    const stored = await context.db.transaction((tx) => insertQuotes(tx, { provider, quotes: parsed.quotes, now }));
    const ids = stored.map((quote) => quote.quoteId);
    return {
      provider,
      format: parsed.format,
      loaded: stored.length,
      quote_ids: { first: Math.min(...ids), last: Math.max(...ids) },
      bases: [...new Set(stored.map((quote) => quote.base))].sort(),
      currencies: [...new Set(stored.map((quote) => quote.currency))].sort(),
      skipped: parsed.skipped,
      modified: gmtDateTime(now),
    };
  },
};

const listRates: Command = {
  name: 'rates list',
  summary: 'show the current loaded quote of each currency for a base currency',
  options: { base: { type: 'string' } },
  required: ['base'],
  async run(context, options) {
    const base = required(options, 'base');
    if (!isCurrencyCode(base)) throw new Error(`--base must be one of ${currencyCodes.join(', ')}`);
    const now = context.now();
    const currencies = [...new Set([...offeredCurrencies(base), ...currencyCodes])].filter((currency) => currency !== base);
    const quotes = await latestLoadedQuotes(context.db, { base, currencies });
    return Object.fromEntries(
      [...quotes.values()]
        .sort((a, b) => a.currency.localeCompare(b.currency))
        .map((quote) => [
          quote.currency,
          { quote_id: quote.quoteId, rate: quote.rate, provider: quote.provider, expires: gmtDateTime(quote.expiresAt), modified: gmtDateTime(quote.modifiedAt), expired: quote.expiresAt <= now },
        ]),
    );
  },
};

export const commands: Command[] = [setRates, listRates];
