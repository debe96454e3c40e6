import type { AppContext } from '../../context.js';
import { forEachConcurrently } from '../../concurrently.js';
import { limits } from '../../limits.js';
import { gmtDateTime } from '../gmt.js';
import { boundedCall } from './processor-call.js';
import { adminTransactionTypes } from './types.js';

/**
 * The books against the processor's own records (`trustfare processor check`): each settled
 * transaction that called the processor is looked up there (Connector.lookup, by its uuid, the
 * reference every call carries) and the two outcomes compared. Two disagreements matter, and
 * neither can be seen from the ledger alone, which balances either way:
 * - `booked_without_approval`: the row is `complete` (or `locked` under a chargeback) and the
 *   processor declined it or has no record of it: the books hold money that never moved;
 * - `approved_not_booked`: the row is `failed` or `expired` and the processor approved it: the
 *   cardholder was charged while the booking shows unpaid, and may be charged again.
 * A look-up the processor does not answer decides nothing; such rows are listed as `unanswered`
 * for a later run. Nothing is changed: what to do about a disagreement (a refund at the processor,
 * a note to the merchant) is the operator's call. Read-only, bounded (`processorCheckRowsMax`).
 */
export interface ProcessorCheckOptions {
  siteId?: number;
  /** Transactions created at or after this instant. */
  since: Date;
  /** Transactions created before this instant. */
  until: Date;
  /** At most this many transactions, the oldest first; the report says when more were left. */
  limit: number;
}

export type ProcessorCheckProblemKind = 'booked_without_approval' | 'approved_not_booked';

export interface ProcessorCheckProblem {
  problem: ProcessorCheckProblemKind;
  transaction_id: number;
  site_id: number;
  transaction_types: string;
  status: string;
  total: number;
  currencies: string;
  created: string;
  /** What the processor's record says. */
  processor: 'approved' | 'declined' | 'challenge' | 'no record';
}

export interface ProcessorCheckReport {
  /** No disagreement and no look-up left unanswered: every transaction checked agrees. */
  ok: boolean;
  checked: number;
  /** Rows looked up whose look-up got no answer: check again later. */
  unanswered: number[];
  problems: ProcessorCheckProblem[];
  /** Created before `until` but past `limit`: run again with `--since next_since`. */
  more: boolean;
  /**
   * With `more`: the last checked row's creation instant (ISO 8601, milliseconds), to pass as
   * `--since` for the rest; the rows created in that millisecond are checked again, never skipped.
   * A day-only `--since` could not go on within a day holding more than `--limit` rows.
   */
  next_since: string | null;
}

interface Row {
  id: number;
  site_id: number;
  uuid: string;
  type: string;
  status: string;
  total: number;
  currency: string;
  created_at: Date;
}

const bookedApproved = new Set(['complete', 'locked']);

export async function checkAgainstProcessor(context: AppContext, options: ProcessorCheckOptions): Promise<ProcessorCheckReport> {
  const rows = await context.db.query<Row & Record<string, unknown>>(
    `SELECT id, site_id, uuid, type, status, total, currency, created_at FROM transactions
      WHERE status IN ('complete', 'locked', 'failed', 'expired') AND NOT (type = ANY($1::text[]))
        AND ($2::bigint IS NULL OR site_id = $2) AND created_at >= $3 AND created_at < $4
      ORDER BY created_at, id LIMIT $5`,
    [adminTransactionTypes, options.siteId ?? null, options.since, options.until, options.limit + 1],
  );
  const checked = rows.slice(0, options.limit);
  const unanswered: number[] = [];
  const problems: ProcessorCheckProblem[] = [];
  await forEachConcurrently(checked, limits.jobLookupConcurrency, async (row) => {
    const result = await boundedCall(context.config.processorTimeoutMs, row.uuid, () => context.connector.lookup(row.uuid));
    if (result.kind === 'unknown' && !result.noRecord) return void unanswered.push(row.id);
    const processor = result.kind === 'unknown' ? 'no record' : result.kind;
    const booked = bookedApproved.has(row.status);
    const problem: ProcessorCheckProblemKind | null = booked && processor !== 'approved' ? 'booked_without_approval' : !booked && processor === 'approved' ? 'approved_not_booked' : null;
    if (!problem) return;
    problems.push({
      problem, transaction_id: row.id, site_id: row.site_id, transaction_types: row.type, status: row.status, total: row.total, currencies: row.currency.trim(),
      created: gmtDateTime(row.created_at), processor,
    });
  });
  problems.sort((a, b) => a.transaction_id - b.transaction_id);
  unanswered.sort((a, b) => a - b);
  const more = rows.length > options.limit;
  return { ok: problems.length === 0 && unanswered.length === 0, checked: checked.length, unanswered, problems, more, next_since: more ? checked.at(-1)!.created_at.toISOString() : null };
}
