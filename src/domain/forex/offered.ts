import type { CurrencyCode } from '../money.js';

/** The spec's "Payment currencies offered for bookings in USD and MXN", verbatim. */
export const offeredForUsdAndMxn: readonly CurrencyCode[] = [
  'AED', 'ARS', 'AUD', 'BRL', 'CAD', 'CHF', 'CLP', 'CNY', 'COP', 'DKK', 'EUR', 'FJD', 'GBP', 'HKD', 'ILS', 'INR', 'ISK', 'JPY', 'KRW', 'MXN',
  'NOK', 'NZD', 'PEN', 'RUB', 'SEK', 'SGD', 'THB', 'TRY', 'USD', 'ZAR',
];

/**
 * Currencies a cardholder may pay in on a channel with base `channelCurrency`, always including
 * the channel currency itself. The spec lists them for USD and MXN channels; every other channel
 * currency offers the same list plus itself (docs/forex.md), so a KWD channel offers KWD and the
 * thirty, and a EUR channel the thirty.
 */
export function offeredCurrencies(channelCurrency: string): readonly string[] {
  if (offeredForUsdAndMxn.includes(channelCurrency as CurrencyCode)) return offeredForUsdAndMxn;
  return [channelCurrency, ...offeredForUsdAndMxn];
}

export function isOffered(options: { channelCurrency: string; currency: string }): boolean {
  return offeredCurrencies(options.channelCurrency).includes(options.currency);
}
