import { invalidParam, invalidParams } from '../../http/errors.js';
import { limits } from '../../limits.js';
import type { CardBrand } from '../../processor/connector.js';
import { cvvLength, luhnValid } from './card-types.js';
import { isTestMode } from '../channels.js';

/**
 * The vault's rules as checks that throw the spec's 400 `rest_invalid_param`, keyed by the wire
 * name of the offending field.
 */

/** What the channel rules need to know of a channel (camelCase of the channel row). */
export interface CardChannel {
  currency: string;
  accountType: string;
}

/** Spec: a vaulted card may be used only on channels with the currency and account_type it was vaulted to. */
export function assertCardUsableOnChannel(card: { currency: string; accountType: string }, channel: CardChannel, param = 'channels'): void {
  if (card.currency.trim() === channel.currency.trim() && card.accountType === channel.accountType) return;
  throw invalidParam(param, `This card was vaulted to a ${card.currency.trim()} ${card.accountType} channel and can only be used on channels with the same currency and account type.`);
}


/** Test cards and sandbox tokens only on test channels; test channels take nothing else. */
export function assertCardAllowedInMode(card: { isTestCard: boolean }, accountMode: string, param = 'token'): void {
  if (isTestMode(accountMode) && !card.isTestCard) {
    throw invalidParam(param, 'Test channels accept only the sandbox test cards; use a live channel for real cards.');
  }
  if (!isTestMode(accountMode) && card.isTestCard) {
    throw invalidParam(param, 'Test cards and sandbox tokens can only be used on test channels.');
  }
}

export interface CardNumberInput {
  pan: string;
  expiryMonth: number;
  expiryYear: number;
  cvv: string;
}

/** Digits only: spaces and dashes people type are dropped; anything else stays and fails. */
export function normalisePan(input: string): string {
  return input.replace(/[\s-]/g, '');
}

/** Whether a card has expired at `now`: it is valid through the last day of its expiry month, UTC. */
export function cardHasExpired(expiry: { expiryMonth: number; expiryYear: number }, now: Date): boolean {
  const year = now.getUTCFullYear();
  return expiry.expiryYear < year || (expiry.expiryYear === year && expiry.expiryMonth < now.getUTCMonth() + 1);
}

/**
 * A stored card is charged only while it is valid, as it was captured: one that has expired since
 * would go to the bank with an expiry it declines (and the attempt would stand as failed). Keyed
 * by what named the card (`token` or `linked_id`).
 */
export function assertCardNotExpired(card: { expiryMonth: number; expiryYear: number }, now: Date, param: string): void {
  if (!cardHasExpired(card, now)) return;
  const expiry = `${String(card.expiryMonth).padStart(2, '0')}/${card.expiryYear}`;
  throw invalidParam(param, `The card expired at the end of ${expiry}; vault it again with its new expiry date.`);
}

/**
 * Luhn, expiry (valid through the end of its month, UTC) and CVV length for the brand; every
 * problem reported at once.
 */
export function assertCardDetailsValid(input: CardNumberInput, brand: CardBrand, now: Date): void {
  const problems: Record<string, string> = {};
  if (!luhnValid(input.pan)) problems.card_number = 'The card number is not valid.';
  if (!Number.isInteger(input.expiryMonth) || input.expiryMonth < 1 || input.expiryMonth > 12) {
    problems.expiry_month = 'The expiry month must be 1 to 12.';
  } else if (!Number.isInteger(input.expiryYear) || input.expiryYear > now.getUTCFullYear() + limits.cardExpiryYearsMax) {
    problems.expiry_year = 'The expiry year is not valid.';
  } else if (cardHasExpired(input, now)) {
    problems.expiry_year = 'The card has expired.';
  }
  const length = cvvLength(brand);
  if (!new RegExp(`^[0-9]{${length}}$`).test(input.cvv)) problems.cvv = `The security code must be ${length} digits for this card.`;
  if (Object.keys(problems).length > 0) throw invalidParams(problems);
}
