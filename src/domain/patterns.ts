/**
 * The API's string patterns, each with the phrase that completes "must be …", so a refused value
 * is told what was expected ("must be a date as YYYY-MM-DD") instead of being shown a regular
 * expression (http/errors.ts). A pattern is described where it is made; one that is not falls
 * back to the validator's own message.
 */
const phrases = new Map<string, string>();

/** `pattern`, remembered with its phrase. One pattern has one phrase: two would be a programmer's error. */
export function describedPattern(pattern: string, phrase: string): string {
  const known = phrases.get(pattern);
  if (known !== undefined && known !== phrase) throw new Error(`pattern ${pattern} described twice: "${known}" and "${phrase}"`);
  phrases.set(pattern, phrase);
  return pattern;
}

export function patternPhrase(pattern: string): string | undefined {
  return phrases.get(pattern);
}

const enumPhrases = new Map<string, string>();

/**
 * A long list of allowed values (the spec's country codes), remembered with its phrase: a refusal
 * says "must be <phrase>" rather than listing every value (http/errors.ts).
 */
export function describedEnum<const T extends readonly string[]>(values: T, phrase: string): T {
  enumPhrases.set(values.join('\n'), phrase);
  return values;
}

export function enumPhrase(values: readonly unknown[]): string | undefined {
  return enumPhrases.get(values.join('\n'));
}

/** What a country code looks like: said of the pattern and of the spec's list (`countryCodes`). */
export const countryCodePhrase = 'a country code of the ISO 3166-1 alpha-2 list, in capitals, such as GB';

export const calendarDatePattern = describedPattern('^[0-9]{4}-[0-9]{2}-[0-9]{2}$', 'a date as YYYY-MM-DD');
export const currencyCodePattern = describedPattern('^[A-Z]{3}$', 'a three-letter currency code in capitals (ISO 4217), such as USD');
