import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { planReversal, scaleToCapture, type AllocationBalance } from '../../src/domain/allocations/reverse.js';
import { AllocationRefusal, planAllocations, type AllocationRequest, type AllocationSource } from '../../src/domain/allocations/plan.js';
import { ForexPartRefusal, paidPartOf, type ForexWhole } from '../../src/domain/transactions/forex-parts.js';
import { convert } from '../../src/domain/money.js';
import { sandboxRate } from '../../src/domain/forex/index.js';

/**
 * The service's model of a forex payment with allocations: planned as planAllocations plans them
 * (percent of both totals, flat in either currency, each rounded on its own), optionally
 * authorised and captured in part (scaleToCapture), then refunded in many tiny parts priced as
 * the service prices them (paidPartOf: cumulative conversion at the original rate, clamped), each
 * refund's reversals planned by planReversal. Tiny totals and 1-unit parts are drawn on purpose:
 * the session 33 audit found a 7-cent (11 JPY) payment with a 33.33 % allocation, refunded a cent
 * at a time, whose last reversal moved 2 JPY with 0 USD; the earlier version of this property drew
 * only paid shares rounded down and large parts, and never met it.
 */

/** Channel currency → paid currency, at the sandbox rate: more, fewer and 3-decimal paid units. */
const pairs = [['USD', 'JPY'], ['USD', 'EUR'], ['USD', 'KRW'], ['USD', 'KWD'], ['JPY', 'USD'], ['KWD', 'JPY'], ['EUR', 'CLP']] as const;

const requestArb = fc.record({
  operator: fc.constantFrom('percent' as const, 'flat' as const),
  inChannel: fc.boolean(),
  share: fc.integer({ min: 1, max: 9000 }),
});

const scenario = fc.record({
  pair: fc.constantFrom(...pairs),
  channelTotal: fc.oneof(fc.integer({ min: 2, max: 40 }), fc.integer({ min: 2, max: 5000 })),
  requests: fc.array(requestArb, { minLength: 1, maxLength: 4 }),
  /** Captured share in percent of an authorisation, or null: a purchase. */
  capturePercent: fc.option(fc.integer({ min: 1, max: 100 }), { nil: null }),
  /** Refund sizes in channel units; the last refund takes the rest. */
  cuts: fc.array(fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 400 })), { minLength: 1, maxLength: 14 }),
});

/** The allocations planAllocations makes of `requests`, null when it refuses them. */
function planned(whole: ForexWhole, requests: readonly { operator: 'percent' | 'flat'; inChannel: boolean; share: number }[]) {
  const source: AllocationSource = { siteId: 1, channelId: 1, channelCurrency: whole.channelCurrency, accountMode: 'test', paidCurrency: whole.paidCurrency, paidTotal: whole.paidTotal, channelTotal: whole.channelTotal };
  const asked: AllocationRequest[] = requests.map((request, index) => {
    if (request.operator === 'percent') return { channelId: index + 2, operator: 'percent', value: request.share };
    const base = request.inChannel ? whole.channelTotal : whole.paidTotal;
    return { channelId: index + 2, operator: 'flat', value: Math.max(1, Math.floor((base * request.share) / 10_000)), currency: request.inChannel ? whole.channelCurrency : whole.paidCurrency };
  });
  const targets = new Map(asked.map((request) => [request.channelId, { id: request.channelId, siteId: 1, currency: whole.channelCurrency, accountMode: 'test' }]));
  try {
    return planAllocations({ source, requests: asked, targets, grantedSiteIds: new Set() });
  } catch (error) {
    if (error instanceof AllocationRefusal) return null;
    throw error;
  }
}

/** A part of `whole` of `channelPart` as the service prices it; the rest when it refuses a part that leaves too little. */
function refundPart(whole: ForexWhole, consumed: { paid: number; channel: number }, channelPart: number): { channel: number; paid: number } {
  try {
    return { channel: channelPart, paid: paidPartOf(whole, consumed, channelPart) };
  } catch (error) {
    if (!(error instanceof ForexPartRefusal)) throw error;
    return { channel: whole.channelTotal - consumed.channel, paid: whole.paidTotal - consumed.paid };
  }
}

describe('reversals of a forex payment refunded in parts (property)', () => {
  it('close each allocation in both currencies at once, and never move paid money without channel money', () => {
    fc.assert(fc.property(scenario, ({ pair: [channelCurrency, paidCurrency], channelTotal, requests, capturePercent, cuts }) => {
      const rate = sandboxRate({ base: channelCurrency, currency: paidCurrency })!;
      const paidTotal = convert({ amount: channelTotal, from: channelCurrency, to: paidCurrency, rate });
      const payment: ForexWhole = { channelCurrency, paidCurrency, rate, channelTotal, paidTotal };
      const plans = planned(payment, requests);
      if (plans === null) return;
      let whole = payment;
      let moved = plans.map((plan) => ({ channelTotal: plan.channelTotal, paidTotal: plan.paidTotal }));
      if (capturePercent !== null) {
        const captured = refundPart(payment, { paid: 0, channel: 0 }, Math.max(1, Math.floor((channelTotal * capturePercent) / 100)));
        whole = { ...payment, channelTotal: captured.channel, paidTotal: captured.paid };
        moved = scaleToCapture({ planned: moved, authorized: { channelTotal, paidTotal }, captured: { channelTotal: captured.channel, paidTotal: captured.paid }, forex: true });
        expect(moved.reduce((sum, one) => sum + one.paidTotal, 0)).toBeLessThanOrEqual(captured.paid);
        for (const one of moved) if (one.channelTotal === 0) expect(one.paidTotal).toBe(0);
      }
      const balances: AllocationBalance[] = moved.map((one, index) => ({ id: index, ...one, channelReversed: 0, paidReversed: 0, totalIn: 'paid' }));
      const consumed = { channel: 0, paid: 0 };
      for (const [index, cut] of cuts.entries()) {
        if (consumed.channel === whole.channelTotal) break;
        const last = index === cuts.length - 1 || cut >= whole.channelTotal - consumed.channel;
        const part = refundPart(whole, consumed, last ? whole.channelTotal - consumed.channel : cut);
        const parts = planReversal({
          allocations: balances, sourceChannelTotal: whole.channelTotal, refundedBefore: consumed.channel, refundChannelAmount: part.channel,
          paid: { sourceTotal: whole.paidTotal, refundedBefore: consumed.paid, refundAmount: part.paid },
        });
        for (const reversal of parts) {
          const balance = balances[reversal.allocationId]!;
          // The ledger moves the channel currency with the paid amount beside it: no entry carries paid money alone.
          expect(reversal.channelAmount).toBeGreaterThan(0);
          balance.channelReversed += reversal.channelAmount;
          balance.paidReversed += reversal.paidAmount;
          expect(balance.channelReversed).toBeLessThanOrEqual(balance.channelTotal);
          expect(balance.paidReversed).toBeLessThanOrEqual(balance.paidTotal);
          // Closed in the channel currency (shown reversed: true) means closed in the paid one too, and open means open.
          expect(reversal.fullyReversed).toBe(balance.channelReversed === balance.channelTotal);
          expect(balance.paidReversed === balance.paidTotal).toBe(balance.channelReversed === balance.channelTotal || balance.paidTotal === 0);
        }
        expect(parts.reduce((sum, reversal) => sum + reversal.channelAmount, 0)).toBeLessThanOrEqual(part.channel);
        consumed.channel += part.channel;
        consumed.paid += part.paid;
      }
      if (consumed.channel < whole.channelTotal) return;
      expect(consumed.paid).toBe(whole.paidTotal);
      for (const balance of balances) expect([balance.channelReversed, balance.paidReversed]).toEqual([balance.channelTotal, balance.paidTotal]);
    }), { numRuns: 4000 });
  });
});
