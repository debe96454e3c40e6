import type { AppContext } from '../../context.js';
import { limits } from '../../limits.js';
import { textProblem } from '../text.js';
import { operatorSettlementMessage } from './failures.js';
import { completeRow, failRow, lockRows } from './settle.js';
import { loadTransactionViews, type TransactionJson } from './view.js';

/**
 * An operator's settlement of a transaction the processor never settled for the service: an
 * `incomplete` row whose look-ups go unanswered (the reconcile job never fails those, since the
 * charge may have been approved: docs/payments.md "Jobs"), or a 3DS `pending` one the same. The
 * operator reads the outcome off the processor's own records (its dashboard, its settlement file)
 * and states it here; the row then moves as if the processor had answered: approved → complete
 * with its ledger entries and booking money, declined → failed with its reservation released,
 * mails requested, all in one database transaction that locks the row first, so it cannot race
 * the jobs or a late answer (whoever locks second finds the row settled).
 */
export type OperatorOutcome =
  | { kind: 'approved'; processorReference: string; authCode: string | null }
  | { kind: 'declined'; processorReference: string | null; code: string | null };

export class OperatorSettleError extends Error {}

export async function settleByOperator(
  context: AppContext,
  input: { siteId: number; id: number; outcome: OperatorOutcome; reason: string },
): Promise<TransactionJson> {
  const problem = textProblem(input.reason, { maxLength: limits.operatorSettleReasonLengthMax, kind: 'name' });
  if (problem) throw new OperatorSettleError(`--reason ${problem}`);
  const at = context.now();
  await context.db.transaction(async (tx) => {
    // lockRows answers a missing row as missing; lockRow throws, and a catch would hide a real failure.
    const row = (await lockRows(tx, [input.id])).get(input.id);
    if (!row || row.siteId !== input.siteId) throw new OperatorSettleError(`transaction ${input.id} does not exist in this site`);
    if (row.status !== 'incomplete' && row.status !== 'pending') {
      throw new OperatorSettleError(`transaction ${input.id} is ${row.status}: only incomplete and pending transactions wait for an outcome`);
    }
    // The processor call may still be answered (processorTimeoutMs) and the job may still look it
    // up: an outcome stated while the service could yet learn the real one is a guess.
    const ageMinutes = (at.getTime() - row.createdAt.getTime()) / 60_000;
    if (ageMinutes < limits.operatorSettleAfterMinutes) {
      throw new OperatorSettleError(`transaction ${input.id} is ${Math.floor(ageMinutes)} minutes old: wait until it is ${limits.operatorSettleAfterMinutes} minutes old, the service may still hear from the processor`);
    }
    const message = operatorSettlementMessage(input.reason);
    const outcome = input.outcome;
    if (outcome.kind === 'approved') await completeRow(tx, row, { processorReference: outcome.processorReference, authCode: outcome.authCode, message }, at);
    else await failRow(tx, row, { code: outcome.code, message, processorReference: outcome.processorReference }, at);
  });
  const [view] = await loadTransactionViews(context.db, context.config, input.siteId, [input.id]);
  return view!;
}
