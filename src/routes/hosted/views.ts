import { countryCodes } from '../../domain/reference-data.js';
import { holderFieldLengthMax } from '../../domain/hosted/vault-app.js';
import { defaultLanguage, localeOf, messagesOf, translate, type LanguageCode, type MessageVars } from '../../i18n/catalogue.js';
import type { messages as englishPages } from '../../i18n/pages/enGB.js';
import { html, jsonData, page, type SafeHtml } from './html.js';

/**
 * Markup shared by the hosted pages. The card form is rendered by the server (labels, hints,
 * error slots, prefilled cardholder values) and enhanced by the page bundle, which formats,
 * validates and submits it.
 */
export type PageKey = keyof typeof englishPages;
export type Translator = (key: PageKey, vars?: MessageVars) => string;

export function translatorFor(language: LanguageCode): Translator {
  return (key, vars) => translate(language, `pages.${key}`, vars);
}

/** The messages the page scripts need, in the page language (English where a key is missing). */
export function pageMessages(language: LanguageCode): Record<string, string> {
  return { ...messagesOf('pages', 'enGB'), ...messagesOf('pages', language) };
}

export type HolderField = 'name' | 'email' | 'address' | 'city' | 'zip' | 'country';

export interface CardFormOptions {
  t: Translator;
  language: LanguageCode;
  /** Cardholder fields shown, in order, with their prefilled values. */
  holderFields: HolderField[];
  prefill: Partial<Record<HolderField, string>>;
  submitLabel: string;
}

const autocomplete: Record<HolderField, string> = { name: 'cc-name', email: 'email', address: 'street-address', city: 'address-level2', zip: 'postal-code', country: 'country' };
const holderLabel: Record<HolderField, PageKey> = { name: 'holderName', email: 'email', address: 'address', city: 'city', zip: 'zip', country: 'country' };

function field(options: { id: string; label: string; input: SafeHtml; hint?: string }): SafeHtml {
  return html`<div class="field" data-field="${options.id}">
<label for="${options.id}">${options.label}</label>
${options.input}
${options.hint ? html`<p class="hint" id="${options.id}-hint">${options.hint}</p>` : ''}
<p class="error" id="${options.id}-error" hidden></p>
</div>`;
}

function describedBy(id: string, hint: boolean): string {
  return hint ? `${id}-hint ${id}-error` : `${id}-error`;
}

function countrySelect(options: CardFormOptions, value: string | undefined): SafeHtml {
  const names = new Intl.DisplayNames([localeOf(options.language)], { type: 'region' });
  const sorted = [...countryCodes].map((code) => ({ code, name: names.of(code) ?? code })).sort((a, b) => a.name.localeCompare(b.name, localeOf(options.language)));
  return html`<select id="country" name="country" autocomplete="country" aria-describedby="country-error">
<option value=""></option>
${sorted.map((country) => html`<option value="${country.code}"${country.code === value ? html` selected` : ''}>${country.name}</option>`)}
</select>`;
}

export function cardFormView(options: CardFormOptions): SafeHtml {
  const { t } = options;
  const holder = options.holderFields.map((name) => {
    const input = name === 'country'
      ? countrySelect(options, options.prefill.country)
      : html`<input id="${name}" name="${name}" type="${name === 'email' ? 'email' : 'text'}" autocomplete="${autocomplete[name]}" value="${options.prefill[name] ?? ''}" maxlength="${holderFieldLengthMax[name]}"${name === 'name' ? html` required aria-required="true"` : ''} aria-describedby="${name}-error">`;
    return field({ id: name, label: t(holderLabel[name]), input });
  });
  // POST, with the button disabled until the page script has taken the form over (payOnSubmit):
  // a GET form sent before its script ran (JavaScript off, the bundle not loaded yet, Enter
  // pressed early on a slow connection) put the card number and CVV in the address bar, the
  // history and every access log on the way (session 29).
  // The card number and expiry have no maxlength: the browser cut a paste to it before the script
  // spaced it ("12 / 2030" became "12/20", a card in the past); the script caps what it keeps.
  // The outcome comes before the form: below the Pay button, a decline's reason was off a phone's
  // screen while the emptied card number had the focus.
  return html`<section id="outcome" class="outcome" hidden tabindex="-1" aria-live="assertive"></section>
<form id="card-form" class="card-form" method="post" novalidate>
<div id="error-summary" class="error-summary" role="alert" tabindex="-1" hidden></div>
<fieldset>
<legend>${t('cardDetails')}</legend>
${field({
    id: 'card_number',
    label: t('cardNumber'),
    input: html`<div class="card-number-wrap"><input id="card_number" name="card_number" type="text" inputmode="numeric" autocomplete="cc-number" required aria-required="true" aria-describedby="${describedBy('card_number', false)} card-brand" spellcheck="false"><span id="card-brand" class="card-brand" aria-live="polite"></span></div>`,
  })}
<div class="row">
${field({ id: 'expiry', label: t('expiry'), input: html`<input id="expiry" name="expiry" type="text" inputmode="numeric" autocomplete="cc-exp" placeholder="${t('expiryPlaceholder')}" required aria-required="true" aria-describedby="${describedBy('expiry', false)}">` })}
${field({ id: 'cvv', label: t('cvv'), hint: t('cvvHint'), input: html`<input id="cvv" name="cvv" type="password" inputmode="numeric" autocomplete="cc-csc" maxlength="4" required aria-required="true" aria-describedby="${describedBy('cvv', true)}">` })}
</div>
</fieldset>
${options.holderFields.length > 0 ? html`<fieldset><legend>${t('cardholderDetails')}</legend>${holder}</fieldset>` : ''}
<button type="submit" id="submit" class="primary" disabled>${options.submitLabel}</button>
<p id="status" class="status" role="status" aria-live="polite"></p>
</form>
<section id="challenge" class="challenge" hidden aria-labelledby="challenge-title">
<h2 id="challenge-title" tabindex="-1">${t('challengeTitle')}</h2>
<p>${t('challengeIntro')}</p>
<iframe id="challenge-frame" title="${t('challengeTitle')}"></iframe>
</section>
<noscript><p class="notice">${t('noScript')}</p></noscript>`;
}

/**
 * A message the page shows in a box of its own, outside the outcome box the bundle fills: in place
 * of the form when nothing can be paid or vaulted here (nothing on such a page takes card data),
 * or above the form. `id` names it for the page bundle.
 */
export function noticeView(options: { kind: 'success' | 'failed' | 'info'; message: string; id?: string }): SafeHtml {
  return html`<div${options.id ? html` id="${options.id}"` : ''} class="outcome ${options.kind}" role="status"><p>${options.message}</p></div>`;
}

export function secureNoteView(t: Translator, testMode: boolean): SafeHtml {
  return html`<p class="secure-note"><span class="lock" aria-hidden="true"></span>${t('secureNote')}</p>
${testMode ? html`<p class="test-mode" role="note">${t('testMode')}</p>` : ''}`;
}

export interface HostedPageOptions {
  language: LanguageCode;
  title: string;
  heading: string;
  subheading?: string;
  content: SafeHtml;
  /** Page bundle and stylesheet URLs; absent for pages without behaviour (errors). */
  script?: string;
  style: string;
  /** Data for the page bundle, read from `#page-data`. */
  data?: unknown;
  bodyClass?: string;
}

export function hostedPage(options: HostedPageOptions): string {
  return page({
    lang: localeOf(options.language),
    title: options.title,
    styles: [options.style],
    scripts: options.script ? [options.script] : [],
    bodyClass: options.bodyClass ?? '',
    body: html`<main class="card" id="main">
<header class="page-header">
<h1>${options.heading}</h1>
${options.subheading ? html`<p class="subheading">${options.subheading}</p>` : ''}
</header>
${options.content}
</main>
${options.data !== undefined ? jsonData('page-data', options.data) : ''}`,
  });
}

/**
 * A page that explains why no form is shown; nothing on it can take card data. `details` are the
 * service's English explanations of each refused input, for the integrator who built the URL:
 * listed only on a page in English. On a page in the payer's language they were English lines
 * under a translated message that already names the inputs (docs/hosted-pages.md).
 */
export function errorPage(options: { language: LanguageCode; message: string; details?: Record<string, string>; style: string }): string {
  const t = translatorFor(options.language);
  const details = options.language === defaultLanguage ? Object.entries(options.details ?? {}) : [];
  return hostedPage({
    language: options.language,
    title: t('titleError'),
    heading: t('titleError'),
    style: options.style,
    bodyClass: 'error-page',
    content: html`<div class="outcome failed" role="alert"><p>${options.message}</p>
${details.length > 0 ? html`<ul class="details">${details.map(([name, text]) => html`<li><code>${name}</code> ${text}</li>`)}</ul>` : ''}</div>`,
  });
}
