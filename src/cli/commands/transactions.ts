import type { Command } from '../command.js';
import { instantOption, positiveInteger, required } from '../command.js';
import { findSite } from '../../domain/users/accounts.js';
import { OperatorSettleError, settleByOperator, type OperatorOutcome } from '../../domain/transactions/operator-settle.js';
import { checkAgainstProcessor } from '../../domain/transactions/processor-check.js';
import { limits } from '../../limits.js';

/**
 * `trustfare processor check [--site P] [--since YYYY-MM-DD|ISO date-time] [--until ...] [--limit N]`:
 * compares the settled transactions with the processor's own records and names every
 * disagreement; exits non-zero when there is one (docs/payments.md "Checking against the
 * processor").
 *
 * `trustfare transaction settle --site P --transaction ID --outcome approved|declined --reason TEXT
 * [--processor-reference R] [--auth-code C] [--decline-code D]`: the platform operator states the
 * outcome of a transaction the processor never answered for, read off the processor's own
 * records; prints the settled transaction (docs/payments.md "Settling by hand").
 */
export const commands: Command[] = [
  {
    name: 'transaction settle',
    summary: 'state the outcome of an incomplete or pending transaction from the processor\'s records (platform operator)',
    options: {
      site: { type: 'string' },
      transaction: { type: 'string' },
      outcome: { type: 'string' },
      reason: { type: 'string' },
      'processor-reference': { type: 'string' },
      'auth-code': { type: 'string' },
      'decline-code': { type: 'string' },
    },
    required: ['site', 'transaction', 'outcome', 'reason'],
    async run(context, options) {
      const site = await findSite(context.db, required(options, 'site'));
      const id = positiveInteger('transaction', required(options, 'transaction'));
      const reason = required(options, 'reason');
      const outcome = operatorOutcome(options);
      try {
        return await settleByOperator(context, { siteId: site.id, id, outcome, reason });
      } catch (error) {
        if (error instanceof OperatorSettleError) throw new Error(error.message);
        throw error;
      }
    },
  },
  {
    name: 'processor check',
    summary: "compare settled transactions with the processor's records: money booked it never approved, approvals never booked",
    options: { site: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' }, limit: { type: 'string' } },
    async run(context, options) {
      const site = typeof options.site === 'string' ? await findSite(context.db, options.site) : undefined;
      const now = context.now();
      const until = instantOption(options, 'until') ?? now;
      const since = instantOption(options, 'since') ?? new Date(until.getTime() - limits.processorCheckDefaultDays * 86_400_000);
      if (since.getTime() >= until.getTime()) throw new Error('--since must be before --until');
      const limit = typeof options.limit === 'string' ? positiveInteger('limit', options.limit) : limits.processorCheckRowsDefault;
      if (limit > limits.processorCheckRowsMax) throw new Error(`--limit must be at most ${limits.processorCheckRowsMax}`);
      const report = await checkAgainstProcessor(context, { ...(site ? { siteId: site.id } : {}), since, until, limit });
      if (!report.ok) throw new Error(`the processor disagrees on ${report.problems.length} transaction(s) and left ${report.unanswered.length} look-up(s) unanswered:\n${JSON.stringify(report, null, 2)}`);
      return report;
    },
  },
];

function optionalText(options: Record<string, string | boolean | undefined>, name: string): string | null {
  const value = options[name];
  if (value === undefined) return null;
  if (typeof value !== 'string' || !/^[\x21-\x7e]+$/.test(value) || value.length > limits.processorReferenceLengthMax) {
    throw new Error(`--${name} must be at most ${limits.processorReferenceLengthMax} printable ASCII characters without spaces`);
  }
  return value;
}

function operatorOutcome(options: Record<string, string | boolean | undefined>): OperatorOutcome {
  const kind = required(options, 'outcome');
  const processorReference = optionalText(options, 'processor-reference');
  if (kind === 'approved') {
    // An approval is money the processor holds for the merchant: its reference is what ties the
    // ledger entries to the processor's settlement, so it is required.
    if (processorReference === null) throw new Error('--processor-reference is required with --outcome approved');
    if (options['decline-code'] !== undefined) throw new Error('--decline-code goes with --outcome declined');
    return { kind, processorReference, authCode: optionalText(options, 'auth-code') };
  }
  if (kind === 'declined') {
    if (options['auth-code'] !== undefined) throw new Error('--auth-code goes with --outcome approved');
    return { kind, processorReference, code: optionalText(options, 'decline-code') };
  }
  throw new Error('--outcome must be approved or declined');
}
