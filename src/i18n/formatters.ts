import { limits } from '../limits.js';

/**
 * Intl formatters, built once per locale and options and reused: building one costs far more
 * than formatting with it (issue 7: a receipt built four per payment, a fifth of the payment
 * path's JavaScript time). Keys come from the 15 catalogue languages and the accepted
 * currencies, so the cache stays small; the bound is a guard, not a policy.
 */
const cache = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();

function cached<T extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, create: () => T): T {
  const found = cache.get(key);
  if (found) return found as T;
  if (cache.size >= limits.intlFormattersCachedMax) cache.clear();
  const made = create();
  cache.set(key, made);
  return made;
}

export function numberFormat(locale: string, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  return cached(`n|${locale}|${JSON.stringify(options)}`, () => new Intl.NumberFormat(locale, options));
}

export function dateTimeFormat(locale: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  return cached(`d|${locale}|${JSON.stringify(options)}`, () => new Intl.DateTimeFormat(locale, options));
}
