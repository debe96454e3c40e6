import type { AppContext } from '../../context.js';
import type { Queryable } from '../../storage/db.js';
import { formatDecimal, parseDecimal } from '../money.js';
import { convertAtQuote, currentQuote, ForexRefusal, type ForexChannel } from './forex.js';

/**
 * Forex on transactions (docs/forex.md). The cardholder pays `total` in `currencies`; the
 * bookings and the ledger are in the channel currency. A new payment uses the current quote of
 * the pair; a capture, void or refund uses its linked transaction's quote and rate (the
 * original rate), converted cumulatively so the parts of a transaction add up to its whole.
 */

/** The forex facts of one transaction. */
export interface ForexTerms {
  quoteId: number;
  /** Canonical decimal text: units of the paid currency per unit of the channel currency. */
  rate: string;
  channelCurrency: string;
  /** The bookings' total, in the channel currency (what the ledger moves). */
  channelTotal: number;
  paidCurrency: string;
  paidTotal: number;
}

/** The forex columns of a stored transaction (null without forex). */
export interface StoredForex {
  forexQuoteId: number | null;
  forexRate: string | null;
  channelCurrency: string | null;
  channelTotal: number | null;
}

interface ForexRow {
  [column: string]: unknown;
  forex_quote_id: number | null;
  forex_rate: string | null;
  channel_currency: string | null;
  channel_total: number | null;
}

export async function loadStoredForex(db: Queryable, transactionId: number): Promise<StoredForex> {
  const row = await db.one<ForexRow>('SELECT forex_quote_id, forex_rate::text AS forex_rate, channel_currency, channel_total FROM transactions WHERE id = $1', [transactionId]);
  return {
    forexQuoteId: row.forex_quote_id,
    forexRate: row.forex_rate === null ? null : formatDecimal(parseDecimal(row.forex_rate)),
    channelCurrency: row.channel_currency?.trim() ?? null,
    channelTotal: row.channel_total,
  };
}


function wrongTotal(options: { currency: string; expected: number; channelAmount: number; channelCurrency: string; rate: string }): ForexRefusal {
  return new ForexRefusal(
    'wrong_total',
    options.currency,
    `The total must be ${options.expected} ${options.currency}: the bookings' ${options.channelAmount} ${options.channelCurrency} at the rate ${options.rate}.`,
  );
}

/**
 * Forex terms of a new payment paying `total` in `currency` for bookings worth `channelAmount`
 * on `channel`, or null when the currency is the channel's. (Captures, voids, refunds and
 * chargebacks of a forex payment take its original rate: src/domain/transactions/forex-parts.ts.)
 * Refuses an unoffered currency, a missing or expired quote
 * and a total that is not the converted booking total, naming the expected total.
 */
export async function forexTermsFor(
  context: Pick<AppContext, 'rates' | 'now'>,
  db: Queryable,
  options: { channel: ForexChannel; currency: string; total: number; channelAmount: number },
): Promise<ForexTerms | null> {
  const { channel, currency, total, channelAmount } = options;
  if (currency === channel.currency) return null;
  const quote = await currentQuote(context, db, { channel, currency });
  const expected = convertAtQuote({ amount: channelAmount, quote, now: context.now() });
  if (expected !== total) throw wrongTotal({ currency, expected, channelAmount, channelCurrency: channel.currency, rate: quote.rate });
  return { quoteId: quote.quoteId, rate: quote.rate, channelCurrency: channel.currency, channelTotal: channelAmount, paidCurrency: currency, paidTotal: total };
}

/** Stores the terms on the transaction row, in the caller's database transaction. */
export async function recordForexTerms(tx: Queryable, transactionId: number, terms: ForexTerms | null): Promise<void> {
  if (!terms) return;
  await tx.query('UPDATE transactions SET forex_quote_id = $2, forex_rate = $3::numeric, channel_currency = $4, channel_total = $5 WHERE id = $1', [
    transactionId, terms.quoteId, terms.rate, terms.channelCurrency, terms.channelTotal,
  ]);
}

/**
 * `forex`, `forex_id` and `forex_rate` of the Transaction object. `forex` holds one item: the
 * channel-currency side of the payment, `{currencies, total, rate, quote_id}`.
 */
export function forexJson(stored: StoredForex): { forex: { currencies: string; total: number; rate: number; quote_id: number }[]; forex_id: number | null; forex_rate: string | null } {
  if (stored.forexRate === null) return { forex: [], forex_id: null, forex_rate: null };
  return {
    forex: [{ currencies: stored.channelCurrency!, total: stored.channelTotal!, rate: Number(stored.forexRate), quote_id: stored.forexQuoteId! }],
    forex_id: stored.forexQuoteId,
    forex_rate: stored.forexRate,
  };
}
