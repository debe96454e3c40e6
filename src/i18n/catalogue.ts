/**
 * The one message catalogue of the service, shared by transactional emails (namespace
 * `emails`), the hosted pages (namespace `pages`) and both (namespace `declines`: the gateway's
 * decline reasons, keyed by decline code), and the sandbox processor's 3-D Secure challenge page
 * (namespace `sandbox`: the bank's page, not ours, so apart from the text our pages carry). Each
 * namespace has one file per language,
 * `src/i18n/<namespace>/<languageCode>.ts`, exporting
 * `export const messages = { key: 'text with {placeholders}' } as const`, and optionally
 * `export const identicalToEnglish = ['key'] as const` naming the few keys whose text is
 * rightly the same as English in that language (brand names, numbers).
 *
 * enGB is the reference: every other language must have exactly its keys and placeholders
 * (test/i18n/catalogue.test.ts checks it). A key missing at run time falls back to English.
 * No Node built-ins here: the browser bundles import this module too.
 */
import * as declinesDeDE from './declines/deDE.js';
import * as declinesEnGB from './declines/enGB.js';
import * as declinesEsES from './declines/esES.js';
import * as declinesFrFR from './declines/frFR.js';
import * as declinesItIT from './declines/itIT.js';
import * as declinesJaJA from './declines/jaJA.js';
import * as declinesKkKK from './declines/kkKK.js';
import * as declinesKoKO from './declines/koKO.js';
import * as declinesLvLV from './declines/lvLV.js';
import * as declinesPtBR from './declines/ptBR.js';
import * as declinesRoRO from './declines/roRO.js';
import * as declinesRuRU from './declines/ruRU.js';
import * as declinesUkUK from './declines/ukUK.js';
import * as declinesUzUZ from './declines/uzUZ.js';
import * as declinesZhZH from './declines/zhZH.js';
import * as emailsDeDE from './emails/deDE.js';
import * as emailsEnGB from './emails/enGB.js';
import * as emailsEsES from './emails/esES.js';
import * as emailsFrFR from './emails/frFR.js';
import * as emailsItIT from './emails/itIT.js';
import * as emailsJaJA from './emails/jaJA.js';
import * as emailsKkKK from './emails/kkKK.js';
import * as emailsKoKO from './emails/koKO.js';
import * as emailsLvLV from './emails/lvLV.js';
import * as emailsPtBR from './emails/ptBR.js';
import * as emailsRoRO from './emails/roRO.js';
import * as emailsRuRU from './emails/ruRU.js';
import * as emailsUkUK from './emails/ukUK.js';
import * as emailsUzUZ from './emails/uzUZ.js';
import * as emailsZhZH from './emails/zhZH.js';
import * as pagesDeDE from './pages/deDE.js';
import * as pagesEnGB from './pages/enGB.js';
import * as pagesEsES from './pages/esES.js';
import * as pagesFrFR from './pages/frFR.js';
import * as pagesItIT from './pages/itIT.js';
import * as pagesJaJA from './pages/jaJA.js';
import * as pagesKkKK from './pages/kkKK.js';
import * as pagesKoKO from './pages/koKO.js';
import * as pagesLvLV from './pages/lvLV.js';
import * as pagesPtBR from './pages/ptBR.js';
import * as pagesRoRO from './pages/roRO.js';
import * as pagesRuRU from './pages/ruRU.js';
import * as pagesUkUK from './pages/ukUK.js';
import * as pagesUzUZ from './pages/uzUZ.js';
import * as pagesZhZH from './pages/zhZH.js';
import * as sandboxDeDE from './sandbox/deDE.js';
import * as sandboxEnGB from './sandbox/enGB.js';
import * as sandboxEsES from './sandbox/esES.js';
import * as sandboxFrFR from './sandbox/frFR.js';
import * as sandboxItIT from './sandbox/itIT.js';
import * as sandboxJaJA from './sandbox/jaJA.js';
import * as sandboxKkKK from './sandbox/kkKK.js';
import * as sandboxKoKO from './sandbox/koKO.js';
import * as sandboxLvLV from './sandbox/lvLV.js';
import * as sandboxPtBR from './sandbox/ptBR.js';
import * as sandboxRoRO from './sandbox/roRO.js';
import * as sandboxRuRU from './sandbox/ruRU.js';
import * as sandboxUkUK from './sandbox/ukUK.js';
import * as sandboxUzUZ from './sandbox/uzUZ.js';
import * as sandboxZhZH from './sandbox/zhZH.js';

export { defaultLanguage, isLanguageCode, languageCodes, localeByLanguage, parseLanguage, type LanguageCode, type Locale } from './languages.js';
import { defaultLanguage, localeByLanguage, parseLanguage, type LanguageCode, type Locale } from './languages.js';
import { limits } from '../limits.js';

/** Each language's own name for itself, for language pickers. */
export const languageNames: Record<LanguageCode, string> = {
  zhZH: '中文',
  enGB: 'English',
  frFR: 'Français',
  deDE: 'Deutsch',
  itIT: 'Italiano',
  jaJA: '日本語',
  kkKK: 'Қазақша',
  koKO: '한국어',
  lvLV: 'Latviešu',
  ptBR: 'Português (Brasil)',
  roRO: 'Română',
  ruRU: 'Русский',
  esES: 'Español',
  ukUK: 'Українська',
  uzUZ: 'Oʻzbekcha',
};

type NamespaceFile = { messages: Readonly<Record<string, string>>; identicalToEnglish?: readonly string[] };

const namespaceFiles = {
  declines: {
    zhZH: declinesZhZH, enGB: declinesEnGB, frFR: declinesFrFR, deDE: declinesDeDE, itIT: declinesItIT, jaJA: declinesJaJA, kkKK: declinesKkKK, koKO: declinesKoKO,
    lvLV: declinesLvLV, ptBR: declinesPtBR, roRO: declinesRoRO, ruRU: declinesRuRU, esES: declinesEsES, ukUK: declinesUkUK, uzUZ: declinesUzUZ,
  },
  emails: {
    zhZH: emailsZhZH, enGB: emailsEnGB, frFR: emailsFrFR, deDE: emailsDeDE, itIT: emailsItIT, jaJA: emailsJaJA, kkKK: emailsKkKK, koKO: emailsKoKO,
    lvLV: emailsLvLV, ptBR: emailsPtBR, roRO: emailsRoRO, ruRU: emailsRuRU, esES: emailsEsES, ukUK: emailsUkUK, uzUZ: emailsUzUZ,
  },
  pages: {
    zhZH: pagesZhZH, enGB: pagesEnGB, frFR: pagesFrFR, deDE: pagesDeDE, itIT: pagesItIT, jaJA: pagesJaJA, kkKK: pagesKkKK, koKO: pagesKoKO,
    lvLV: pagesLvLV, ptBR: pagesPtBR, roRO: pagesRoRO, ruRU: pagesRuRU, esES: pagesEsES, ukUK: pagesUkUK, uzUZ: pagesUzUZ,
  },
  sandbox: {
    zhZH: sandboxZhZH, enGB: sandboxEnGB, frFR: sandboxFrFR, deDE: sandboxDeDE, itIT: sandboxItIT, jaJA: sandboxJaJA, kkKK: sandboxKkKK, koKO: sandboxKoKO,
    lvLV: sandboxLvLV, ptBR: sandboxPtBR, roRO: sandboxRoRO, ruRU: sandboxRuRU, esES: sandboxEsES, ukUK: sandboxUkUK, uzUZ: sandboxUzUZ,
  },
} satisfies Record<string, Record<LanguageCode, NamespaceFile>>;

export type Namespace = keyof typeof namespaceFiles;
export const namespaces = Object.keys(namespaceFiles) as Namespace[];

type EnglishKeys<N extends Namespace> = Extract<keyof (typeof namespaceFiles)[N]['enGB']['messages'], string>;
/** A catalogue key, `namespace.key`, e.g. `emails.receiptSubject`. Typos fail typechecking. */
export type MessageKey = { [N in Namespace]: `${N}.${EnglishKeys<N>}` }[Namespace];
export type MessageVars = Record<string, string | number>;

/** The messages of one namespace in one language, as written (no fallback applied). */
export function messagesOf(namespace: Namespace, language: LanguageCode): Readonly<Record<string, string>> {
  return (namespaceFiles[namespace] as Record<LanguageCode, NamespaceFile>)[language].messages;
}

/** Keys a language declares as rightly identical to English (checked by the completeness test). */
export function identicalToEnglishOf(namespace: Namespace, language: LanguageCode): readonly string[] {
  return (namespaceFiles[namespace] as Record<LanguageCode, NamespaceFile>)[language].identicalToEnglish ?? [];
}

/** Like parseLanguage, but anything unknown or empty becomes the default language (enGB). */
export function normaliseLanguage(code: string | null | undefined): LanguageCode {
  return parseLanguage(code) ?? defaultLanguage;
}

/**
 * The language of the 15 a browser prefers most by its Accept-Language header (`de-AT, en;q=0.5`:
 * deDE), or undefined when it names none of them (or refuses them with `q=0`). For a page with no
 * other language to go by. Only the first `limits.acceptLanguageEntriesMax` entries are read.
 */
export function preferredLanguage(acceptLanguage: string | undefined): LanguageCode | undefined {
  const entries = (acceptLanguage ?? '').split(',', limits.acceptLanguageEntriesMax).map((entry, index) => {
    const [tag = '', ...parameters] = entry.split(';');
    const quality = parameters.map((parameter) => /^\s*q\s*=\s*([01](?:\.[0-9]{0,3})?)\s*$/i.exec(parameter)?.[1]).find((value) => value !== undefined);
    return { language: tag.trim() === '*' ? undefined : parseLanguage(tag), quality: quality === undefined ? 1 : Number(quality), index };
  });
  const wanted = entries.filter((entry) => entry.language !== undefined && entry.quality > 0);
  wanted.sort((a, b) => b.quality - a.quality || a.index - b.index);
  return wanted[0]?.language;
}

/** The first of `candidates` that is a known language, else enGB (e.g. transaction, booking, channel). */
export function firstLanguage(...candidates: (string | null | undefined)[]): LanguageCode {
  for (const candidate of candidates) {
    const language = parseLanguage(candidate);
    if (language) return language;
  }
  return defaultLanguage;
}

export function localeOf(language: LanguageCode): Locale {
  return localeByLanguage[language];
}

const placeholderPattern = /\{([A-Za-z][A-Za-z0-9_]*)\}/g;

/** Placeholder names in a message, e.g. `['company', 'amount']`. */
export function placeholdersOf(text: string): string[] {
  return [...text.matchAll(placeholderPattern)].map((match) => match[1]!);
}

/**
 * The text of `key` in `language` (English when that language lacks it) with `{name}` replaced by
 * `vars.name`. Values are inserted as given: escape them for HTML at the call site's output
 * format. A placeholder without a value is a programmer error and throws.
 */
export function translate(language: LanguageCode | string, key: MessageKey, vars: MessageVars = {}): string {
  const dot = key.indexOf('.');
  const namespace = key.slice(0, dot) as Namespace;
  const name = key.slice(dot + 1);
  const chosen = messagesOf(namespace, normaliseLanguage(language))[name] ?? messagesOf(namespace, defaultLanguage)[name];
  if (chosen === undefined) throw new Error(`unknown message key ${key}`);
  return chosen.replace(placeholderPattern, (_whole, variable: string) => {
    const value = vars[variable];
    if (value === undefined) throw new Error(`message ${key} needs a value for {${variable}}`);
    return String(value);
  });
}

/**
 * The reason for a gateway decline `code` in `language`, e.g. deDE `800.100.151` → "abgelehnt
 * (ungültige Karte)": the catalogue's text for a code it knows (the forced declines of the spec and
 * the sandbox's other codes), else the generic `declines.unknown`. The caller shows the code next
 * to it, so the exact answer of an unknown gateway code is never lost.
 */
export function declineReason(language: LanguageCode | string, code: string): string {
  const known = Object.hasOwn(messagesOf('declines', defaultLanguage), code);
  return translate(language, (known ? `declines.${code}` : 'declines.unknown') as MessageKey);
}
