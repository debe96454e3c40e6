/**
 * The one transaction status table `{from, event} → to` (decisions.md "Status transitions").
 * Every status change goes through `nextStatus`; anything not in the table is refused with a
 * named error. A new row is written `incomplete` before the processor is called, so the
 * spec's "(new) → complete | failed | pending" are the `incomplete` rows below.
 */

export const transactionStatuses = ['complete', 'expired', 'failed', 'incomplete', 'locked', 'pending'] as const;
export type TransactionStatus = (typeof transactionStatuses)[number];

export const transactionEvents = ['approved', 'declined', 'challenge', 'expire', 'chargeback', 'chargeback_closed'] as const;
export type TransactionEvent = (typeof transactionEvents)[number];

interface Transition {
  from: TransactionStatus;
  event: TransactionEvent;
  to: TransactionStatus;
  /** Why this transition exists, for docs and test names. */
  because: string;
}

export const transactionTransitions: readonly Transition[] = [
  { from: 'incomplete', event: 'approved', to: 'complete', because: 'the processor approved (answer, or reconciliation look-up)' },
  { from: 'incomplete', event: 'declined', to: 'failed', because: 'the processor declined, or reconciliation gave up on an unknown outcome' },
  { from: 'incomplete', event: 'challenge', to: 'pending', because: 'the issuer asks for a 3DS challenge' },
  { from: 'pending', event: 'approved', to: 'complete', because: 'the cardholder passed the 3DS challenge and the bank approved' },
  { from: 'pending', event: 'declined', to: 'failed', because: 'the 3DS challenge failed or the bank declined after it' },
  { from: 'pending', event: 'expire', to: 'expired', because: 'pending for longer than limits.pendingExpiryMinutes (job)' },
  { from: 'complete', event: 'chargeback', to: 'locked', because: 'an operator recorded a chargeback' },
  { from: 'locked', event: 'chargeback', to: 'locked', because: 'another chargeback of it while one is open (the spec: any → locked)' },
  { from: 'locked', event: 'chargeback_closed', to: 'complete', because: 'every chargeback of it was reversed' },
];

/** A refused transition, named like `transition_refused_complete_expire`. */
export class TransitionRefusedError extends Error {
  readonly code: string;
  constructor(
    readonly from: TransactionStatus,
    readonly event: TransactionEvent,
  ) {
    super(`transaction status ${from} has no transition on ${event}`);
    this.code = `transition_refused_${from}_${event}`;
  }
}

export function nextStatus(from: TransactionStatus, event: TransactionEvent): TransactionStatus {
  const transition = transactionTransitions.find((candidate) => candidate.from === from && candidate.event === event);
  if (!transition) throw new TransitionRefusedError(from, event);
  return transition.to;
}

export function canTransition(from: TransactionStatus, event: TransactionEvent): boolean {
  return transactionTransitions.some((candidate) => candidate.from === from && candidate.event === event);
}

/** Final statuses: the row will not change again except by chargebacks (complete ↔ locked). */
export function isSettled(status: TransactionStatus): boolean {
  return status === 'complete' || status === 'failed' || status === 'expired' || status === 'locked';
}
