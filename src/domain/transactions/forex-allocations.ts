import type { AppContext } from '../../context.js';
import { invalidParam } from '../../http/errors.js';
import type { Queryable } from '../../storage/db.js';
import {
  AllocationRefusal, assertPlannedTargetsReceive, isAllocationInputList, allocationPostingsOnCompletion, allocationRequestOf, insertPlannedAllocations,
  loadAllocationFacts, loadPlannedRequests, planAllocations, type AllocationPlan, type AllocationRequest, type AllocationSource,
} from '../allocations/index.js';
import { ForexRefusal, forexTermsFor, loadStoredForex, recordForexTerms, type ForexTerms, type StoredForex } from '../forex/index.js';
import type { ChannelRecord } from '../channels.js';
import type { Posting } from '../ledger/postings.js';
import { completionPostings } from './effects.js';
import { ForexPartRefusal, paidPartOf } from './forex-parts.js';
import type { BookingShare } from './repository.js';
import { isFollowUpType, type Actor, type TransactionInput, type TransactionRecord } from './types.js';

/**
 * Issue 4 integration: the forex and allocation steps of the payments core, kept in one file so
 * the core's create/settle path calls them at three points (prepare, insert, complete).
 * docs/forex.md and docs/allocations.md describe the rules.
 */

/** Types that may carry `allocations` (an authorisation's are applied by its capture). */
const allocatingTypes = new Set(['purchase', 'retained_purchase', 'authorize', 'retained_authorize', 'capture']);

export interface ForexAndAllocations {
  forex: ForexTerms | null;
  allocations: AllocationPlan[];
  /**
   * The allocations whose targets were checked lock-free here, checked again under their locks
   * when the transaction is written (recordForexAndAllocations): this request's own, or those of
   * the authorisation a capture applies. Null when there are none.
   */
  targets: TargetCheck | null;
}

interface TargetCheck {
  source: AllocationSource;
  requests: AllocationRequest[];
  /** The authorisation's planned allocations (a capture without its own), not this request's. */
  planned: boolean;
}

/** Prepare step: the forex terms (validating `total`) and the validated allocations, or a 400. */
export async function prepareForexAndAllocations(
  context: AppContext,
  db: Queryable,
  actor: Actor,
  options: { input: TransactionInput; channel: ChannelRecord; shares: { total: number }[]; linked: TransactionRecord | null },
): Promise<ForexAndAllocations> {
  const { input, channel, linked } = options;
  if (input.type === 'vault') {
    if (input.allocations !== undefined && input.allocations.length > 0) throw invalidParam('allocations', 'A vault transaction moves no money to allocate.');
    return { forex: null, allocations: [], targets: null };
  }
  const channelAmount = options.shares.reduce((sum, share) => sum + share.total, 0);
  let forex: ForexTerms | null;
  try {
    const linkedForex = linked && isFollowUpType(input.type) ? await loadStoredForex(db, linked.id) : null;
    // A part of a forex transaction: its paid total depends on what earlier parts took, so it is
    // checked under the parent's lock (assertForexPart), not here.
    forex = linkedForex?.forexRate != null
      ? { quoteId: linkedForex.forexQuoteId!, rate: linkedForex.forexRate, channelCurrency: linkedForex.channelCurrency!, channelTotal: channelAmount, paidCurrency: linked!.currency, paidTotal: input.total! }
      : await forexTermsFor(context, db, { channel, currency: input.currency!, total: input.total!, channelAmount });
  } catch (error) {
    if (error instanceof ForexRefusal) throw invalidParam(error.param, error.message);
    throw error;
  }
  if (!forex && channelAmount !== input.total) throw invalidParam('bookings', `The bookings' totals add up to ${channelAmount}, not the transaction total ${input.total}.`);
  return { forex, ...(await planRequested(db, actor, { input, channel, forex, linked })) };
}

async function planRequested(
  db: Queryable,
  actor: Actor,
  options: { input: TransactionInput; channel: ChannelRecord; forex: ForexTerms | null; linked: TransactionRecord | null },
): Promise<Pick<ForexAndAllocations, 'allocations' | 'targets'>> {
  const { input, channel, forex, linked } = options;
  const items = input.allocations ?? [];
  const source: AllocationSource = {
    siteId: actor.siteId,
    channelId: channel.id,
    channelCurrency: channel.currency,
    accountMode: channel.accountMode,
    paidCurrency: input.currency!,
    paidTotal: input.total!,
    channelTotal: forex?.channelTotal ?? input.total!,
  };
  if (items.length === 0) {
    // A capture without its own allocations applies its authorisation's: their targets are
    // checked again now, before the processor captures, since they may have changed since.
    const planned = input.type === 'capture' && linked ? await recheckPlannedTargets(db, actor, { source, authorizationId: linked.id }) : [];
    return { allocations: [], targets: planned.length === 0 ? null : { source, requests: planned, planned: true } };
  }
  if (!allocatingTypes.has(input.type)) {
    throw invalidParam('allocations', `A ${input.type} takes no allocations; refunds and voids reverse the linked transaction's allocations pro rata.`);
  }
  if (!isAllocationInputList(items)) throw invalidParam('allocations', 'Each allocation needs channels and total (integers), and optional title, reference, description, currencies, operator (flat or percent) and statement_date.');
  const requests = items.map(allocationRequestOf);
  const check: TargetCheck = { source, requests, planned: false };
  return { allocations: await checkTargets(db, actor.siteId, check), targets: check };
}

/** The authorisation's planned allocations, their targets checked as they are now. */
async function recheckPlannedTargets(db: Queryable, actor: Actor, options: { source: AllocationSource; authorizationId: number }): Promise<AllocationRequest[]> {
  const planned = await loadPlannedRequests(db, options.authorizationId);
  if (planned.length > 0) await checkTargets(db, actor.siteId, { source: options.source, requests: planned, planned: true });
  return planned;
}

/**
 * Loads the targets (locked, with `lock`) and applies the rules of planning to them, or, for
 * planned allocations, of re-checking them; a refusal is a 400 on `allocations`.
 */
async function checkTargets(db: Queryable, siteId: number, check: TargetCheck, options: { lock?: boolean } = {}): Promise<AllocationPlan[]> {
  const facts = await loadAllocationFacts(db, { siteId, requests: check.requests, ...options });
  const known = { source: check.source, targets: facts.targets, grantedSiteIds: facts.grantedSiteIds };
  return refusalAsParam(() => {
    if (!check.planned) return planAllocations({ ...known, requests: check.requests });
    assertPlannedTargetsReceive({ ...known, planned: check.requests });
    return [];
  });
}

/** An allocation refusal is the spec's 400 on `allocations`; anything else is a programmer error. */
function refusalAsParam<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof AllocationRefusal) throw invalidParam('allocations', error.message);
    throw error;
  }
}

/**
 * Insert step: stores the forex terms and the planned allocations with the new row. The targets
 * were checked lock-free (prepare); they are locked and checked again here, so a channel deleted,
 * closed or switched to another currency in between is refused before the processor is called
 * (the attempt rolls back), and one changed after this waits for the row and then sees it in use.
 */
export async function recordForexAndAllocations(tx: Queryable, options: { record: TransactionRecord; channel: ChannelRecord; plan: ForexAndAllocations }): Promise<void> {
  const { record, channel, plan } = options;
  if (plan.targets) await checkTargets(tx, record.siteId, plan.targets, { lock: true });
  await recordForexTerms(tx, record.id, plan.forex);
  await insertPlannedAllocations(tx, {
    siteId: record.siteId,
    transactionId: record.id,
    fromChannelId: record.channelId,
    paidCurrency: record.currency,
    channelCurrency: channel.currency,
    plans: plan.allocations,
  });
}

/**
 * Complete step: the transaction's own postings in the channel currency (with the paid amount on
 * each entry of a forex transaction) followed by its allocation movements.
 */
export async function completionPostingsWithAllocations(
  tx: Queryable,
  row: TransactionRecord,
  authorization: TransactionRecord | undefined,
  known: { forex: StoredForex; hasAllocations: boolean },
): Promise<Posting[]> {
  const own = known.forex;
  const authorizationForex = authorization ? await loadStoredForex(tx, authorization.id) : null;
  const channelTotal = own.channelTotal ?? row.total;
  const authorizationTotal = authorization ? (authorizationForex?.channelTotal ?? authorization.total) : undefined;
  const base = completionPostings({
    type: row.type,
    channelId: row.channelId,
    currency: own.channelCurrency ?? row.currency,
    total: channelTotal,
    ...(authorizationTotal !== undefined ? { authorizationTotal } : {}),
  });
  const withPaid = own.forexRate === null ? base : base.map((posting, index) => {
    // Capture postings release the authorisation first (its amounts), then move this capture's.
    const releasesAuthorization = row.type === 'capture' && index < 2 || row.type === 'void';
    const paidAmount = releasesAuthorization && authorization ? authorization.total : row.total;
    return { ...posting, paidCurrency: row.currency, paidAmount };
  });
  // A purchase applies only its own allocations: none stored, nothing to read (issue 7).
  const ownOnly = row.type === 'purchase' || row.type === 'retained_purchase';
  const allocations = ownOnly && !known.hasAllocations
    ? []
    : await allocationPostingsOnCompletion(tx, { id: row.id, siteId: row.siteId, type: row.type, channelId: row.channelId, linkedId: row.linkedId, channelTotal, paidTotal: row.total });
  return [...withPaid, ...allocations];
}

/**
 * Under the parent's row lock, in the database transaction that reserves the amount: the paid
 * total of a capture, void or refund of a forex transaction must be its part of the parent at
 * the original rate, cumulatively (forex-parts.ts), counted from what the parent has left now.
 * Computed earlier, two concurrent refunds would both start from the same point and their parts
 * would no longer add up to the parent. No-op without forex.
 */
export function assertForexPart(options: { forex: ForexTerms | null; parent: TransactionRecord; parentShares: readonly BookingShare[]; total: number }): void {
  const { forex, parent, parentShares } = options;
  if (!forex) return;
  const whole = { paidCurrency: parent.currency, paidTotal: parent.total, channelCurrency: forex.channelCurrency, channelTotal: parentShares.reduce((sum, share) => sum + share.total, 0), rate: forex.rate };
  const consumed = { paid: parent.total - parent.totalRemaining, channel: parentShares.reduce((sum, share) => sum + share.total - share.totalRemaining, 0) };
  let expected: number;
  try {
    expected = paidPartOf(whole, consumed, forex.channelTotal);
  } catch (error) {
    if (error instanceof ForexPartRefusal) throw invalidParam('total', error.message);
    throw error;
  }
  if (expected !== options.total) {
    throw invalidParam('total', `The total must be ${expected} ${parent.currency}: the bookings' ${forex.channelTotal} ${forex.channelCurrency} at the rate ${forex.rate}.`);
  }
}
