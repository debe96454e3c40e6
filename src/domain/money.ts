/**
 * Money is an integer count of minor units of one currency, never a float. This module is the
 * only place that knows how many decimals a currency has and how amounts are shown.
 */
import { numberFormat } from '../i18n/formatters.js';
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
  return numberFormat(locale, { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(amount / 10 ** digits);
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

// ---------------------------------------------------------------------------------------------
// Exact arithmetic for conversion, percentages and pro-rata splits. Everything below works on
// bigint and decimal text, never on floats, so a rate read from a file converts the same way on
// every machine. The ONE rounding rule of the service: half-up (half away from zero) to the
// minor unit of the target currency.

/** A positive decimal `units / 10^scale`, e.g. `1.0812` → `{ units: 10812n, scale: 4 }`. */
export interface Decimal {
  units: bigint;
  scale: number;
}

/** Longest accepted decimal text (digits, point and exponent) for a rate. */
const decimalTextLengthMax = 40;
const decimalPattern = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d{1,2}))?$/;

/**
 * Parses a rate written as decimal text (`"0.9234"`, `"150"`, `"1e-7"`) exactly. Refuses zero,
 * negatives and anything that is not a plain decimal, with a RangeError naming the text.
 */
export function parseDecimal(text: string): Decimal {
  const trimmed = text.trim();
  const match = trimmed.length <= decimalTextLengthMax ? decimalPattern.exec(trimmed) : null;
  if (!match) throw new RangeError(`"${text}" is not a positive decimal number`);
  const fraction = match[2] ?? '';
  let units = BigInt(match[1]! + fraction);
  let scale = fraction.length - Number(match[3] ?? 0);
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  if (units === 0n) throw new RangeError(`"${text}" is not a positive decimal number`);
  return { units, scale };
}

/** The canonical text of a decimal: no exponent, no trailing zeros (`{10812n, 4}` → `1.0812`). */
export function formatDecimal(value: Decimal): string {
  const digits = value.units.toString().padStart(value.scale + 1, '0');
  if (value.scale === 0) return digits;
  return `${digits.slice(0, -value.scale)}.${digits.slice(-value.scale)}`.replace(/\.?0+$/, '');
}

/** `numerator / denominator` rounded half-up (half away from zero); the denominator is positive. */
export function divideHalfUp(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  const quotient = (2n * magnitude + denominator) / (2n * denominator);
  return negative ? -quotient : quotient;
}

/**
 * `numerator / denominator` as a decimal rounded half-up to `scale` places (trailing zeros
 * dropped): how cross rates are derived from two rates of a common base.
 */
export function divideDecimals(numerator: Decimal, denominator: Decimal, scale: number): Decimal {
  const units = divideHalfUp(numerator.units * 10n ** BigInt(denominator.scale + scale), denominator.units * 10n ** BigInt(numerator.scale));
  if (units <= 0n) throw new RangeError(`the quotient is below 10^-${scale}`);
  return parseDecimal(formatDecimal({ units, scale }));
}

/**
 * Converts `amount` minor units of `from` into minor units of `to` at `rate` (units of `to` per
 * one unit of `from`, as decimal text), rounding half-up to the minor unit of `to`. Exact: the
 * result is `round(amount × rate × 10^digits(to) / 10^digits(from))` computed in bigint.
 */
export function convert(options: { amount: number; from: string; to: string; rate: string | Decimal }): Cents {
  const result = convertExact(options);
  if (result > BigInt(Number.MAX_SAFE_INTEGER) || result < BigInt(Number.MIN_SAFE_INTEGER)) throw new RangeError('converted amount is out of range');
  return cents(Number(result));
}

/** `convert` as a bigint, never out of range: for callers that bound the result themselves. */
export function convertExact(options: { amount: number; from: string; to: string; rate: string | Decimal }): bigint {
  const rate = typeof options.rate === 'string' ? parseDecimal(options.rate) : options.rate;
  if (!Number.isSafeInteger(options.amount)) throw new RangeError(`amount must be an integer count of minor units, got ${options.amount}`);
  const numerator = BigInt(options.amount) * rate.units * 10n ** BigInt(minorUnitDigits(options.to));
  const denominator = 10n ** BigInt(rate.scale + minorUnitDigits(options.from));
  return divideHalfUp(numerator, denominator);
}

/** One basis point is 1/100 of a percent; 10 000 basis points are the whole amount. */
export const basisPointsWhole = 10_000;

/** `basisPoints` of `total`, rounded half-up to the minor unit. */
export function percentOf(total: number, basisPoints: number): Cents {
  return cents(Number(divideHalfUp(BigInt(total) * BigInt(basisPoints), BigInt(basisPointsWhole))));
}

/**
 * Splits `total` minor units in proportion to non-negative integer `weights` so the parts add up
 * to `total` exactly (largest remainder: every part gets the floor of its exact share, and the
 * cents left over go to the largest fractional remainders, earlier parts first on ties). A part
 * never exceeds its weight when `total` is at most the sum of the weights.
 */
export function splitProRata(total: number, weights: readonly number[]): Cents[] {
  const weightSum = weights.reduce((sum, weight) => sum + BigInt(weight), 0n);
  if (weights.some((weight) => !Number.isSafeInteger(weight) || weight < 0)) throw new RangeError('weights must be non-negative integers');
  if (weightSum === 0n) {
    if (total !== 0) throw new RangeError('cannot split a non-zero total over zero weights');
    return weights.map(() => cents(0));
  }
  const exact = weights.map((weight) => BigInt(total) * BigInt(weight));
  const parts = exact.map((value) => value / weightSum);
  let left = BigInt(total) - parts.reduce((sum, part) => sum + part, 0n);
  const byRemainder = exact
    .map((value, index) => ({ index, remainder: value % weightSum }))
    .sort((a, b) => (a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1));
  for (const { index } of byRemainder) {
    if (left <= 0n) break;
    parts[index]! += 1n;
    left -= 1n;
  }
  return parts.map((part) => cents(Number(part)));
}
