import { divideDecimals, formatDecimal, isCurrencyCode, parseDecimal, type Decimal } from '../money.js';
import { limits } from '../../limits.js';
import type { QuoteInput } from './quotes.js';
import { isCalendarDay, isClockTime } from '../gmt.js';

/**
 * Rates files operators load with `trustfare rates set FILE`. Three formats, told apart by their
 * first character (docs/forex.md has examples):
 * - JSON: `{"base": "USD", "rates": {"EUR": "0.92"}, "expires": "..."}`, or an array of such
 *   objects and/or `{"base", "currency", "rate", "expires"}` rows;
 * - CSV: `base,currency,rate[,expires]` per line (an optional header line, `#` comments);
 * - ECB daily XML: `<Cube currency='USD' rate='1.0812'/>` against EUR; quotes are stored for
 *   every pair of the listed currencies (cross rates through EUR).
 * Expiry is `YYYY-MM-DD HH:MM:SS` GMT or ISO 8601 with a zone; without one a quote expires
 * `lifetimeHours` after loading. Rates are decimal text (JSON numbers are read as written).
 */
export type RatesFileFormat = 'json' | 'csv' | 'ecb';

export interface ParsedRatesFile {
  format: RatesFileFormat;
  quotes: QuoteInput[];
  /** Currencies in an ECB file the service does not handle (left out, not an error). */
  skipped: string[];
}

export class RatesFileError extends Error {
  override name = 'RatesFileError';
}

interface ParseOptions {
  now: Date;
  lifetimeHours: number;
}

export function parseRatesFile(text: string, options: ParseOptions): ParsedRatesFile {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed === '') throw new RatesFileError('the rates file is empty');
  const parsed = trimmed.startsWith('<') ? parseEcb(trimmed, options) : trimmed.startsWith('{') || trimmed.startsWith('[') ? parseJson(trimmed, options) : parseCsv(trimmed, options);
  if (parsed.quotes.length === 0) throw new RatesFileError('the rates file holds no rates');
  if (parsed.quotes.length > limits.rateQuotesPerLoadMax) throw new RatesFileError(`the rates file holds ${parsed.quotes.length} rates, more than ${limits.rateQuotesPerLoadMax}`);
  const seen = new Set<string>();
  for (const quote of parsed.quotes) {
    const pair = `${quote.base}/${quote.currency}`;
    if (seen.has(pair)) throw new RatesFileError(`the rate ${pair} appears twice`);
    seen.add(pair);
  }
  return parsed;
}

function parseJson(text: string, options: ParseOptions): ParsedRatesFile {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new RatesFileError(`invalid JSON: ${(error as Error).message}`);
  }
  const items = Array.isArray(document) ? document : [document];
  const quotes: QuoteInput[] = [];
  items.forEach((item, index) => {
    const where = Array.isArray(document) ? `item ${index}` : 'the document';
    if (typeof item !== 'object' || item === null) throw new RatesFileError(`${where} is not an object`);
    const record = item as Record<string, unknown>;
    if (typeof record.rates === 'object' && record.rates !== null) {
      for (const [currency, rate] of Object.entries(record.rates as Record<string, unknown>)) {
        quotes.push(quoteOf({ base: record.base, currency, rate, expires: record.expires }, `${where}, ${currency}`, options));
      }
    } else {
      quotes.push(quoteOf(record, where, options));
    }
  });
  return { format: 'json', quotes, skipped: [] };
}

function parseCsv(text: string, options: ParseOptions): ParsedRatesFile {
  const quotes: QuoteInput[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const content = line.trim();
    if (content === '' || content.startsWith('#')) return;
    const fields = content.split(',').map((field) => field.trim().replace(/^"(.*)"$/, '$1'));
    if (quotes.length === 0 && fields[0]?.toLowerCase() === 'base') return;
    if (fields.length < 3 || fields.length > 4) throw new RatesFileError(`line ${index + 1}: expected base,currency,rate[,expires]`);
    quotes.push(quoteOf({ base: fields[0], currency: fields[1], rate: fields[2], expires: fields[3] || undefined }, `line ${index + 1}`, options));
  });
  return { format: 'csv', quotes, skipped: [] };
}

const cubePattern = /<(?:[\w-]+:)?Cube\b([^>]*)>/g;
const attributePattern = /([\w-]+)\s*=\s*(['"])(.*?)\2/g;

function parseEcb(text: string, options: ParseOptions): ParsedRatesFile {
  const perEuro = new Map<string, Decimal>([['EUR', parseDecimal('1')]]);
  const skipped: string[] = [];
  let days = 0;
  for (const match of text.matchAll(cubePattern)) {
    const attributes = Object.fromEntries([...match[1]!.matchAll(attributePattern)].map((attribute) => [attribute[1]!, attribute[3]!]));
    // A history file lists several days, newest first: read the first day only.
    if (attributes.time !== undefined && ++days > 1) break;
    if (attributes.currency === undefined || attributes.rate === undefined) continue;
    if (!isCurrencyCode(attributes.currency)) {
      skipped.push(attributes.currency);
      continue;
    }
    // EUR is the anchor (1), and each currency appears once a day: a second value would replace
    // the first without a word (EUR's, every cross rate with it), where the CSV and JSON forms
    // refuse a rate given twice.
    if (attributes.currency === 'EUR') throw new RatesFileError('a <Cube> gives a rate for EUR, the currency the rates are per unit of');
    if (perEuro.has(attributes.currency)) throw new RatesFileError(`the rate of ${attributes.currency} appears twice in one day`);
    perEuro.set(attributes.currency, decimalOf(attributes.rate, `currency ${attributes.currency}`));
  }
  if (perEuro.size < 2) throw new RatesFileError('no <Cube currency=... rate=...> elements found');
  const expiresAt = new Date(options.now.getTime() + options.lifetimeHours * 3_600_000);
  const quotes: QuoteInput[] = [];
  for (const [base, baseRate] of perEuro) {
    for (const [currency, currencyRate] of perEuro) {
      if (base === currency) continue;
      quotes.push({ base, currency, rate: formatDecimal(divideDecimals(currencyRate, baseRate, limits.crossRateDecimalPlaces)), expiresAt });
    }
  }
  return { format: 'ecb', quotes, skipped };
}

function quoteOf(fields: { base?: unknown; currency?: unknown; rate?: unknown; expires?: unknown }, where: string, options: ParseOptions): QuoteInput {
  const base = currencyOf(fields.base, `${where}: base`);
  const currency = currencyOf(fields.currency, `${where}: currency`);
  if (base === currency) throw new RatesFileError(`${where}: base and currency are both ${base}`);
  if (typeof fields.rate !== 'string' && typeof fields.rate !== 'number') throw new RatesFileError(`${where}: rate is missing`);
  const rate = formatDecimal(decimalOf(String(fields.rate), where));
  return { base, currency, rate, expiresAt: expiresOf(fields.expires, where, options) };
}

function currencyOf(value: unknown, where: string): string {
  if (typeof value !== 'string' || !isCurrencyCode(value)) throw new RatesFileError(`${where} must be a supported ISO 4217 code, got ${JSON.stringify(value)}`);
  return value;
}

function decimalOf(text: string, where: string): Decimal {
  try {
    return parseDecimal(text);
  } catch {
    throw new RatesFileError(`${where}: rate must be a positive decimal number, got "${text}"`);
  }
}

const gmtPattern = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const isoPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Whether the written date and time exist as written: Date rolls 2027-02-30 over to March 2 and
 * takes 24:00 as the next day, so a typo would load a quote expiring at another time than meant.
 */
function isCalendarDateTime(text: string): boolean {
  const [year = 0, month = 0, day = 0, hours = 0, minutes = 0, seconds = 0] = (text.match(/\d+/g) ?? []).slice(0, 6).map(Number);
  return isCalendarDay(year, month, day) && isClockTime(hours, minutes, seconds);
}

function expiresOf(value: unknown, where: string, options: ParseOptions): Date {
  if (value === undefined || value === null || value === '') return new Date(options.now.getTime() + options.lifetimeHours * 3_600_000);
  if (typeof value !== 'string' || !(gmtPattern.test(value) || isoPattern.test(value))) {
    throw new RatesFileError(`${where}: expires must be "YYYY-MM-DD HH:MM:SS" (GMT) or ISO 8601 with a zone`);
  }
  const expiresAt = new Date(gmtPattern.test(value) ? `${value.replace(' ', 'T')}Z` : value);
  if (Number.isNaN(expiresAt.getTime()) || !isCalendarDateTime(value)) throw new RatesFileError(`${where}: expires ${value} is not a valid date and time`);
  if (expiresAt.getTime() <= options.now.getTime()) throw new RatesFileError(`${where}: expires ${value} is not in the future`);
  if (expiresAt.getTime() > options.now.getTime() + limits.rateLifetimeHoursMax * 3_600_000) {
    throw new RatesFileError(`${where}: expires ${value} is more than ${limits.rateLifetimeHoursMax} hours ahead`);
  }
  return expiresAt;
}
