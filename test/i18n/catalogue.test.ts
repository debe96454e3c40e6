import { describe, expect, it } from 'vitest';
import {
  firstLanguage, identicalToEnglishOf, languageCodes, localeOf, messagesOf, namespaces, normaliseLanguage, parseLanguage, placeholdersOf, translate,
} from '../../src/i18n/catalogue.js';

const otherLanguages = languageCodes.filter((language) => language !== 'enGB');

describe('catalogue completeness', () => {
  it('has the 15 languages of the spec, each with a locale Intl knows', () => {
    expect(languageCodes).toEqual(['zhZH', 'enGB', 'frFR', 'deDE', 'itIT', 'jaJA', 'kkKK', 'koKO', 'lvLV', 'ptBR', 'roRO', 'ruRU', 'esES', 'ukUK', 'uzUZ']);
    for (const language of languageCodes) {
      expect(Intl.NumberFormat.supportedLocalesOf([localeOf(language)])).toEqual([localeOf(language)]);
    }
  });

  for (const namespace of namespaces) {
    describe(`namespace ${namespace}`, () => {
      const english = messagesOf(namespace, 'enGB');

      it.each(otherLanguages)('%s has exactly the English keys', (language) => {
        expect(Object.keys(messagesOf(namespace, language)).sort()).toEqual(Object.keys(english).sort());
      });

      it.each(otherLanguages)('%s keeps every placeholder of each English message', (language) => {
        const messages = messagesOf(namespace, language);
        const wrong = Object.entries(english)
          .filter(([key, text]) => [...placeholdersOf(text)].sort().join() !== [...placeholdersOf(messages[key] ?? '')].sort().join())
          .map(([key]) => key);
        expect(wrong).toEqual([]);
      });

      it.each(otherLanguages)('%s translates every message (identical only where declared)', (language) => {
        const messages = messagesOf(namespace, language);
        const allowed = new Set(identicalToEnglishOf(namespace, language));
        const untranslated = Object.entries(english)
          .filter(([key, text]) => messages[key] === text && !allowed.has(key) && /\p{L}{2}/u.test(text.replace(/\{[^}]*\}/g, '')))
          .map(([key]) => key);
        expect(untranslated).toEqual([]);
        // Exceptions must be real: a declared key that is translated after all is stale.
        const stale = [...allowed].filter((key) => messages[key] !== english[key]);
        expect(stale).toEqual([]);
      });

      it('has no empty message', () => {
        for (const language of languageCodes) {
          const empty = Object.entries(messagesOf(namespace, language)).filter(([, text]) => text.trim() === '').map(([key]) => `${language}.${key}`);
          expect(empty).toEqual([]);
        }
      });
    });
  }
});

describe('spelling', () => {
  it('writes Uzbek oʻ and gʻ with the turned comma (U+02BB) in every namespace, not a quotation mark a search or a screen reader takes for one', () => {
    const quoted = namespaces.flatMap((namespace) => Object.entries(messagesOf(namespace, 'uzUZ'))
      .filter(([, text]) => /[‘’'`]/.test(text)).map(([key]) => `${namespace}.${key}`));
    expect(quoted).toEqual([]);
  });
});

describe('translate', () => {
  it('fills placeholders in the chosen language', () => {
    expect(translate('frFR', 'emails.refundSubject', { company: 'Voyages Soleil', bookingId: '7-42' })).toBe('Remboursement de Voyages Soleil (7-42)');
    expect(translate('deDE', 'emails.labelAmount')).toBe('Betrag');
  });

  it('falls back to English for an unknown language', () => {
    expect(translate('xxXX', 'emails.labelAmount')).toBe('Amount');
  });

  it('refuses a missing placeholder value instead of sending "{company}" to a customer', () => {
    expect(() => translate('enGB', 'emails.receiptSubject', { bookingId: '1-1' })).toThrow(/company/);
  });
});

describe('language codes', () => {
  it('normalises spec codes, BCP 47 locales and bare subtags', () => {
    expect(parseLanguage('frFR')).toBe('frFR');
    expect(parseLanguage('frfr')).toBe('frFR');
    expect(parseLanguage('fr-FR')).toBe('frFR');
    expect(parseLanguage('ja-JP')).toBe('jaJA');
    expect(parseLanguage('uk_UA')).toBe('ukUK');
    expect(parseLanguage('zh')).toBe('zhZH');
    expect(parseLanguage('nl-NL')).toBeUndefined();
    expect(parseLanguage('')).toBeUndefined();
    expect(normaliseLanguage('nl-NL')).toBe('enGB');
    expect(normaliseLanguage(null)).toBe('enGB');
  });

  it('picks the first known language of a fallback chain', () => {
    expect(firstLanguage(null, 'bogus', 'ruRU', 'deDE')).toBe('ruRU');
    expect(firstLanguage(undefined, '')).toBe('enGB');
  });
});
