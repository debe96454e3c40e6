import { splitProRata } from '../money.js';

/**
 * Pro-rata reversal of allocations when money of their transaction goes back (refund) or is
 * released (void, partial capture). Pure; docs/allocations.md "Reversal".
 *
 * Both currencies of a forex payment are split the same way: by largest remainder over what each
 * allocation (and the paying channel's own share) still holds in that currency. Rounding each
 * allocation on its own instead (half-up of its exact share) can make the parts add up to more
 * than the capture or refund they come from (two halves of 765 JPY are 383 + 383), or reverse
 * more than was allocated over several refunds.
 */

/** One currency's side of a split: each allocation's share, the whole they are part of, and the amount to split. */
export interface SplitSide {
  shares: readonly number[];
  /** The shares plus the paying channel's own share. */
  whole: number;
  amount: number;
}

/**
 * Splits `amount` between the shares and the paying channel's own (`whole` minus the shares) by
 * largest remainder: the parts add up to `amount` (at most the whole) with the own share's part
 * left out, none exceeds its share, and when `amount` is the whole every part is its share.
 */
export function splitWithOwnShare(side: SplitSide): number[] {
  if (side.shares.length === 0) return [];
  const sharesSum = side.shares.reduce((sum, value) => sum + value, 0);
  const own = Math.max(0, side.whole - sharesSum);
  if (sharesSum + own === 0) return side.shares.map(() => 0);
  return splitProRata(Math.min(side.amount, sharesSum + own), [...side.shares, own]).slice(0, side.shares.length);
}

/**
 * The paid-currency parts that go with `channelParts`, split the same way. A share whose channel
 * part is 0 takes no paid money either (its weight joins the paying channel's own share): the
 * ledger moves the channel currency, so a paid amount with no channel amount would be shown as
 * moved with no entry for it. The exception is a share with nothing left in the channel currency
 * (rounding closed that side first), whose paid rest still has to go back.
 */
export function paidPartsFollowing(paid: SplitSide, channel: { parts: readonly number[]; left: readonly number[] }): number[] {
  const shares = paid.shares.map((share, index) => (channel.parts[index] === 0 && channel.left[index]! > 0 ? 0 : share));
  return splitWithOwnShare({ ...paid, shares });
}

/** An applied allocation and how much of it is already reversed, in both currencies. */
export interface AllocationBalance {
  id: number;
  /** Channel-currency amount moved to the target, and the part already moved back. */
  channelTotal: number;
  channelReversed: number;
  /** The same in the paid currency (equal to the channel amounts without forex). */
  paidTotal: number;
  paidReversed: number;
  /** The allocation's own currency (wire `currencies`/`total`): the paid one or the channel one. */
  totalIn: 'paid' | 'channel';
}

export interface ReversalPart {
  allocationId: number;
  /** Channel-currency amount moved back from the target to the paying channel. */
  channelAmount: number;
  /** The same in the paid currency. */
  paidAmount: number;
  /** The same in the allocation currency (one of the two above). */
  total: number;
  /** Whether the allocation is reversed in full afterwards. */
  fullyReversed: boolean;
}

/**
 * Splits a refund of `refundChannelAmount` (channel currency) between the paying channel's own
 * share and each allocation's unreversed remainder, by largest remainder over what is still
 * unrefunded: a partial refund takes back the same fraction from every allocation (in whole
 * cents that add up exactly), and refunding everything reverses every allocation in full.
 * With forex, the refund's paid amount is split the same way over what is left in the paid
 * currency, so the parts never add up to more than the refund nor reverse more than an
 * allocation moved, and they close exactly too. `paid` is null without forex.
 */
export function planReversal(options: {
  allocations: readonly AllocationBalance[];
  /** The transaction's channel-currency amount and how much of it was refunded before. */
  sourceChannelTotal: number;
  refundedBefore: number;
  refundChannelAmount: number;
  paid: { sourceTotal: number; refundedBefore: number; refundAmount: number } | null;
}): ReversalPart[] {
  const { allocations, paid } = options;
  const channelLeft = allocations.map((allocation) => allocation.channelTotal - allocation.channelReversed);
  const channelParts = splitWithOwnShare({ shares: channelLeft, whole: Math.max(0, options.sourceChannelTotal - options.refundedBefore), amount: options.refundChannelAmount });
  const paidParts = paid === null ? channelParts : paidPartsFollowing(
    { shares: allocations.map((allocation) => allocation.paidTotal - allocation.paidReversed), whole: Math.max(0, paid.sourceTotal - paid.refundedBefore), amount: paid.refundAmount },
    { parts: channelParts, left: channelLeft },
  );
  return allocations
    .map((allocation, index) => {
      const channelAmount = channelParts[index]!;
      const paidAmount = paidParts[index]!;
      return {
        allocationId: allocation.id,
        channelAmount,
        paidAmount,
        total: allocation.totalIn === 'paid' ? paidAmount : channelAmount,
        fullyReversed: allocation.channelReversed + channelAmount === allocation.channelTotal,
      };
    })
    .filter((part) => part.channelAmount > 0 || part.paidAmount > 0);
}

/** An authorisation's planned allocation in both currencies (equal without forex). */
export interface PlannedAmounts {
  channelTotal: number;
  paidTotal: number;
}

/**
 * Scales an authorisation's planned allocations to the amount actually captured, by largest
 * remainder with the paying channel's own share, in the channel currency and (with forex) in the
 * paid one, so a partial capture allocates the same fraction, never more than the capture in
 * either currency, and a full capture allocates exactly what was planned. `forex` false: the paid
 * amounts are the channel ones.
 */
export function scaleToCapture(options: { planned: readonly PlannedAmounts[]; authorized: PlannedAmounts; captured: PlannedAmounts; forex: boolean }): PlannedAmounts[] {
  const { planned } = options;
  const channelPlanned = planned.map((allocation) => allocation.channelTotal);
  const channel = splitWithOwnShare({ shares: channelPlanned, whole: options.authorized.channelTotal, amount: options.captured.channelTotal });
  const paid = !options.forex ? channel : paidPartsFollowing(
    { shares: planned.map((allocation) => allocation.paidTotal), whole: options.authorized.paidTotal, amount: options.captured.paidTotal },
    { parts: channel, left: channelPlanned },
  );
  return planned.map((_, index) => ({ channelTotal: channel[index]!, paidTotal: paid[index]! }));
}
