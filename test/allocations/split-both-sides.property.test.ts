import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { planReversal, type AllocationBalance } from '../../src/domain/allocations/reverse.js';

// planReversal over a forex payment refunded in random parts, each part's paid amount taken as
// forex parts are (the cumulative channel amount converted at the payment's rate, less what the
// earlier parts took). After every refund no reversal moves a paid amount without a channel one
// (the ledger could not carry it), nothing is reversed past what was allocated, and the last
// refund closes every allocation in both currencies.
const scenario = fc.record({
  rate: fc.double({ min: 0.005, max: 400, noNaN: true }),
  own: fc.integer({ min: 0, max: 5000 }),
  allocations: fc.array(fc.integer({ min: 1, max: 3000 }), { minLength: 1, maxLength: 3 }),
  cuts: fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 6 }),
});

const paidOf = (cents: number, rate: number) => Math.round(cents * rate);

describe('reversals of a forex payment refunded in parts', () => {
  it('close each allocation in both currencies together, and never move paid money without channel money', () => {
    fc.assert(fc.property(scenario, ({ rate, own, allocations: channelTotals, cuts }) => {
      const sourceChannelTotal = own + channelTotals.reduce((sum, value) => sum + value, 0);
      const sourcePaidTotal = paidOf(sourceChannelTotal, rate);
      // The payment's allocations in the paid currency: their shares of it, as planning takes them.
      const balances: AllocationBalance[] = channelTotals.map((channelTotal, index) => ({
        id: index, channelTotal, channelReversed: 0, paidTotal: Math.floor((channelTotal * sourcePaidTotal) / sourceChannelTotal), paidReversed: 0, totalIn: 'channel',
      }));
      // Refund amounts: the cuts scaled to the whole, the last taking the rest.
      const cutSum = cuts.reduce((sum, value) => sum + value, 0);
      let refundedBefore = 0;
      for (const [index, cut] of cuts.entries()) {
        const amount = index === cuts.length - 1 ? sourceChannelTotal - refundedBefore : Math.floor((cut * sourceChannelTotal) / cutSum);
        const paidBefore = paidOf(refundedBefore, rate);
        const paidAmount = paidOf(refundedBefore + amount, rate) - paidBefore;
        const parts = planReversal({
          allocations: balances, sourceChannelTotal, refundedBefore, refundChannelAmount: amount,
          paid: { sourceTotal: sourcePaidTotal, refundedBefore: paidBefore, refundAmount: paidAmount },
        });
        for (const part of parts) {
          const balance = balances[part.allocationId]!;
          if (part.paidAmount > 0) expect(part.channelAmount).toBeGreaterThan(0);
          balance.channelReversed += part.channelAmount;
          balance.paidReversed += part.paidAmount;
          expect(balance.channelReversed).toBeLessThanOrEqual(balance.channelTotal);
          expect(balance.paidReversed).toBeLessThanOrEqual(balance.paidTotal);
        }
        expect(parts.reduce((sum, part) => sum + part.channelAmount, 0)).toBeLessThanOrEqual(amount);
        expect(parts.reduce((sum, part) => sum + part.paidAmount, 0)).toBeLessThanOrEqual(paidAmount);
        refundedBefore += amount;
      }
      for (const balance of balances) expect([balance.channelReversed, balance.paidReversed]).toEqual([balance.channelTotal, balance.paidTotal]);
    }), { numRuns: 3000 });
  });
});
