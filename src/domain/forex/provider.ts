import type { Queryable } from '../../storage/db.js';
import { latestLoadedQuotes, sandboxDayQuotes, type RateQuote } from './quotes.js';
import { sandboxRate } from './sandbox.js';

export interface QuoteRequest {
  /** The channel currency: quotes say how many units of each currency buy one unit of it. */
  base: string;
  currencies: readonly string[];
  now: Date;
  /** Whether the channel is a test (or draft) channel; only those get sandbox rates. */
  testMode: boolean;
}

/**
 * A source of rate quotes. It returns the quote it would use for each currency it knows,
 * expired ones included (the caller refuses those, naming the currency), and leaves out the
 * currencies it has nothing for. A live market feed would be one more implementation.
 */
export interface RatesProvider {
  readonly name: string;
  quotes(db: Queryable, request: QuoteRequest): Promise<Map<string, RateQuote>>;
}

/** Quotes loaded by operators with `trustfare rates set` (JSON, CSV or ECB XML files). */
export function fileRatesProvider(): RatesProvider {
  return {
    name: 'file',
    quotes: (db, request) => latestLoadedQuotes(db, { base: request.base, currencies: request.currencies }),
  };
}

/** The fixed sandbox table (sandbox.ts), for test channels only. */
export function sandboxRatesProvider(): RatesProvider {
  return {
    name: 'sandbox',
    async quotes(db, request) {
      if (!request.testMode) return new Map();
      const rates = new Map<string, string>();
      for (const currency of request.currencies) {
        const rate = currency === request.base ? undefined : sandboxRate({ base: request.base, currency });
        if (rate !== undefined) rates.set(currency, rate);
      }
      return sandboxDayQuotes(db, { base: request.base, rates, now: request.now });
    },
  };
}

/**
 * Asks each provider in order for the currencies still without a quote: the first provider
 * that knows a currency wins, even when its quote has expired (an operator's expired rate is
 * never silently replaced by sandbox numbers).
 */
export function layeredRatesProvider(providers: readonly RatesProvider[]): RatesProvider {
  return {
    name: providers.map((provider) => provider.name).join('+'),
    async quotes(db, request) {
      const found = new Map<string, RateQuote>();
      for (const provider of providers) {
        const missing = request.currencies.filter((currency) => !found.has(currency));
        if (missing.length === 0) break;
        for (const [currency, quote] of await provider.quotes(db, { ...request, currencies: missing })) found.set(currency, quote);
      }
      return found;
    },
  };
}

/** The service's default: operator-loaded quotes first, then the sandbox for test channels. */
export function createRatesProvider(): RatesProvider {
  return layeredRatesProvider([fileRatesProvider(), sandboxRatesProvider()]);
}
