/**
 * The boundary between transaction logic and whoever moves the money. The sandbox implements
 * it; a real acquirer would be another implementation, with no change to the transaction code.
 *
 * Every call is idempotent by `reference` (our transaction uuid): asking twice for the same
 * reference never moves money twice, and `lookup(reference)` tells what happened to a call
 * whose answer was lost (the reconciliation job relies on this).
 */

/** The spec's card types; a transaction shows null when the processor named none. */
export const cardBrands = ['visa', 'master', 'amex', 'jcb', 'diners', 'discover', 'other'] as const;
export type CardBrand = (typeof cardBrands)[number];

/** Card data as the processor needs it; exists only in memory for the length of one call. */
export interface ProcessorCard {
  pan: string;
  expiryMonth: number;
  expiryYear: number;
  /** Present only for the first authorisation after capture; never stored. */
  cvv?: string;
  holderName?: string;
}

export interface ThreeDsRequest {
  /** Where the cardholder's browser goes after a challenge; our own return route. */
  returnUrl: string;
  /** Shown on the challenge page (e.g. the channel's descriptor or name). */
  merchantName?: string;
  /**
   * The cardholder's language (EMV 3-D Secure's browserLanguage), a catalogue code: the payment's,
   * which the hosted page around the challenge is shown in. The issuer's page speaks it.
   */
  language?: string;
}

export interface AuthoriseRequest {
  reference: string;
  /** Minor units; 0 for a verify (vault) call. */
  amount: number;
  currency: string;
  card: ProcessorCard;
  /** true for purchase (authorise and capture at once), false for authorize. */
  capture: boolean;
  mode: 'test' | 'live';
  /** null: do not attempt 3DS. */
  threeDs: ThreeDsRequest | null;
  /**
   * A retained charge (merchant-initiated): the cardholder is absent, and the card was verified
   * when it was vaulted. Issuers take such charges without 3-D Secure; `threeDs` is then null.
   */
  merchantInitiated: boolean;
  /** A forced decline code (vaulting app `fail_code`), honoured on test channels only. */
  forcedDeclineCode?: string;
}

export interface FollowUpRequest {
  reference: string;
  /** The reference of the original authorisation or payment at the processor. */
  processorReference: string;
  amount: number;
  currency: string;
  mode: 'test' | 'live';
}

/**
 * What 3-D Secure did for an authorisation that requested it (absent when 3DS was not requested):
 * `not_enrolled` the card takes no part in 3DS and was authorised without it; `frictionless` the
 * issuer authenticated without a challenge; `authenticated` / `failed` the cardholder's answer to
 * a challenge.
 */
export type ThreeDsResult = 'not_enrolled' | 'frictionless' | 'authenticated' | 'failed';

export type ProcessorOutcome =
  | { kind: 'approved'; processorReference: string; authCode: string; message: string; threeDs?: ThreeDsResult }
  | { kind: 'declined'; processorReference: string | null; code: string; message: string; threeDs?: ThreeDsResult }
  /** 3DS challenge: the cardholder must visit `challengeUrl`; the outcome comes later via lookup. */
  | { kind: 'challenge'; processorReference: string; challengeUrl: string; message: string };

export type LookupOutcome = ProcessorOutcome | { kind: 'unknown' };

export interface Connector {
  readonly name: string;
  /**
   * Whether an approval moves real money: true for a real acquirer. The sandbox's approvals move
   * none, so production refuses live-mode payments through it (takesLiveMode in index.ts).
   */
  readonly movesMoney: boolean;
  /** Authorise (and capture when `capture`), or verify when amount is 0. */
  authorise(request: AuthoriseRequest): Promise<ProcessorOutcome>;
  capture(request: FollowUpRequest): Promise<ProcessorOutcome>;
  void(request: FollowUpRequest): Promise<ProcessorOutcome>;
  refund(request: FollowUpRequest): Promise<ProcessorOutcome>;
  /** What happened to the call made with `reference` (status look-up for reconciliation and 3DS). */
  lookup(reference: string): Promise<LookupOutcome>;
}

/** Thrown when the processor did not answer within processorTimeoutMs: the outcome is unknown. */
export class ProcessorTimeoutError extends Error {
  constructor(reference: string) {
    super(`processor did not answer for ${reference}`);
  }
}
