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
 * Splits both currencies of a forex transaction's `amount` between the shares and the paying
 * channel's own: the channel currency by largest remainder (splitWithOwnShare), then the paid
 * currency the same way, fitted to what the channel parts allow. The ledger moves the channel
 * currency with the paid amount beside it on the same entries, so each share's two sides move
 * and close together:
 * - a share whose channel part is 0 takes no paid money (no entry would carry it);
 * - a share whose channel part closes its channel side takes the rest of its paid side;
 * - a share whose channel side stays open keeps at least one paid unit open too;
 * - the own share takes no more than it still holds.
 * When the paid amount cannot be placed within those bounds (a refund whose rounded paid amount
 * is too small to close a share its channel part closes), that share keeps one channel unit open
 * instead, given to the own share, and its paid rest goes back with a later part. When that does
 * not fit either, `onNoFit` decides: a reversal ('bounded') keeps each share's bounds and lets the
 * own share's paid part absorb the difference, since a share that closed its channel side with
 * paid money open could only give it back later with no channel money, which no entry carries
 * (until session 33 it took the proportional split); a capture ('proportional') creates new
 * allocations and keeps within its paid total.
 * Split independently (until session 29), the two sides drifted apart: a refund could close an
 * allocation in USD with 1 EUR still open, and the next gave that EUR back with 0 USD, which no
 * ledger entry carried; or the own share took paid money it no longer held, so the last refund
 * could not close an allocation's paid side. A share with nothing left in the channel currency
 * but a paid rest (rows written before session 29) still gives the rest back.
 */
export function splitBothSides(channel: SplitSide, paid: SplitSide, onNoFit: 'bounded' | 'proportional'): { channel: number[]; paid: number[] } {
  const channelParts = splitWithOwnShare(channel);
  const paidShares = paid.shares.map((share, index) => (channelParts[index] === 0 && channel.shares[index]! > 0 ? 0 : share));
  const proportional = splitWithOwnShare({ ...paid, shares: paidShares });
  const ownChannel = ownSide(channel, channelParts);
  // Each pass either fits the paid parts or reopens one closing share; bounded by the shares.
  for (let pass = 0; pass <= channelParts.length; pass++) {
    const fitted = fitPaidParts(paid, proportional, channelParts, channel.shares);
    if (fitted) return { channel: channelParts, paid: fitted };
    const reopen = channelParts.findIndex((part, index) => part > 1 && part === channel.shares[index] && paid.shares[index]! > 0);
    if (reopen < 0 || ownChannel.part >= ownChannel.left) break;
    channelParts[reopen]! -= 1;
    ownChannel.part += 1;
  }
  if (onNoFit === 'proportional') return { channel: channelParts, paid: proportional };
  return { channel: channelParts, paid: clampToBounds(proportional, paidBounds(paid, channelParts, channel.shares)) };
}

function clampToBounds(parts: readonly number[], bounds: readonly { low: number; high: number }[]): number[] {
  return parts.map((part, index) => Math.min(Math.max(part, bounds[index]!.low), bounds[index]!.high));
}

/** What each share's paid part may be, given its channel part (the rules of splitBothSides). */
function paidBounds(paid: SplitSide, channelParts: readonly number[], channelShares: readonly number[]): { low: number; high: number }[] {
  return paid.shares.map((share, index) => {
    const channelLeft = channelShares[index]!;
    const part = channelParts[index]!;
    if (channelLeft === 0) return { low: 0, high: share };
    if (part === 0) return { low: 0, high: 0 };
    if (part === channelLeft) return { low: share, high: share };
    return { low: 0, high: Math.max(0, share - 1) };
  });
}

/**
 * The paid parts within each share's bounds (see splitBothSides), starting from the proportional
 * split and moving the difference to or from the shares with room, largest first; null when no
 * parts fit the bounds and the amount.
 */
function fitPaidParts(paid: SplitSide, proportional: readonly number[], channelParts: readonly number[], channelShares: readonly number[]): number[] | null {
  const bounds = paidBounds(paid, channelParts, channelShares);
  const own = ownSide(paid, []);
  const parts = clampToBounds(proportional, bounds);
  let ownPart = own.part - parts.reduce((sum, value) => sum + value, 0);
  const order = paid.shares.map((_, index) => index).sort((a, b) => paid.shares[b]! - paid.shares[a]!);
  for (const index of order) {
    if (ownPart > own.left) {
      const moved = Math.min(ownPart - own.left, bounds[index]!.high - parts[index]!);
      parts[index]! += moved;
      ownPart -= moved;
    } else if (ownPart < 0) {
      const moved = Math.min(-ownPart, parts[index]! - bounds[index]!.low);
      parts[index]! -= moved;
      ownPart += moved;
    }
  }
  return ownPart >= 0 && ownPart <= own.left ? parts : null;
}

/** The paying channel's own share on one side: what it still holds, and its part of the split (`parts`, the shares'). */
function ownSide(side: SplitSide, parts: readonly number[]): { left: number; part: number } {
  const sharesSum = side.shares.reduce((sum, value) => sum + value, 0);
  const left = Math.max(0, side.whole - sharesSum);
  const split = Math.min(side.amount, sharesSum + left);
  return { left, part: split - parts.reduce((sum, value) => sum + value, 0) };
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
 * currency, so the parts never reverse more than an allocation moved and close exactly too, and
 * (but where splitBothSides finds no split that fits) never add up to more than the refund.
 * `paid` is null without forex.
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
  const channel: SplitSide = {
    shares: allocations.map((allocation) => allocation.channelTotal - allocation.channelReversed),
    whole: Math.max(0, options.sourceChannelTotal - options.refundedBefore),
    amount: options.refundChannelAmount,
  };
  const parts = paid === null ? { channel: splitWithOwnShare(channel), paid: null } : splitBothSides(channel, {
    shares: allocations.map((allocation) => allocation.paidTotal - allocation.paidReversed),
    whole: Math.max(0, paid.sourceTotal - paid.refundedBefore),
    amount: paid.refundAmount,
  }, 'bounded');
  const channelParts = parts.channel;
  const paidParts = parts.paid ?? channelParts;
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
  const channelSide: SplitSide = { shares: planned.map((allocation) => allocation.channelTotal), whole: options.authorized.channelTotal, amount: options.captured.channelTotal };
  const parts = !options.forex ? { channel: splitWithOwnShare(channelSide), paid: null } : splitBothSides(channelSide, {
    shares: planned.map((allocation) => allocation.paidTotal), whole: options.authorized.paidTotal, amount: options.captured.paidTotal,
  }, 'proportional');
  return planned.map((_, index) => ({ channelTotal: parts.channel[index]!, paidTotal: (parts.paid ?? parts.channel)[index]! }));
}
