import { basisPointsWhole, divideHalfUp, percentOf } from '../money.js';
import { limits } from '../../limits.js';
import { isTestMode } from '../channels.js';
import { isCalendarDate } from '../gmt.js';

/**
 * Allocations move part of a transaction's money from the paying channel to other channels
 * (docs/allocations.md). This file is pure: it validates the requested allocations against the
 * facts the caller loaded and computes every amount; storage and ledger postings live elsewhere.
 */

export const allocationOperators = ['flat', 'percent'] as const;
export type AllocationOperator = (typeof allocationOperators)[number];

/** One requested allocation, in domain words (wire: `channels`, `currencies`, `total`). */
export interface AllocationRequest {
  channelId: number;
  /** The currency of `value` when the operator is flat; defaults to the transaction currency. */
  currency?: string;
  /** Minor units (`flat`) or basis points of the transaction total (`percent`). */
  value: number;
  operator: AllocationOperator;
  title?: string;
  reference?: string;
  description?: string;
  /** `YYYY-MM-DD`. */
  statementDate?: string;
}

/** The channel receiving an allocation, as loaded by the caller (deleted channels are absent). */
export interface AllocationTarget {
  id: number;
  siteId: number;
  currency: string;
  accountMode: string;
}

/** The money being allocated: the paying channel and the transaction's two amounts. */
export interface AllocationSource {
  siteId: number;
  channelId: number;
  channelCurrency: string;
  accountMode: string;
  /** What the cardholder pays in (the transaction `currencies`) and how much. */
  paidCurrency: string;
  paidTotal: number;
  /** The same money in the channel currency (equal to the paid amounts without forex). */
  channelTotal: number;
}

/** A validated allocation with every amount computed. */
export interface AllocationPlan {
  channelId: number;
  operator: AllocationOperator;
  value: number;
  /** The allocation's currency and its amount in it (wire `currencies` and `total`). */
  currency: string;
  total: number;
  /** The amount in the paid currency and in the channel currency (the ledger moves the latter). */
  paidTotal: number;
  channelTotal: number;
  title: string;
  reference: string;
  description: string;
  statementDate: string | null;
}

/** Expected refusal: `params` keyed by the wire parameter, as the spec's 400 error. */
export class AllocationRefusal extends Error {
  constructor(readonly params: Record<string, string>) {
    super(Object.values(params).join(' '));
    this.name = 'AllocationRefusal';
  }
}

/**
 * Test channels hold sandbox money; it never lands in a channel of the processor's live mode
 * (`live`, `draft`, `affiliate`: they take real cards), nor the reverse. isTestMode is the one
 * definition; this had its own, which counted `draft` as test and let sandbox money into it.
 */
function modeFamily(accountMode: string): 'test' | 'live' {
  return isTestMode(accountMode) ? 'test' : 'live';
}

/** Why one request cannot be applied, or null. */
function refusalOf(request: AllocationRequest, options: { source: AllocationSource; target: AllocationTarget | undefined; grantedSiteIds: ReadonlySet<number> }): string | null {
  const { source, target } = options;
  if (!(allocationOperators as readonly string[]).includes(request.operator)) return `operator must be one of ${allocationOperators.join(', ')}.`;
  if (!Number.isSafeInteger(request.value) || request.value <= 0) return 'total must be a positive integer.';
  if (request.operator === 'percent' && request.value > basisPointsWhole) return `a percent total is in basis points and at most ${basisPointsWhole}.`;
  if (request.operator === 'flat' && request.value > limits.amountCentsMax) return `total is above the maximum of ${limits.amountCentsMax}.`;
  if (request.channelId === source.channelId) return 'an allocation cannot go to the paying channel.';
  // One message for "no such channel" and "another site's channel without a grant": never confirm existence.
  if (!target || (target.siteId !== source.siteId && !options.grantedSiteIds.has(target.siteId))) {
    return `channel ${request.channelId} does not exist or may not receive allocations from this site.`;
  }
  if (target.currency !== source.channelCurrency) return `channel ${target.id} does not accept ${source.channelCurrency}: its currency is ${target.currency}.`;
  if (modeFamily(target.accountMode) !== modeFamily(source.accountMode)) return `channel ${target.id} is a ${target.accountMode} channel; the paying channel is ${source.accountMode}.`;
  const currency = request.currency ?? source.paidCurrency;
  if (currency !== source.paidCurrency && currency !== source.channelCurrency) {
    return `currencies must be ${source.paidCurrency}${source.paidCurrency === source.channelCurrency ? '' : ` or ${source.channelCurrency}`}.`;
  }
  if (request.statementDate !== undefined && !isCalendarDate(request.statementDate)) return 'statement_date must be a date, Y-m-d.';
  return null;
}

/** `amount` of one currency's total expressed as the same share of the other's, half-up. */
function shareOf(amount: number, of: number, into: number): number {
  if (of === 0) return 0;
  return Number(divideHalfUp(BigInt(amount) * BigInt(into), BigInt(of)));
}

function amountsOf(request: AllocationRequest, source: AllocationSource): Pick<AllocationPlan, 'currency' | 'total' | 'paidTotal' | 'channelTotal'> {
  const currency = request.currency ?? source.paidCurrency;
  if (request.operator === 'percent') {
    const paidTotal = percentOf(source.paidTotal, request.value);
    const channelTotal = percentOf(source.channelTotal, request.value);
    return { currency, total: currency === source.paidCurrency ? paidTotal : channelTotal, paidTotal, channelTotal };
  }
  if (currency === source.paidCurrency) {
    return { currency, total: request.value, paidTotal: request.value, channelTotal: shareOf(request.value, source.paidTotal, source.channelTotal) };
  }
  return { currency, total: request.value, paidTotal: shareOf(request.value, source.channelTotal, source.paidTotal), channelTotal: request.value };
}

/**
 * Why an allocation would move nothing on one side, or null. Its two amounts are rounded from
 * what was asked (a flat amount converted at the transaction's proportion, a percent of each
 * total), so a small request can round to 0 on a side: it would be shown as moved while the
 * ledger (channel currency) moves nothing, or move channel money with no paid amount.
 */
function emptySideOf(request: AllocationRequest, amounts: Pick<AllocationPlan, 'currency' | 'paidTotal' | 'channelTotal'>, source: AllocationSource): string | null {
  const emptyCurrency = amounts.channelTotal < 1 ? source.channelCurrency : amounts.paidTotal < 1 ? source.paidCurrency : null;
  if (emptyCurrency === null) return null;
  const asked = request.operator === 'percent' ? `${request.value} basis points of ${source.paidTotal} ${source.paidCurrency}` : `${request.value} ${amounts.currency}`;
  const rate = source.paidCurrency === source.channelCurrency ? '' : " at the transaction's rate";
  return `${asked} is 0 ${emptyCurrency}${rate}; an allocation moves at least one minor unit in each currency.`;
}

/**
 * Validates `requests` and computes them. Refuses (AllocationRefusal on `allocations`) any item
 * that is malformed, targets the paying channel, an unknown or ungranted channel, a channel of
 * another currency or mode, or rounds to 0 on a side, and a set whose amounts add up to more
 * than the transaction.
 */
export function planAllocations(options: {
  source: AllocationSource;
  requests: readonly AllocationRequest[];
  targets: ReadonlyMap<number, AllocationTarget>;
  grantedSiteIds: ReadonlySet<number>;
}): AllocationPlan[] {
  const { source, requests } = options;
  if (requests.length > limits.allocationsPerTransactionMax) {
    throw new AllocationRefusal({ allocations: `At most ${limits.allocationsPerTransactionMax} allocations per transaction.` });
  }
  const plans = requests.map((request, index) => {
    const refusal = refusalOf(request, { source, target: options.targets.get(request.channelId), grantedSiteIds: options.grantedSiteIds });
    if (refusal) throw new AllocationRefusal({ allocations: `Allocation ${index}: ${refusal}` });
    const amounts = amountsOf(request, source);
    const empty = emptySideOf(request, amounts, source);
    if (empty) throw new AllocationRefusal({ allocations: `Allocation ${index}: ${empty}` });
    return {
      channelId: request.channelId,
      operator: request.operator,
      value: request.value,
      ...amounts,
      title: request.title ?? '',
      reference: request.reference ?? '',
      description: request.description ?? '',
      statementDate: request.statementDate ?? null,
    };
  });
  const paidSum = plans.reduce((sum, plan) => sum + plan.paidTotal, 0);
  const channelSum = plans.reduce((sum, plan) => sum + plan.channelTotal, 0);
  if (paidSum > source.paidTotal || channelSum > source.channelTotal) {
    throw new AllocationRefusal({
      allocations: `Allocations add up to ${paidSum} ${source.paidCurrency}, more than the transaction total of ${source.paidTotal}` +
        (source.paidCurrency === source.channelCurrency ? '.' : ` (or ${channelSum} ${source.channelCurrency} of ${source.channelTotal}).`),
    });
  }
  return plans;
}

/**
 * Re-checks allocations planned earlier against their targets as they are now: an authorisation's
 * planned allocations are applied by its capture, possibly much later, and meanwhile a target can
 * be closed, switch mode, or lose the grant (and, for rows planned before deleting a channel or
 * changing its currency was refused while money was planned to it, be deleted or in another
 * currency). Called before the capture reaches the processor, so a refusal moves nothing: the same
 * rules as planning (refusalOf), as AllocationRefusal on `allocations`, naming the way out.
 */
export function assertPlannedTargetsReceive(options: {
  source: AllocationSource;
  planned: readonly AllocationRequest[];
  targets: ReadonlyMap<number, AllocationTarget>;
  grantedSiteIds: ReadonlySet<number>;
}): void {
  options.planned.forEach((request, index) => {
    const refusal = refusalOf(request, { source: options.source, target: options.targets.get(request.channelId), grantedSiteIds: options.grantedSiteIds });
    if (refusal) {
      throw new AllocationRefusal({
        allocations: `The authorisation's allocation ${index}: ${refusal} Send the capture with its own allocations (they replace the authorisation's), or void the authorisation.`,
      });
    }
  });
}
