import type { AppContext } from '../../context.js';
import { isTestMode } from '../channels.js';
import { convertAtQuote, ForexRefusal, offeredCurrencies, requireUsableQuote, type ForexChannel } from '../forex/index.js';
import { formatMoney } from '../money.js';

/**
 * The currencies a payment request page offers for an amount due: the channel currency first,
 * then every offered currency with a usable quote now, each with the amount converted by
 * `convertAtQuote` (money.ts `convert`, half-up): the very function the payments core checks a
 * forex `total` with (forex.md), so the amount shown is the amount the core accepts, never a
 * second computation. The page sends the amount it showed; if the quote changed in between, the
 * core refuses it (400 on `total`) and the page shows the new amounts from here.
 */
export interface PaymentCurrencyOption {
  currency: string;
  /** Minor units of `currency`: what the page sends as `total`. */
  amount: number;
  formatted: string;
  /** Units of `currency` per unit of the channel currency (decimal text); null for the channel currency. */
  rate: string | null;
  quote_id: number | null;
}

export async function paymentCurrencyOptions(
  context: Pick<AppContext, 'rates' | 'now' | 'db'>,
  options: { channel: ForexChannel; amount: number; locale: string },
): Promise<PaymentCurrencyOption[]> {
  const { channel, amount, locale } = options;
  const now = context.now();
  const result: PaymentCurrencyOption[] = [{ currency: channel.currency, amount, formatted: formatMoney(amount, channel.currency, locale), rate: null, quote_id: null }];
  const currencies = offeredCurrencies(channel.currency).filter((currency) => currency !== channel.currency);
  const quotes = await context.rates.quotes(context.db, { base: channel.currency, currencies, now, testMode: isTestMode(channel.accountMode) });
  for (const currency of currencies) {
    try {
      const quote = requireUsableQuote({ quote: quotes.get(currency), base: channel.currency, currency, now });
      const converted = convertAtQuote({ amount, quote, now });
      result.push({ currency, amount: converted, formatted: formatMoney(converted, currency, locale), rate: quote.rate, quote_id: quote.quoteId });
    } catch (error) {
      // No usable rate for this currency now: it is simply not offered.
      if (!(error instanceof ForexRefusal)) throw error;
    }
  }
  return result;
}
