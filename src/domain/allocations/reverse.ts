import { divideHalfUp, splitProRata } from '../money.js';

/**
 * Pro-rata reversal of allocations when money of their transaction goes back (refund) or is
 * released (void, partial capture). Pure; docs/allocations.md "Reversal".
 */

/** An applied allocation and how much of it is already reversed. */
export interface AllocationBalance {
  id: number;
  /** Channel-currency amount moved to the target, and the part already moved back. */
  channelTotal: number;
  channelReversed: number;
  /** The same in the allocation's own currency (wire `total`). */
  total: number;
  totalReversed: number;
}

export interface ReversalPart {
  allocationId: number;
  /** Channel-currency amount moved back from the target to the paying channel. */
  channelAmount: number;
  /** The same in the allocation currency. */
  total: number;
  /** Whether the allocation is reversed in full afterwards. */
  fullyReversed: boolean;
}

/**
 * Splits a refund of `refundChannelAmount` (channel currency) between the paying channel's own
 * share and each allocation's unreversed remainder, by largest remainder over what is still
 * unrefunded: a partial refund takes back the same fraction from every allocation (in whole
 * cents that add up exactly), and refunding everything reverses every allocation in full.
 * The allocation-currency amounts follow cumulatively, so they too close exactly.
 */
export function planReversal(options: {
  allocations: readonly AllocationBalance[];
  /** The transaction's channel-currency amount and how much of it was refunded before. */
  sourceChannelTotal: number;
  refundedBefore: number;
  refundChannelAmount: number;
}): ReversalPart[] {
  const remaining = options.allocations.map((allocation) => allocation.channelTotal - allocation.channelReversed);
  const unrefunded = Math.max(0, options.sourceChannelTotal - options.refundedBefore);
  const allocatedRemaining = remaining.reduce((sum, value) => sum + value, 0);
  const kept = Math.max(0, unrefunded - allocatedRemaining);
  const weightSum = allocatedRemaining + kept;
  if (weightSum === 0) return [];
  const refund = Math.min(options.refundChannelAmount, weightSum);
  const shares = splitProRata(refund, [...remaining, kept]);
  return options.allocations
    .map((allocation, index) => {
      const channelAmount = shares[index]!;
      const channelReversed = allocation.channelReversed + channelAmount;
      const totalReversed = channelReversed === allocation.channelTotal
        ? allocation.total
        : Number(divideHalfUp(BigInt(allocation.total) * BigInt(channelReversed), BigInt(allocation.channelTotal)));
      return { allocationId: allocation.id, channelAmount, total: totalReversed - allocation.totalReversed, fullyReversed: channelReversed === allocation.channelTotal };
    })
    .filter((part) => part.channelAmount > 0 || part.total > 0);
}

/**
 * Scales an authorisation's planned allocations to the amount actually captured (channel
 * currency), by largest remainder with the paying channel's own share, so a partial capture
 * allocates the same fraction and a full capture allocates exactly what was planned.
 */
export function scaleToCapture(options: { plannedChannelTotals: readonly number[]; authorizedChannelTotal: number; capturedChannelTotal: number }): number[] {
  const planned = options.plannedChannelTotals;
  const kept = Math.max(0, options.authorizedChannelTotal - planned.reduce((sum, value) => sum + value, 0));
  const captured = Math.min(options.capturedChannelTotal, options.authorizedChannelTotal);
  if (planned.length === 0) return [];
  return splitProRata(captured, [...planned, kept]).slice(0, planned.length);
}
