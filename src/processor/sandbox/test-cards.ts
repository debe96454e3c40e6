import type { CardBrand } from '../connector.js';

/**
 * The sandbox's test cards (decisions.md) and what the sandbox does with each. Any future
 * expiry and any 3-digit CVV (4 for Amex) work. A sandbox token stands for its card on test
 * channels.
 */
export type TestCardBehaviour = 'approve' | 'decline' | 'frictionless' | 'challenge' | 'no_answer';

export interface TestCard {
  pan: string;
  sandboxToken: string;
  brand: CardBrand;
  behaviour: TestCardBehaviour;
  description: string;
}

export const testCards: readonly TestCard[] = [
  { pan: '4111111111111111', sandboxToken: 'tok_visa', brand: 'visa', behaviour: 'approve', description: 'Visa, success' },
  { pan: '4000000000000002', sandboxToken: 'tok_visa_declined', brand: 'visa', behaviour: 'decline', description: 'Visa, declined' },
  { pan: '5555555555554444', sandboxToken: 'tok_mastercard', brand: 'master', behaviour: 'approve', description: 'Mastercard, success' },
  { pan: '5105105105105100', sandboxToken: 'tok_mastercard_declined', brand: 'master', behaviour: 'decline', description: 'Mastercard, declined' },
  { pan: '378282246310005', sandboxToken: 'tok_amex', brand: 'amex', behaviour: 'approve', description: 'Amex, success' },
  { pan: '4000000000001000', sandboxToken: 'tok_visa_3ds_frictionless', brand: 'visa', behaviour: 'frictionless', description: 'Visa, 3DS2 frictionless' },
  { pan: '4200000000000042', sandboxToken: 'tok_visa_3ds_challenge', brand: 'visa', behaviour: 'challenge', description: 'Visa, 3DS2 challenge' },
  { pan: '5200000000001005', sandboxToken: 'tok_mastercard_3ds_frictionless', brand: 'master', behaviour: 'frictionless', description: 'Mastercard, 3DS2 frictionless' },
  { pan: '5200000000002235', sandboxToken: 'tok_mastercard_3ds_challenge', brand: 'master', behaviour: 'challenge', description: 'Mastercard, 3DS2 challenge' },
  { pan: '4000000000000093', sandboxToken: 'tok_visa_no_answer', brand: 'visa', behaviour: 'no_answer', description: 'Visa, processor never answers' },
];

const byPan = new Map(testCards.map((card) => [card.pan, card]));
const byToken = new Map(testCards.map((card) => [card.sandboxToken, card]));

export function testCardByPan(pan: string): TestCard | undefined {
  return byPan.get(pan);
}

export function testCardBySandboxToken(token: string): TestCard | undefined {
  return byToken.get(token);
}

export function isSandboxToken(token: string): boolean {
  return token.startsWith('tok_');
}
