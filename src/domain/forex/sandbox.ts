import { divideDecimals, formatDecimal, parseDecimal, type CurrencyCode } from '../money.js';
import { limits } from '../../limits.js';

/**
 * The sandbox provider's fixed table: units of each currency per one US dollar. Test channels get
 * these rates (and cross rates derived from them) every day, so integrators can compute expected
 * totals in advance; docs/forex.md prints the table. They are round, plausible numbers, not
 * market data.
 */
export const sandboxUnitsPerUsd: Record<CurrencyCode, string> = {
  AED: '3.6725', ARS: '900', AUD: '1.5', BHD: '0.376', BRL: '5', CAD: '1.35', CHF: '0.9', CLP: '900', CNY: '7.2', COP: '4000',
  CZK: '23', DKK: '6.9', EUR: '0.92', FJD: '2.25', GBP: '0.79', HKD: '7.8', HUF: '360', IDR: '15500', ILS: '3.7', INR: '83',
  ISK: '138', JOD: '0.709', JPY: '150', KRW: '1350', KWD: '0.307', KZT: '450', MXN: '17', MYR: '4.7', NOK: '10.5', NZD: '1.65',
  OMR: '0.385', PEN: '3.75', PHP: '56', PLN: '4', RON: '4.6', RUB: '92', SAR: '3.75', SEK: '10.5', SGD: '1.35', THB: '36',
  TND: '3.1', TRY: '32', TWD: '32', UAH: '39', USD: '1', UZS: '12500', VND: '25000', ZAR: '18.5',
};

/**
 * Units of `currency` per one unit of `base` in the sandbox: the ratio of the two USD rates,
 * rounded half-up to `limits.crossRateDecimalPlaces` places; undefined for a currency outside
 * the table.
 */
export function sandboxRate(options: { base: string; currency: string }): string | undefined {
  const table = sandboxUnitsPerUsd as Record<string, string | undefined>;
  const base = table[options.base];
  const currency = table[options.currency];
  if (base === undefined || currency === undefined) return undefined;
  return formatDecimal(divideDecimals(parseDecimal(currency), parseDecimal(base), limits.crossRateDecimalPlaces));
}
