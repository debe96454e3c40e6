import type { AppContext } from '../../context.js';
import type { Queryable } from '../../storage/db.js';
import { cents, convertExact, type Cents } from '../money.js';
import { limits } from '../../limits.js';
import { gmtDateTime } from '../gmt.js';
import { isTestMode } from '../channels.js';
import { currencySymbolOf } from './symbols.js';
import { isOffered, offeredCurrencies } from './offered.js';
import type { RateQuote } from './quotes.js';

export type ForexRefusalReason = 'not_offered' | 'no_rate' | 'expired' | 'wrong_total' | 'above_maximum';

/**
 * An expected refusal of a forex payment, always naming the currency; the route maps it to a
 * 400 on `param` (`currencies`, or `total` when the total is not the converted booking total).
 */
export class ForexRefusal extends Error {
  constructor(
    readonly reason: ForexRefusalReason,
    readonly currency: string,
    message: string,
    readonly param: 'currencies' | 'total' = reason === 'wrong_total' || reason === 'above_maximum' ? 'total' : 'currencies',
  ) {
    super(message);
    this.name = 'ForexRefusal';
  }
}

/** The channel facts forex needs. */
export interface ForexChannel {
  currency: string;
  accountMode: string;
}



/** Refuses a missing or expired quote with a message naming the currency. */
export function requireUsableQuote(options: { quote: RateQuote | undefined; base: string; currency: string; now: Date }): RateQuote {
  const { quote, base, currency } = options;
  if (!quote) throw new ForexRefusal('no_rate', currency, `No exchange rate from ${base} to ${currency} is available.`);
  if (quote.expiresAt.getTime() <= options.now.getTime()) {
    throw new ForexRefusal('expired', currency, `The exchange rate from ${base} to ${currency} (quote ${quote.quoteId}) expired at ${gmtDateTime(quote.expiresAt)} GMT.`);
  }
  return quote;
}

/**
 * The quote a payment in `currency` on `channel` uses now. Refuses a currency not offered for the
 * channel, a pair without a rate, and an expired quote.
 */
export async function currentQuote(context: Pick<AppContext, 'rates' | 'now'>, db: Queryable, options: { channel: ForexChannel; currency: string }): Promise<RateQuote> {
  const { channel, currency } = options;
  if (!isOffered({ channelCurrency: channel.currency, currency })) {
    throw new ForexRefusal('not_offered', currency, `${currency} is not offered for payments on a ${channel.currency} channel.`);
  }
  const now = context.now();
  const quotes = await context.rates.quotes(db, { base: channel.currency, currencies: [currency], now, testMode: isTestMode(channel.accountMode) });
  return requireUsableQuote({ quote: quotes.get(currency), base: channel.currency, currency, now });
}

/**
 * Converts a channel-currency amount into the paid currency at a quote, refusing an expired one,
 * and an amount whose conversion is above limits.amountCentsMax: no `total` above it is accepted,
 * so such a payment could never be sent (and far enough above, the conversion left exact integers).
 */
export function convertAtQuote(options: { amount: number; quote: RateQuote; now: Date }): Cents {
  const quote = requireUsableQuote({ quote: options.quote, base: options.quote.base, currency: options.quote.currency, now: options.now });
  const converted = convertExact({ amount: options.amount, from: quote.base, to: quote.currency, rate: quote.rate });
  if (converted > BigInt(limits.amountCentsMax)) {
    throw new ForexRefusal(
      'above_maximum',
      quote.currency,
      `The bookings' ${options.amount} ${quote.base} are ${converted} ${quote.currency} at the rate ${quote.rate}, more than the largest total one payment takes, ${limits.amountCentsMax} ${quote.currency}: pay the bookings in several payments, or in ${quote.base}.`,
    );
  }
  return cents(Number(converted));
}

/** One entry of `forex_feed.rates` (wire names). */
export interface ForexFeedRate {
  symbol: string;
  quote_id: number;
  rate: number;
  provider: string;
  /** GMT `YYYY-MM-DD HH:MM:SS`. */
  expires: string;
  modified: string;
}

/**
 * The `rates` object of a channel's `forex_feed`: every offered currency other than the base that
 * has a usable (unexpired) quote now, keyed by currency code.
 */
export async function channelRates(context: Pick<AppContext, 'rates' | 'now' | 'db'>, channel: ForexChannel): Promise<Record<string, ForexFeedRate>> {
  const now = context.now();
  const currencies = offeredCurrencies(channel.currency).filter((currency) => currency !== channel.currency);
  const quotes = await context.rates.quotes(context.db, { base: channel.currency, currencies, now, testMode: isTestMode(channel.accountMode) });
  const rates: Record<string, ForexFeedRate> = {};
  for (const currency of currencies) {
    const quote = quotes.get(currency);
    if (!quote || quote.expiresAt.getTime() <= now.getTime()) continue;
    rates[currency] = {
      symbol: currencySymbolOf(currency).grapheme,
      quote_id: quote.quoteId,
      rate: Number(quote.rate),
      provider: quote.provider,
      expires: gmtDateTime(quote.expiresAt),
      modified: gmtDateTime(quote.modifiedAt),
    };
  }
  return rates;
}

/**
 * `channelRates` for many channels in one request (a channel list): channels sharing a currency
 * and mode share one look-up.
 */
export function channelRatesLoader(context: Pick<AppContext, 'rates' | 'now' | 'db'>): (channel: ForexChannel) => Promise<Record<string, ForexFeedRate>> {
  const loaded = new Map<string, Promise<Record<string, ForexFeedRate>>>();
  return (channel) => {
    const key = `${channel.currency}:${isTestMode(channel.accountMode)}`;
    let rates = loaded.get(key);
    if (!rates) {
      rates = channelRates(context, channel);
      loaded.set(key, rates);
    }
    return rates;
  };
}
