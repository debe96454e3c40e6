/**
 * The spec's language codes and how a code given by a caller is read: no messages here, so the
 * modal's script on integrators' pages can name its dialog in the language the frame is shown in
 * (web/modal/1.0.0/payment-modal.ts) without carrying the catalogue. catalogue.ts re-exports all
 * of it.
 */

/** The spec's receipt language codes with the BCP 47 locale Intl uses for each. */
export const localeByLanguage = {
  zhZH: 'zh-CN',
  enGB: 'en-GB',
  frFR: 'fr-FR',
  deDE: 'de-DE',
  itIT: 'it-IT',
  jaJA: 'ja-JP',
  kkKK: 'kk-KZ',
  koKO: 'ko-KR',
  lvLV: 'lv-LV',
  ptBR: 'pt-BR',
  roRO: 'ro-RO',
  ruRU: 'ru-RU',
  esES: 'es-ES',
  ukUK: 'uk-UA',
  uzUZ: 'uz-UZ',
} as const;

export type LanguageCode = keyof typeof localeByLanguage;
export type Locale = (typeof localeByLanguage)[LanguageCode];

/** In the spec's order; use it for TypeBox enums and language pickers. */
export const languageCodes = Object.keys(localeByLanguage) as LanguageCode[];

export const defaultLanguage: LanguageCode = 'enGB';

export function isLanguageCode(value: unknown): value is LanguageCode {
  return typeof value === 'string' && Object.hasOwn(localeByLanguage, value);
}

/**
 * The language code for `code` or undefined: accepts the spec's codes in any case (`frfr`), BCP 47
 * locales (`fr-FR`, `fr_FR`, `ja-JP`) and bare language subtags (`fr`, `ja`).
 */
export function parseLanguage(code: string | null | undefined): LanguageCode | undefined {
  if (typeof code !== 'string') return undefined;
  const compact = code.trim().replace(/[-_]/g, '').toLowerCase();
  if (compact === '') return undefined;
  for (const language of languageCodes) {
    if (language.toLowerCase() === compact || localeByLanguage[language].replace('-', '').toLowerCase() === compact) return language;
  }
  const subtag = code.trim().toLowerCase().split(/[-_]/)[0];
  return languageCodes.find((language) => language.slice(0, 2).toLowerCase() === subtag);
}

