import { isEmailAddress } from '../../src/domain/email-address.js';
import { textProblem } from '../../src/domain/text.js';
import { cardTypeFromBin, cvvLength, luhnValid } from '../../src/domain/vault/card-types.js';
import type { CardBrand } from '../../src/processor/connector.js';
import { byId, type Translate } from './page-data.js';

/**
 * Enhances the server-rendered card form: spaces the card number by brand, names the brand,
 * slashes the expiry, and validates on blur and submit with messages tied to each field
 * (aria-invalid, aria-describedby, a focused error summary). The checks are the vault's own
 * (Luhn, expiry, CVV length by brand), shared with the server code.
 */
export interface CardInput {
  card_number: string;
  expiry_month: string;
  expiry_year: number;
  cvv: string;
  name?: string;
  email?: string;
  address?: string;
  city?: string;
  zip?: string;
  country?: string;
}

const brandNames: Record<CardBrand, string> = { visa: 'Visa', master: 'Mastercard', amex: 'American Express', jcb: 'JCB', diners: 'Diners Club', discover: 'Discover', other: '' };

/** The brand as printed for people ("Visa"), from the wire value (`visa`); unknown ones as given. */
export function brandName(type: string | null | undefined): string {
  return (type && brandNames[type as CardBrand]) || (type ?? '');
}

/**
 * The ASCII digits of `value`, full-width ones included: a Japanese, Chinese or Korean input
 * method enters "４１１１" (NFKC makes them 4111, and "／" a slash), and \d knows only ASCII.
 */
export function digitsOf(value: string): string {
  return value.normalize('NFKC').replace(/\D/g, '');
}

/** Groups of 4, or 4-6-5 for American Express, as printed on the cards. */
export function spaceCardNumber(digits: string): string {
  const groups = cardTypeFromBin(digits.slice(0, 6)) === 'amex' ? [4, 6, 5] : [4, 4, 4, 4, 3];
  const parts: string[] = [];
  let at = 0;
  for (const size of groups) {
    if (at >= digits.length) break;
    parts.push(digits.slice(at, at + size));
    at += size;
  }
  return parts.join(' ');
}

export function parseExpiry(value: string): { month: number; year: number } | null {
  const match = /^\s*(\d{1,2})\s*\/?\s*(\d{2}|\d{4})\s*$/.exec(value);
  if (!match) return null;
  const month = Number(match[1]);
  const year = match[2]!.length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
  return month >= 1 && month <= 12 ? { month, year } : null;
}

export function expiryValid(value: string, now: Date): boolean {
  const expiry = parseExpiry(value);
  if (!expiry) return false;
  const current = now.getFullYear() * 12 + now.getMonth();
  const given = expiry.year * 12 + (expiry.month - 1);
  return given >= current && expiry.year <= now.getFullYear() + 20;
}

/** Where the caret goes in `spaced` to follow its `count`th digit. */
function caretAfterDigits(spaced: string, count: number): number {
  if (count === 0) return 0;
  let seen = 0;
  for (let at = 0; at < spaced.length; at++) if (/\d/.test(spaced[at]!) && ++seen === count) return at + 1;
  return spaced.length;
}

/**
 * The expiry as it is typed or pasted, slashed: "1230" → "12/30", "012030" → "01/2030", and a
 * one-digit month closed by a slash is padded ("1/" → "01/", so "1/30" is January 2030). Both
 * MM/YY and MM/YYYY stay whole (parseExpiry takes either).
 */
export function formatExpiry(typed: string): string {
  const value = typed.normalize('NFKC');
  const slash = value.indexOf('/');
  if (slash >= 0) {
    const month = digitsOf(value.slice(0, slash)).slice(0, 2);
    return `${month.length === 1 && month !== '0' ? `0${month}` : month}/${digitsOf(value.slice(slash + 1)).slice(0, 4)}`;
  }
  const digits = digitsOf(value).slice(0, 6);
  return digits.length > 2 ? `${digits.slice(0, 2)}/${digits.slice(2)}` : digits;
}

/**
 * Runs `format` on what is typed or pasted, and on what an input method commits; not while it
 * composes, since a value rewritten under a composition breaks it.
 */
function formatAsTyped(input: HTMLInputElement, format: (inputType: string) => void): void {
  input.addEventListener('input', (event) => {
    if (!(event as InputEvent).isComposing) format((event as InputEvent).inputType ?? '');
  });
  input.addEventListener('compositionend', () => format('insertCompositionText'));
}

type Check = (value: string) => string | null;

export class CardForm {
  readonly form: HTMLFormElement;
  private readonly t: Translate;
  private readonly checks = new Map<string, Check>();

  constructor(t: Translate) {
    this.t = t;
    this.form = byId<HTMLFormElement>('card-form');
    const number = this.input('card_number')!;
    formatAsTyped(number, (inputType) => this.formatNumber(number, inputType));
    const expiry = this.input('expiry')!;
    formatAsTyped(expiry, (inputType) => {
      if (!inputType.startsWith('delete')) expiry.value = formatExpiry(expiry.value);
    });
    const cvv = this.input('cvv')!;
    formatAsTyped(cvv, () => (cvv.value = digitsOf(cvv.value)));
    this.checks.set('card_number', (value) => (luhnValid(digitsOf(value)) ? null : t('errorCardNumber')));
    this.checks.set('expiry', (value) => (expiryValid(value, new Date()) ? null : t('errorExpiry')));
    this.checks.set('cvv', (value) => {
      const digits = cvvLength(this.brand());
      return new RegExp(`^\\d{${digits}}$`).test(value.trim()) ? null : t('errorCvv', { digits });
    });
    if (this.input('name')) this.checks.set('name', (value) => (value.trim() ? this.textCheck('name', value) : t('errorRequired')));
    if (this.input('email')) this.checks.set('email', (value) => (!value.trim() || isEmailAddress(value.trim()) ? null : t('errorEmail')));
    for (const name of ['address', 'city', 'zip']) if (this.input(name)) this.checks.set(name, (value) => this.textCheck(name, value));
    // A message appearing on blur moves the button down between mousedown and mouseup, and the
    // click is lost. When focus leaves a field for the submit button, submit validates anyway.
    const submit = byId('submit');
    let pressingSubmit = false;
    submit.addEventListener('pointerdown', () => (pressingSubmit = true));
    window.addEventListener('pointerup', () => (pressingSubmit = false), true);
    window.addEventListener('pointercancel', () => (pressingSubmit = false), true);
    for (const name of this.checks.keys()) {
      this.input(name)!.addEventListener('blur', (event) => {
        if (pressingSubmit || event.relatedTarget === submit) return;
        if (this.input(name)!.value !== '') this.validateField(name);
      });
    }
    this.forgetCardWhenShownAgain();
  }

  /**
   * A page shown again from the history (Back, Forward) gets its fields as they were when it was
   * left, from the browser's saved form state or its back/forward cache: after the vaulting app
   * sent a card and moved on to the integrator, Back showed the full card number and expiry to
   * whoever used the computer next. The card fields are cleared; the cardholder's may stay.
   */
  private forgetCardWhenShownAgain(): void {
    const navigation = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
    window.addEventListener('pageshow', (event) => {
      if (event.persisted || navigation?.type === 'back_forward') this.clearCard();
    });
  }


  /**
   * Cardholder text by the service's own rule for one-line text (src/domain/text.ts: no tabs,
   * line breaks or direction controls, something visible), as it is sent (trimmed): pasted text
   * the service refuses is told at the field in the page language, not in the service's English.
   */
  private textCheck(name: string, value: string): string | null {
    const maxLength = this.input(name)!.maxLength;
    return textProblem(value.trim(), { maxLength: maxLength > 0 ? maxLength : Number.MAX_SAFE_INTEGER, kind: 'line' }) ? this.t('errorText') : null;
  }

  private input(name: string): HTMLInputElement | null {
    return this.form.querySelector<HTMLInputElement>(`[name="${name}"]`);
  }

  brand(): CardBrand {
    return cardTypeFromBin(digitsOf(this.input('card_number')!.value).slice(0, 6));
  }

  /** The digits last shown, to tell a Backspace that removed only a space (see formatNumber). */
  private numberDigits = '';

  /**
   * Re-spaces the number as it is typed, keeping the caret after the same digit it followed (a
   * digit inserted mid-number leaves the caret right after it, not at the end). Backspace just
   * after a space, or Delete just before one, removes only the space, which spacing would put
   * back: the digit beyond it is removed instead, as the payer meant.
   */
  private formatNumber(input: HTMLInputElement, inputType: string): void {
    let caret = digitsOf(input.value.slice(0, input.selectionStart ?? input.value.length)).length;
    let digits = digitsOf(input.value);
    if (digits === this.numberDigits && inputType === 'deleteContentBackward' && caret > 0) {
      digits = digits.slice(0, caret - 1) + digits.slice(caret);
      caret -= 1;
    } else if (digits === this.numberDigits && inputType === 'deleteContentForward') {
      digits = digits.slice(0, caret) + digits.slice(caret + 1);
    }
    digits = digits.slice(0, 19);
    this.numberDigits = digits;
    input.value = spaceCardNumber(digits);
    if (document.activeElement === input) {
      const at = caretAfterDigits(input.value, Math.min(caret, digits.length));
      input.setSelectionRange(at, at);
    }
    const brand = digits.length >= 1 ? brandNames[this.brand()] : '';
    const label = byId('card-brand');
    // A live region: rewritten with the same text at every digit, a screen reader read it out again.
    const text = brand ? this.t('detectedBrand', { brand }) : '';
    if (label.textContent !== text) label.textContent = text;
    label.dataset.brand = brand ? this.brand() : '';
    this.input('cvv')!.maxLength = cvvLength(this.brand());
  }

  /** Whether the form has this field (the pages differ in their cardholder fields). */
  hasField(name: string): boolean {
    return this.input(name) !== null && document.getElementById(`${name}-error`) !== null;
  }

  /** The browser's own check of a field: its message in the page language, or null when it passes. */
  check(name: string): string | null {
    const check = this.checks.get(name);
    return check ? check(this.input(name)!.value) : null;
  }

  private markField(name: string, message: string | null): void {
    const input = this.input(name)!;
    const error = byId(`${name}-error`);
    error.textContent = message ?? '';
    error.hidden = message === null;
    if (message) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }

  private validateField(name: string): string | null {
    const message = this.check(name);
    this.markField(name, message);
    return message;
  }

  /**
   * Shows each message next to its field (aria-invalid, the field's error slot) and all of them
   * in the summary, which takes the focus: the browser's checks and the service's refusals alike.
   */
  showErrors(errors: Record<string, string>): void {
    const summary = byId('error-summary');
    summary.replaceChildren();
    const heading = document.createElement('p');
    heading.textContent = this.t('errorSummary');
    const list = document.createElement('ul');
    for (const [name, message] of Object.entries(errors)) {
      this.markField(name, message);
      const item = document.createElement('li');
      const link = document.createElement('a');
      link.href = `#${name}`;
      link.textContent = message;
      link.addEventListener('click', (event) => {
        event.preventDefault();
        this.input(name)!.focus();
      });
      item.append(link);
      list.append(item);
    }
    summary.append(heading, list);
    summary.hidden = false;
    summary.focus();
  }

  /** Validates every field; on failure shows and focuses the summary and returns null. */
  collect(): CardInput | null {
    const failed: Record<string, string> = {};
    for (const name of this.checks.keys()) {
      const message = this.validateField(name);
      if (message !== null) failed[name] = message;
    }
    const summary = byId('error-summary');
    if (Object.keys(failed).length > 0) {
      this.showErrors(failed);
      return null;
    }
    summary.hidden = true;
    const expiry = parseExpiry(this.input('expiry')!.value)!;
    const value = (name: string) => this.input(name)?.value.trim() || undefined;
    const input: CardInput = { card_number: digitsOf(this.input('card_number')!.value), expiry_month: String(expiry.month).padStart(2, '0'), expiry_year: expiry.year, cvv: this.input('cvv')!.value.trim() };
    for (const name of ['name', 'email', 'address', 'city', 'zip', 'country'] as const) {
      const text = value(name);
      if (text !== undefined) input[name] = text;
    }
    return input;
  }

  /**
   * Pays on submit: a card that passes the checks goes to `pay`, with the form locked (and the
   * outcome of an earlier try hidden) until that settles; what it settles with goes to `settled`.
   */
  payOnSubmit<Result>(options: { pay: (card: CardInput) => Promise<Result>; settled: (result: Result) => void }): void {
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      const card = this.collect();
      if (!card) return;
      byId('outcome').hidden = true;
      this.setBusy(true, this.t('processing'));
      void options.pay(card).then((result) => {
        this.setBusy(false, '');
        options.settled(result);
      });
    });
    // Rendered disabled (cardFormView): the form works from now on, its data never sent as a form.
    byId<HTMLButtonElement>('submit').disabled = false;
  }

  /** Locks the form while a payment is in flight. */
  setBusy(busy: boolean, status: string): void {
    const button = byId<HTMLButtonElement>('submit');
    button.disabled = busy;
    button.setAttribute('aria-busy', String(busy));
    this.form.querySelectorAll<HTMLInputElement>('input, select').forEach((element) => (element.readOnly = busy));
    byId('status').textContent = status;
  }

  /**
   * After a decline the card fields are cleared (a new card or a corrected one is typed). The focus
   * stays on the outcome above them, which says why; Tab goes on to the card number.
   */
  clearCard(): void {
    for (const name of ['card_number', 'expiry', 'cvv']) this.input(name)!.value = '';
    this.numberDigits = '';
    byId('card-brand').textContent = '';
  }
}
