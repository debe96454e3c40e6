import { formatDecimal, parseDecimal } from '../money.js';
import type { Queryable } from '../../storage/db.js';

/** One stored rate: `rate` units of `currency` buy one unit of `base` until `expiresAt`. */
export interface RateQuote {
  quoteId: number;
  base: string;
  currency: string;
  /** Canonical decimal text (never a float), e.g. `0.9234`. */
  rate: string;
  provider: string;
  expiresAt: Date;
  modifiedAt: Date;
}

export interface QuoteInput {
  base: string;
  currency: string;
  rate: string;
  expiresAt: Date;
}

/** The provider name the sandbox writes under; operators cannot load quotes with it. */
export const sandboxProviderName = 'sandbox';

interface QuoteRow {
  [column: string]: unknown;
  id: number;
  base: string;
  currency: string;
  rate: string;
  provider: string;
  expires_at: Date;
  modified_at: Date;
}

const quoteColumns = 'id, base, currency, rate::text AS rate, provider, expires_at, modified_at';

function quoteFromRow(row: QuoteRow): RateQuote {
  return {
    quoteId: row.id,
    base: row.base,
    currency: row.currency,
    rate: formatDecimal(parseDecimal(row.rate)),
    provider: row.provider,
    expiresAt: row.expires_at,
    modifiedAt: row.modified_at,
  };
}

/** Stores quotes in one statement; rows are never updated afterwards. */
export async function insertQuotes(db: Queryable, options: { provider: string; quotes: readonly QuoteInput[]; now: Date }): Promise<RateQuote[]> {
  if (options.quotes.length === 0) return [];
  const rows = await db.query<QuoteRow>(
    `INSERT INTO rate_quotes (base, currency, rate, provider, expires_at, modified_at)
     SELECT base, currency, rate::numeric, $4, expires_at, $6
       FROM unnest($1::text[], $2::text[], $3::text[], $5::timestamptz[]) AS q(base, currency, rate, expires_at)
     RETURNING ${quoteColumns}`,
    [
      options.quotes.map((quote) => quote.base),
      options.quotes.map((quote) => quote.currency),
      options.quotes.map((quote) => quote.rate),
      options.provider,
      options.quotes.map((quote) => quote.expiresAt),
      options.now,
    ],
  );
  return rows.map(quoteFromRow);
}

/** The newest operator-loaded quote of `base` for each of `currencies` (expired ones included). */
export async function latestLoadedQuotes(db: Queryable, options: { base: string; currencies: readonly string[] }): Promise<Map<string, RateQuote>> {
  const rows = await db.query<QuoteRow>(
    `SELECT DISTINCT ON (currency) ${quoteColumns}
       FROM rate_quotes
      WHERE base = $1 AND currency = ANY($2::text[]) AND provider <> '${sandboxProviderName}'
      ORDER BY currency, id DESC`,
    [options.base, options.currencies],
  );
  return new Map(rows.map((row) => [row.currency, quoteFromRow(row)]));
}

/**
 * The sandbox's quotes for the GMT day of `now`: created on first use (one row per pair and day,
 * valid until the next GMT midnight) so each has a stable quote_id.
 */
export async function sandboxDayQuotes(db: Queryable, options: { base: string; rates: ReadonlyMap<string, string>; now: Date }): Promise<Map<string, RateQuote>> {
  if (options.rates.size === 0) return new Map();
  const dayStart = new Date(Date.UTC(options.now.getUTCFullYear(), options.now.getUTCMonth(), options.now.getUTCDate()));
  const dayEnd = new Date(dayStart.getTime() + 24 * 60 * 60 * 1000);
  const currencies = [...options.rates.keys()];
  await db.query(
    `INSERT INTO rate_quotes (base, currency, rate, provider, expires_at, modified_at)
     SELECT $1, currency, rate::numeric, '${sandboxProviderName}', $4, $5
       FROM unnest($2::text[], $3::text[]) AS q(currency, rate)
     ON CONFLICT (base, currency, modified_at) WHERE provider = '${sandboxProviderName}' DO NOTHING`,
    [options.base, currencies, currencies.map((currency) => options.rates.get(currency)), dayEnd, dayStart],
  );
  const rows = await db.query<QuoteRow>(
    `SELECT ${quoteColumns} FROM rate_quotes
      WHERE provider = '${sandboxProviderName}' AND base = $1 AND currency = ANY($2::text[]) AND modified_at = $3`,
    [options.base, currencies, dayStart],
  );
  return new Map(rows.map((row) => [row.currency, quoteFromRow(row)]));
}

export async function loadQuote(db: Queryable, quoteId: number): Promise<RateQuote | undefined> {
  const row = await db.maybeOne<QuoteRow>(`SELECT ${quoteColumns} FROM rate_quotes WHERE id = $1`, [quoteId]);
  return row ? quoteFromRow(row) : undefined;
}
