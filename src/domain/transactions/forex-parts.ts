import { convert, divideHalfUp, minorUnitDigits, parseDecimal } from '../money.js';

/**
 * Parts of a forex transaction (docs/forex.md "Parts of a forex transaction"). A forex payment
 * has a whole in two currencies: `paidTotal` of the paid currency and `channelTotal` of the
 * channel currency, tied by the original rate. Refunds, captures, voids and chargebacks take
 * parts of it, each part in both currencies, and the parts must add up to the whole exactly in
 * both, however many there are and in whatever order they come.
 *
 * The rule: a part's amount in the other currency is the CUMULATIVE conversion at the original
 * rate minus what earlier parts already took in that currency. A part that takes the rest of
 * one side takes the rest of the other side too; a part that does not leaves at least one minor
 * unit on both sides (so the rest can still be taken) and takes at least one on both.
 *
 * The side a part is given in is at least one unit before it gets here (prepare.ts refuses a
 * booking share of 0, the chargeback a total of 0): clamping a 0 up to one unit on the other
 * side alone would move money at the processor and nothing in the ledger.
 *
 * `consumed` must be read under the lock of the whole's row (docs/payments.md), otherwise two
 * concurrent parts compute from the same starting point and the parts no longer add up.
 */

export interface ForexWhole {
  paidCurrency: string;
  paidTotal: number;
  channelCurrency: string;
  channelTotal: number;
  /** Units of the paid currency per unit of the channel currency, decimal text. */
  rate: string;
}

/** What earlier parts took from the whole, in both currencies. */
export interface Consumed {
  paid: number;
  channel: number;
}

/** A part that cannot be taken as asked; `message` tells the caller what can. */
export class ForexPartRefusal extends Error {}

/** Channel amount → paid amount at the whole's rate, half-up (the money module's one rule). */
function toPaid(whole: ForexWhole, channelAmount: number): number {
  return convert({ amount: channelAmount, from: whole.channelCurrency, to: whole.paidCurrency, rate: whole.rate });
}

/** Paid amount → channel amount at the inverse of the whole's rate, exactly, half-up. */
export function toChannel(whole: Pick<ForexWhole, 'paidCurrency' | 'channelCurrency' | 'rate'>, paidAmount: number): number {
  const rate = parseDecimal(whole.rate);
  // amount / rate, with both minor-unit scales: amount × 10^scale × 10^d(channel) / (units × 10^d(paid)).
  const numerator = BigInt(paidAmount) * 10n ** BigInt(rate.scale + minorUnitDigits(whole.channelCurrency));
  const denominator = rate.units * 10n ** BigInt(minorUnitDigits(whole.paidCurrency));
  return Number(divideHalfUp(numerator, denominator));
}

/** Clamps a non-final part so it takes at least one unit and leaves at least one; null if impossible. */
function clampPart(part: number, remaining: number): number | null {
  if (remaining < 2) return null;
  return Math.min(Math.max(part, 1), remaining - 1);
}

/** A part given as 0 is a caller's bug (see the top of this file), never a part to clamp. */
function assertGiven(part: number): void {
  if (!Number.isSafeInteger(part) || part < 1) throw new Error(`a forex part takes at least one minor unit, got ${part}`);
}

function remainingOf(whole: ForexWhole, consumed: Consumed): Consumed {
  return { paid: whole.paidTotal - consumed.paid, channel: whole.channelTotal - consumed.channel };
}

/**
 * The paid-currency amount of a part given in the channel currency (refund, capture, void: the
 * request names the bookings' channel amounts). Refuses a part larger than what is left.
 */
export function paidPartOf(whole: ForexWhole, consumed: Consumed, channelPart: number): number {
  assertGiven(channelPart);
  const remaining = remainingOf(whole, consumed);
  if (channelPart > remaining.channel) throw new ForexPartRefusal(`At most ${remaining.channel} ${whole.channelCurrency} of the linked transaction is left.`);
  if (channelPart === remaining.channel) return remaining.paid;
  const part = clampPart(toPaid(whole, consumed.channel + channelPart) - consumed.paid, remaining.paid);
  if (part === null) throw new ForexPartRefusal(`Only ${remaining.paid} ${whole.paidCurrency} of the linked transaction is left: take the rest (${remaining.channel} ${whole.channelCurrency}) at once.`);
  return part;
}

/**
 * The channel-currency amount of a part given in the paid currency (chargeback and its
 * reversal or override: the processor reports them in the currency the cardholder paid).
 */
export function channelPartOf(whole: ForexWhole, consumed: Consumed, paidPart: number): number {
  assertGiven(paidPart);
  const remaining = remainingOf(whole, consumed);
  if (paidPart > remaining.paid) throw new ForexPartRefusal(`At most ${remaining.paid} ${whole.paidCurrency} is left.`);
  if (paidPart === remaining.paid) return remaining.channel;
  const part = clampPart(toChannel(whole, consumed.paid + paidPart) - consumed.channel, remaining.channel);
  if (part === null) throw new ForexPartRefusal(`Only ${remaining.channel} ${whole.channelCurrency} is left: take the rest (${remaining.paid} ${whole.paidCurrency}) at once.`);
  return part;
}
