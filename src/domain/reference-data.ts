import { languageCodes, type LanguageCode } from '../i18n/catalogue.js';
import { emailPattern } from './email-address.js';
import { countryCodePhrase, describedEnum, describedPattern, patternPhrase } from './patterns.js';

export { isEmailAddress } from './email-address.js';

/**
 * Fixed lists of the spec and decisions.md: country codes accepted wherever a country is an
 * input, receipt languages, and supplier categories.
 */

/** ISO 3166-1 alpha-2 codes, exactly the spec's "Country codes" list. */
export const countryCodes = describedEnum((
  'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ ' +
  'DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT ' +
  'JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG ' +
  'NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH ' +
  'TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
).split(' ') as readonly string[], countryCodePhrase);

const countrySet = new Set(countryCodes);

export function isCountryCode(value: string): boolean {
  return countrySet.has(value);
}

/**
 * Wherever a country is an input (bookings, transactions, cards, the vaulting app), the spec's
 * list, refused with the same words: a well-formed code outside it (`XX`) is not a country.
 */
export const countryCodePattern = describedPattern(`^(?:${countryCodes.join('|')})$`, countryCodePhrase);
export const countryCodeProblem = `must be ${patternPhrase(countryCodePattern)}`;

/** Receipt languages: the one list lives with the message catalogue that has a text for each. */
export { defaultLanguage, languageCodes, type LanguageCode } from '../i18n/catalogue.js';

export function isLanguageCode(value: string): value is LanguageCode {
  return (languageCodes as readonly string[]).includes(value);
}

/** Supplier category codes (decisions.md "Lists the spec leaves open"). */
export const supplierCategories = {
  ACC: 'accommodation',
  AIR: 'air',
  TRN: 'ground transport',
  CRU: 'cruise',
  ACT: 'activities',
  TOU: 'tour operator',
  INS: 'insurance',
  OTH: 'other',
} as const;
export type SupplierCategory = keyof typeof supplierCategories;
export const supplierCategoryCodes = Object.keys(supplierCategories) as SupplierCategory[];

/** Supplier ids look like `GB-1042-ACC`: country, number, category. */
export const supplierIdItemPattern = '[A-Z]{2}-[0-9]{1,10}-[A-Z]{3}';
export const supplierIdPattern = describedPattern(`^${supplierIdItemPattern}$`, 'a supplier id such as GB-1042-ACC');

/** Zero or more addresses separated by commas (spaces around commas allowed). */
export const emailListPattern = describedPattern(`^\\s*(${emailPattern}(\\s*,\\s*${emailPattern})*)?\\s*$`, 'email addresses separated by commas');

/** One email address, anchored. */
export const emailAddressPattern = describedPattern(`^${emailPattern}$`, 'an email address (ASCII before the @; letters, digits and hyphens in the domain)');


/** `a@x.com , b@y.com` → `a@x.com,b@y.com`. */
export function normaliseEmailList(text: string): string {
  return text.split(',').map((part) => part.trim()).filter(Boolean).join(',');
}
