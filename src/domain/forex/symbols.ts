import type { CurrencyCode } from '../money.js';

/**
 * How an amount in a currency is shown: `grapheme` is the symbol, `template` shows where the
 * amount goes (the digit `1` stands for the formatted amount: `$1` → `$12.50`, `1 kr` →
 * `12,50 kr`), and `rtl` marks symbols written right to left (Arabic script, Hebrew). The table is
 * documented in docs/forex.md; it is deliberately explicit instead of derived from Intl, whose
 * narrow symbols fall back to ISO codes for several Arabic-script currencies.
 */
export interface CurrencySymbol {
  grapheme: string;
  template: string;
  rtl: boolean;
}

const before = (grapheme: string): CurrencySymbol => ({ grapheme, template: `${grapheme}1`, rtl: false });
const beforeSpaced = (grapheme: string): CurrencySymbol => ({ grapheme, template: `${grapheme} 1`, rtl: false });
const after = (grapheme: string): CurrencySymbol => ({ grapheme, template: `1 ${grapheme}`, rtl: false });
const rightToLeft = (grapheme: string): CurrencySymbol => ({ grapheme, template: `1 ${grapheme}`, rtl: true });

export const currencySymbols: Record<CurrencyCode, CurrencySymbol> = {
  AED: rightToLeft('د.إ'),
  ARS: before('$'),
  AUD: before('$'),
  BHD: rightToLeft('د.ب'),
  BRL: before('R$'),
  CAD: before('$'),
  CHF: beforeSpaced('CHF'),
  CLP: before('$'),
  CNY: before('¥'),
  COP: before('$'),
  CZK: after('Kč'),
  DKK: after('kr.'),
  EUR: before('€'),
  FJD: before('$'),
  GBP: before('£'),
  HKD: before('$'),
  HUF: after('Ft'),
  IDR: before('Rp'),
  ILS: rightToLeft('₪'),
  INR: before('₹'),
  ISK: after('kr'),
  JOD: rightToLeft('د.ا'),
  JPY: before('¥'),
  KRW: before('₩'),
  KWD: rightToLeft('د.ك'),
  KZT: after('₸'),
  MXN: before('$'),
  MYR: before('RM'),
  NOK: beforeSpaced('kr'),
  NZD: before('$'),
  OMR: rightToLeft('ر.ع.'),
  PEN: beforeSpaced('S/'),
  PHP: before('₱'),
  PLN: after('zł'),
  RON: after('lei'),
  RUB: after('₽'),
  SAR: rightToLeft('ر.س'),
  SEK: after('kr'),
  SGD: before('$'),
  THB: before('฿'),
  TND: rightToLeft('د.ت'),
  TRY: before('₺'),
  TWD: before('$'),
  UAH: after('₴'),
  USD: before('$'),
  UZS: after('soʻm'),
  VND: after('₫'),
  ZAR: before('R'),
};

/** The symbol of a currency the service knows; an unknown code shows as itself before the amount. */
export function currencySymbolOf(currency: string): CurrencySymbol {
  return (currencySymbols as Record<string, CurrencySymbol | undefined>)[currency] ?? beforeSpaced(currency);
}
