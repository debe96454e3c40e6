/**
 * The payments core (docs/payments.md). What other parts use:
 * - `createTransaction(context, actor, input)` → the Transaction JSON (any type; the hosted
 *   pages call it directly with `actor.source` 'modal' | 'vault_app' | 'payment_request').
 * - `loadTransactionViews(db, config, siteId, ids)`, `listTransactionIds(...)`.
 * - `completeThreeDsReturn(context, uuid)` for the 3DS return route.
 * - `completionPostings(facts)` / `completionBookingDeltas(...)`: the ledger seam allocations extend.
 * - the status table: `nextStatus`, `transactionTransitions`, `TransitionRefusedError`.
 */
export { createTransaction, threeDsReturnUrl } from './create.js';
export { loadTransactionViews, type TransactionJson, type TransactionBookingJson } from './view.js';
export { listTransactionIds, transactionOrderColumns, type TransactionFilters } from './list.js';
export { completeThreeDsReturn, appendOutcome, type ThreeDsReturn } from './three-ds.js';
export { completionPostings, completionBookingDeltas, type MoneyFacts, type BookingDelta } from './effects.js';
export { nextStatus, canTransition, transactionTransitions, transactionStatuses, TransitionRefusedError, type TransactionStatus, type TransactionEvent } from './states.js';
export { transactionHash } from './hash.js';
export { findTransaction, findTransactionByUuid } from './repository.js';
export * from './types.js';
