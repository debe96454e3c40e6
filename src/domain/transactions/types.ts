import type { TransactionStatus } from './states.js';
import type { StoredAnswer } from '../../http/idempotency.js';
import type { TransactionJson } from './view.js';
import type { Queryable } from '../../storage/db.js';

export const transactionTypes = [
  'authorize', 'capture', 'chargeback', 'chargeback-reversal', 'chargeback-override', 'purchase', 'refund',
  'retained_authorize', 'retained_purchase', 'vault', 'void',
] as const;
export type TransactionType = (typeof transactionTypes)[number];

/** Types recorded by platform operators only (CLI); never by a site's users. */
export const adminTransactionTypes = ['chargeback', 'chargeback-reversal', 'chargeback-override'] as const satisfies readonly TransactionType[];
export type AdminTransactionType = (typeof adminTransactionTypes)[number];

/** Types that put a card through the processor's authorise call. */
export const cardTypes = ['vault', 'purchase', 'authorize', 'retained_purchase', 'retained_authorize'] as const satisfies readonly TransactionType[];
export type CardTransactionType = (typeof cardTypes)[number];

/** Types acting on an earlier transaction at the processor, reserving part of its remaining amount. */
export const followUpTypes = ['capture', 'void', 'refund'] as const satisfies readonly TransactionType[];
export type FollowUpTransactionType = (typeof followUpTypes)[number];

export function isAdminType(type: TransactionType): type is AdminTransactionType {
  return (adminTransactionTypes as readonly string[]).includes(type);
}
export function isCardType(type: TransactionType): type is CardTransactionType {
  return (cardTypes as readonly string[]).includes(type);
}
export function isFollowUpType(type: TransactionType): type is FollowUpTransactionType {
  return (followUpTypes as readonly string[]).includes(type);
}
/** Charges of a vaulted card, named by its vault transaction (`linked_id`) or its vault token. */
export function isRetainedType(type: TransactionType): boolean {
  return type === 'retained_purchase' || type === 'retained_authorize';
}
export function capturesAtOnce(type: TransactionType): boolean {
  return type === 'purchase' || type === 'retained_purchase';
}
export function isAuthorization(type: TransactionType): boolean {
  return type === 'authorize' || type === 'retained_authorize';
}
/** Transactions whose money sits in the channel's funds and can be refunded or charged back. */
export function isCapturedMoney(type: TransactionType): boolean {
  return type === 'purchase' || type === 'retained_purchase' || type === 'capture';
}

export const paymentMethods = ['bank-transfer', 'credit-card'] as const;
export type PaymentMethod = (typeof paymentMethods)[number];

/** Where a transaction came from (recorded, not shown on the wire). */
export type TransactionSource = 'api' | 'modal' | 'vault_app' | 'payment_request' | 'cli';

/**
 * The hosted pages, where a cardholder (or whoever holds the page's link) pays: the card must be
 * one entered on the page (a capture token, or a sandbox token on a test channel), never a card
 * already in the vault named by its vault token, which would charge a stored card without its
 * CVV for anyone who learnt the token (read-only users list them).
 */
export function isHostedSource(source: TransactionSource): boolean {
  return source === 'modal' || source === 'vault_app' || source === 'payment_request';
}

/** Who asks for a transaction: the REST route, a hosted page (on a user's behalf) or the CLI. */
export interface Actor {
  siteId: number;
  /** Null for platform operators working through the CLI. */
  userId: number | null;
  source: TransactionSource;
  /** Platform admins alone may record the chargeback types. */
  isPlatformAdmin: boolean;
  /**
   * The request's Idempotency-Key, claimed by the attempt's database transaction together with
   * the new row (issue 7); `onClaimed` runs once that transaction committed. A key another
   * request holds is refused with IdempotencyKeyTakenError, nothing written.
   */
  idempotency?: {
    key: string;
    requestHash: string;
    onClaimed: () => void;
    /**
     * The answer to store for the key, stored by the settlement's database transaction, so the key
     * is done when the payment's outcome commits (one write and commit less; the caller knows the
     * wire form). Called inside that transaction; a failure fails the settlement.
     */
    answer?: (transaction: TransactionJson) => StoredAnswer | Promise<StoredAnswer>;
  };
  /**
   * The credential epoch (migration 016) at which the caller's principal was remembered, not read
   * again since (the REST route; issue 7): the attempt's look-up reads the epoch in its own
   * statement. Found unchanged, `confirmed` is called; found changed, the request is refused
   * with StalePrincipalError before anything is written, and the caller authenticates afresh.
   */
  principalEpoch?: { epoch: string; confirmed: () => void };
  /**
   * Runs once the attempt's row is committed, before the processor is called. A caller that
   * counts attempts (the hosted pages) learns from it whether a failure came before or after the
   * bank could be asked: a refusal or a server fault before it (a card key missing from CARD_KEYS)
   * is not the payer's attempt; a failure after it names the recorded transaction, which the
   * page then waits on.
   */
  onAttemptRecorded?: (transactionId: number) => void;
  /** Runs in the database transaction that records a chargeback, with its id (the REST route notes it on the request's Idempotency-Key). */
  onAdminRecorded?: (tx: Queryable, transactionId: number) => Promise<void>;
}

/** The caller's remembered principal is stale (a credential changed since): nothing was written. */
export class StalePrincipalError extends Error {
  constructor() {
    super('the remembered principal is stale');
  }
}

/** The Idempotency-Key of the request was claimed by another request first. */
export class IdempotencyKeyTakenError extends Error {
  constructor() {
    super('the Idempotency-Key is held by another request');
  }
}

export interface BookingShareInput {
  id: number;
  currency: string;
  total: number;
}

/** A create request in domain words (the route maps the wire names once). */
export interface TransactionInput {
  type: TransactionType;
  channelId?: number;
  currency?: string;
  total?: number;
  bookings?: BookingShareInput[];
  linkedId?: number;
  /** Capture token, permanent vault token or (test channels) sandbox token. */
  token?: string;
  language?: string;
  payeeName?: string;
  payeeSurname?: string;
  payeeEmail?: string;
  country?: string;
  psp?: string;
  paymentMethod?: PaymentMethod;
  ipAddress?: string;
  attempt3ds?: boolean;
  redirectUrl?: string;
  /** Accepted now, applied by the allocations work (docs/payments.md). */
  allocations?: unknown[];
  /** Vaulting app `fail_code` (test channels only). */
  forcedDeclineCode?: string;
}

/** A transactions row, camelCase. */
export interface TransactionRecord {
  id: number;
  siteId: number;
  uuid: string;
  channelId: number;
  authorId: number | null;
  source: TransactionSource;
  type: TransactionType;
  status: TransactionStatus;
  total: number;
  currency: string;
  totalRemaining: number;
  reservedTotal: number;
  linkedId: number | null;
  cardId: number | null;
  token: string | null;
  processorReference: string | null;
  authCode: string | null;
  content: string;
  declineCode: string | null;
  language: string;
  attempt3ds: boolean;
  redirectUrl: string | null;
  threeDsStatus: string | null;
  challengeUrl: string | null;
  lookupAttempts: number;
  createdAt: Date;
  modifiedAt: Date;
}
