/**
 * Money is an integer count of minor units of one currency, never a float. This module is the
 * only place that knows how many decimals a currency has and how amounts are shown.
 */
declare const centsBrand: unique symbol;
export type Cents = number & { readonly [centsBrand]: true };

export function cents(value: number): Cents {
  if (!Number.isSafeInteger(value)) throw new Error(`money must be an integer count of minor units, got ${value}`);
  return value as Cents;
}

// ISO 4217 minor units that differ from the usual 2.
const zeroDecimal = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
const threeDecimal = new Set(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND']);

export function minorUnitDigits(currency: string): 0 | 2 | 3 {
  if (zeroDecimal.has(currency)) return 0;
  if (threeDecimal.has(currency)) return 3;
  return 2;
}

/** Formats minor units for people, e.g. `formatMoney(123456, 'EUR', 'de-DE')` → `1.234,56 €`. */
export function formatMoney(amount: Cents | number, currency: string, locale = 'en-GB'): string {
  const digits = minorUnitDigits(currency);
  return new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(amount / 10 ** digits);
}

/** ISO 4217 codes the service accepts as a channel or payment currency. */
export const currencyCodes = [
  'AED', 'ARS', 'AUD', 'BHD', 'BRL', 'CAD', 'CHF', 'CLP', 'CNY', 'COP', 'CZK', 'DKK', 'EUR', 'FJD', 'GBP', 'HKD', 'HUF', 'IDR', 'ILS', 'INR',
  'ISK', 'JOD', 'JPY', 'KRW', 'KWD', 'KZT', 'MXN', 'MYR', 'NOK', 'NZD', 'OMR', 'PEN', 'PHP', 'PLN', 'RON', 'RUB', 'SAR', 'SEK', 'SGD', 'THB',
  'TND', 'TRY', 'TWD', 'UAH', 'USD', 'UZS', 'VND', 'ZAR',
] as const;
export type CurrencyCode = (typeof currencyCodes)[number];

export function isCurrencyCode(value: string): value is CurrencyCode {
  return (currencyCodes as readonly string[]).includes(value);
}
