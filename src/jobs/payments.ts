import type { AppContext } from '../context.js';
import type { Queryable } from '../storage/db.js';
import { purgeIdempotencyKeys } from '../http/idempotency.js';
import { limits } from '../limits.js';
import { boundedCall, type CallResult } from '../domain/transactions/processor-call.js';
import { lockTransactionForJob } from '../domain/transactions/repository.js';
import { completeRow, expireRow, failRow } from '../domain/transactions/settle.js';
import type { TransactionRecord } from '../domain/transactions/types.js';
import { forEachConcurrently } from '../concurrently.js';
import { batchSizeWithin } from '../bounded.js';
import { serviceFailures } from '../domain/transactions/failures.js';

/**
 * The payments jobs (docs/payments.md "Jobs"). Each handles one bounded batch: candidates are
 * read without locks, the processor is asked outside any database transaction, and each row is
 * then settled in its own transaction that locks it with `FOR UPDATE SKIP LOCKED` and re-checks
 * its status, so two processes running the same job never settle a row twice.
 */

export interface JobOptions {
  batchSize?: number;
}

export interface SettlementRun {
  examined: number;
  completed: number;
  failed: number;
  expired: number;
  /** Still unknown at the processor; looked up again next run. */
  unresolved: number;
  /**
   * Rows whose handling threw (a bug, a row the code does not expect): left as they were and
   * moved behind the others (`lookup_attempts`), so they cannot hold the rest of every batch up.
   * The job's log line names them.
   */
  errors: { id: number; message: string }[];
}

const emptyRun = (): SettlementRun => ({ examined: 0, completed: 0, failed: 0, expired: 0, unresolved: 0, errors: [] });

function batchSizeOf(options: JobOptions): number {
  return batchSizeWithin(options.batchSize, { fallback: limits.jobBatchSize, max: limits.jobBatchSize * 10 });
}

/**
 * The rows a run examines: those looked up in vain the fewest times first, then the oldest. By age
 * alone, a batch's worth of rows the processor has no record of (an outage) would fill every run
 * until they are given up on, an hour later, and a newer row the processor did settle would wait
 * behind them. Reconciliation counts `lookup_attempts` for unresolved rows, and both jobs for rows
 * whose handling threw; other pending rows keep their age order.
 */
async function candidates(context: AppContext, status: 'pending' | 'incomplete', olderThan: Date, batchSize: number): Promise<number[]> {
  const rows = await context.db.query<{ id: number }>(
    'SELECT id FROM transactions WHERE status = $1 AND created_at < $2 ORDER BY lookup_attempts, created_at, id LIMIT $3',
    [status, olderThan, batchSize],
  );
  return rows.map((row) => row.id);
}

/** Moves a row behind the others in `candidates`: a look-up that settled nothing, or a handling that threw. */
async function countLookupInVain(q: Queryable, id: number): Promise<void> {
  await q.query('UPDATE transactions SET lookup_attempts = lookup_attempts + 1 WHERE id = $1', [id]);
}

/**
 * Runs `handle` for each candidate, up to limits.jobLookupConcurrency rows at once (each waits on
 * a processor look-up, up to its timeout: one at a time, an outage would make a run of 50 rows take
 * 50 timeouts). A row whose handling throws is recorded and set back, and the others go on.
 */
async function forEachCandidate(
  context: AppContext,
  status: 'pending' | 'incomplete',
  olderThan: Date,
  options: JobOptions,
  run: SettlementRun,
  handle: (id: number) => Promise<void>,
): Promise<void> {
  await forEachConcurrently(await candidates(context, status, olderThan, batchSizeOf(options)), limits.jobLookupConcurrency, async (id) => {
    run.examined += 1;
    try {
      await handle(id);
    } catch (error) {
      run.errors.push({ id, message: (error as Error).message });
      // If this fails too, the database is away: the run fails and the next one tries again.
      await countLookupInVain(context.db, id);
    }
  });
}

async function lookup(context: AppContext, id: number): Promise<CallResult | undefined> {
  const row = await context.db.maybeOne<{ uuid: string }>('SELECT uuid FROM transactions WHERE id = $1', [id]);
  if (!row) return undefined;
  return boundedCall(context.config.processorTimeoutMs, row.uuid, () => context.connector.lookup(row.uuid));
}

/** Applies `decide` to the row if it is still in `status` and no other worker holds it. */
async function settleIfStill(
  context: AppContext,
  id: number,
  status: 'pending' | 'incomplete',
  decide: (tx: Queryable, row: TransactionRecord, at: Date) => Promise<Exclude<keyof SettlementRun, 'examined' | 'errors'>>,
  run: SettlementRun,
): Promise<void> {
  const at = context.now();
  const outcome = await context.db.transaction(async (tx) => {
    const row = await lockTransactionForJob(tx, id);
    if (!row || row.status !== status) return null;
    return decide(tx, row, at);
  });
  if (outcome) run[outcome] += 1;
}

/** The processor's definite answer (approved or declined) settles the row; otherwise null. */
async function settleByAnswer(tx: Queryable, row: TransactionRecord, result: CallResult, at: Date): Promise<'completed' | 'failed' | null> {
  if (result.kind === 'approved') {
    await completeRow(tx, row, { processorReference: result.processorReference, authCode: result.authCode, message: result.message, threeDs: result.threeDs }, at);
    return 'completed';
  }
  if (result.kind === 'declined') {
    await failRow(tx, row, { code: result.code, message: result.message, processorReference: result.processorReference, threeDs: result.threeDs }, at);
    return 'failed';
  }
  return null;
}

/**
 * 3DS-pending transactions older than limits.pendingExpiryMinutes: the processor is asked first
 * (a cardholder who authenticated but never came back to us still paid), the rest expire. A
 * look-up that got no answer decides nothing: the cardholder may have paid, so the row stays
 * pending and is asked again next run.
 */
export async function expirePendingTransactions(context: AppContext, options: JobOptions = {}): Promise<SettlementRun> {
  const run = emptyRun();
  const cutoff = new Date(context.now().getTime() - limits.pendingExpiryMinutes * 60_000);
  await forEachCandidate(context, 'pending', cutoff, options, run, async (id) => {
    const result = await lookup(context, id);
    if (!result) return;
    await settleIfStill(context, id, 'pending', async (tx, row, at) => {
      const settled = await settleByAnswer(tx, row, result, at);
      if (settled) return settled;
      if (result.kind === 'unknown' && !result.noRecord) {
        await countLookupInVain(tx, row.id);
        return 'unresolved';
      }
      await expireRow(tx, row, at);
      return 'expired';
    }, run);
  });
  return run;
}

/**
 * `incomplete` transactions limits.reconcileAfterSeconds past their request's wait for the
 * processor (PROCESSOR_TIMEOUT_MS: their request gave up waiting): the processor's record decides. Approved → complete with its entries;
 * declined → failed; a challenge nobody was shown → failed; no record at all → failed once
 * limits.reconcileGiveUpMinutes have passed (the processor never received the call, so no money
 * moved), otherwise asked again next run. A look-up that got no answer is never taken for "no
 * record": however long the processor stays silent, the row stays `incomplete` (counted in
 * `lookup_attempts`, logged by the job as unresolved) until it answers, since failing an approved
 * charge would let the booking be charged twice.
 */
export async function reconcileIncompleteTransactions(context: AppContext, options: JobOptions = {}): Promise<SettlementRun> {
  const run = emptyRun();
  const cutoff = new Date(context.now().getTime() - context.config.processorTimeoutMs - limits.reconcileAfterSeconds * 1000);
  await forEachCandidate(context, 'incomplete', cutoff, options, run, async (id) => {
    const result = await lookup(context, id);
    if (!result) return;
    await settleIfStill(context, id, 'incomplete', async (tx, row, at) => {
      const settled = await settleByAnswer(tx, row, result, at);
      if (settled) return settled;
      switch (result.kind) {
        case 'challenge':
          await failRow(tx, row, { code: null, message: serviceFailures.challengeNotPresented, processorReference: result.processorReference }, at);
          return 'failed';
        default: {
          const giveUpAt = row.createdAt.getTime() + limits.reconcileGiveUpMinutes * 60_000;
          if (result.kind === 'unknown' && result.noRecord && at.getTime() >= giveUpAt) {
            await failRow(tx, row, { code: null, message: serviceFailures.noProcessorAnswer }, at);
            return 'failed';
          }
          await countLookupInVain(tx, row.id);
          return 'unresolved';
        }
      }
    }, run);
  });
  return run;
}

/**
 * A full batch purged means more keys may be past their retention: `backlog` has the runner go
 * on at once, since the keys pile up as fast as payments come (one per request that sent one).
 * The settlement jobs report none: their unresolved rows stay candidates, so a full batch does
 * not mean progress.
 */
export async function purgeExpiredIdempotencyKeys(context: AppContext, options: JobOptions = {}): Promise<{ purged: number; backlog: boolean }> {
  const batchSize = batchSizeOf(options);
  const purged = await purgeIdempotencyKeys(context.db, { now: context.now(), batchSize });
  return { purged, backlog: purged === batchSize };
}
