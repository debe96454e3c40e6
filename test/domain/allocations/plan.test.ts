import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AllocationRefusal, planAllocations, type AllocationRequest, type AllocationSource, type AllocationTarget } from '../../../src/domain/allocations/plan.js';
import { planReversal, scaleToCapture } from '../../../src/domain/allocations/reverse.js';
import { allocationJson } from '../../../src/domain/allocations/shape.js';

const source: AllocationSource = { siteId: 1, channelId: 10, channelCurrency: 'USD', accountMode: 'test', paidCurrency: 'USD', paidTotal: 10000, channelTotal: 10000 };
const targets = new Map<number, AllocationTarget>([
  [11, { id: 11, siteId: 1, currency: 'USD', accountMode: 'test' }],
  [12, { id: 12, siteId: 1, currency: 'GBP', accountMode: 'test' }],
  [13, { id: 13, siteId: 1, currency: 'USD', accountMode: 'live' }],
  [14, { id: 14, siteId: 1, currency: 'USD', accountMode: 'draft' }],
  [20, { id: 20, siteId: 2, currency: 'USD', accountMode: 'test' }],
]);

function plan(requests: AllocationRequest[], options: { source?: AllocationSource; granted?: number[] } = {}) {
  return planAllocations({ source: options.source ?? source, requests, targets, grantedSiteIds: new Set(options.granted ?? []) });
}

function refusal(requests: AllocationRequest[], options: { source?: AllocationSource; granted?: number[] } = {}): string {
  try {
    plan(requests, options);
  } catch (error) {
    expect(error).toBeInstanceOf(AllocationRefusal);
    return (error as AllocationRefusal).params.allocations!;
  }
  throw new Error('expected a refusal');
}

describe('planAllocations', () => {
  it('computes flat and percent (basis points, half-up) allocations', () => {
    const plans = plan([
      { channelId: 11, value: 1500, operator: 'flat' },
      { channelId: 11, value: 1250, operator: 'percent', title: 'Agent' },
    ]);
    expect(plans.map((p) => [p.total, p.channelTotal, p.currency])).toEqual([[1500, 1500, 'USD'], [1250, 1250, 'USD']]);
    expect(plans[1]!.title).toBe('Agent');
    expect(plan([{ channelId: 11, value: 3333, operator: 'percent' }], { source: { ...source, paidTotal: 1001, channelTotal: 1001 } })[0]!.total).toBe(334);
  });

  it('computes forex allocations in the paid and in the channel currency', () => {
    const forex: AllocationSource = { ...source, paidCurrency: 'EUR', paidTotal: 9200, channelTotal: 10000 };
    const [inPaid, inChannel, percent] = plan([
      { channelId: 11, value: 920, operator: 'flat' },
      { channelId: 11, currency: 'USD', value: 2000, operator: 'flat' },
      { channelId: 11, value: 500, operator: 'percent' },
    ], { source: forex });
    expect(inPaid).toMatchObject({ currency: 'EUR', total: 920, paidTotal: 920, channelTotal: 1000 });
    expect(inChannel).toMatchObject({ currency: 'USD', total: 2000, paidTotal: 1840, channelTotal: 2000 });
    expect(percent).toMatchObject({ currency: 'EUR', total: 460, paidTotal: 460, channelTotal: 500 });
    expect(refusal([{ channelId: 11, currency: 'GBP', value: 1, operator: 'flat' }], { source: forex })).toMatch(/currencies must be EUR or USD/);
  });

  it('refuses the paying channel, unknown and ungranted channels, other currencies and modes', () => {
    expect(refusal([{ channelId: 10, value: 1, operator: 'flat' }])).toMatch(/Allocation 0: an allocation cannot go to the paying channel/);
    expect(refusal([{ channelId: 11, value: 1, operator: 'flat' }, { channelId: 99, value: 1, operator: 'flat' }])).toMatch(/Allocation 1: channel 99 does not exist or may not receive/);
    expect(refusal([{ channelId: 20, value: 1, operator: 'flat' }])).toMatch(/channel 20 does not exist or may not receive/);
    expect(plan([{ channelId: 20, value: 1, operator: 'flat' }], { granted: [2] })).toHaveLength(1);
    expect(refusal([{ channelId: 12, value: 1, operator: 'flat' }])).toMatch(/channel 12 does not accept USD/);
    expect(refusal([{ channelId: 13, value: 1, operator: 'flat' }])).toMatch(/live channel/);
    // A draft channel takes real cards: sandbox money stays out of it, and its money out of test channels.
    expect(refusal([{ channelId: 14, value: 1, operator: 'flat' }])).toMatch(/channel 14 is a draft channel; the paying channel is test/);
    expect(refusal([{ channelId: 11, value: 1, operator: 'flat' }], { source: { ...source, accountMode: 'draft' } })).toMatch(/channel 11 is a test channel; the paying channel is draft/);
    expect(refusal([{ channelId: 11, value: 0, operator: 'flat' }])).toMatch(/positive integer/);
    expect(refusal([{ channelId: 11, value: 10001, operator: 'percent' }])).toMatch(/basis points/);
    // The whole transaction (10 000 basis points) may go to one channel.
    expect(plan([{ channelId: 11, value: 10000, operator: 'percent' }])[0]).toMatchObject({ total: 10000, paidTotal: 10000, channelTotal: 10000 });
    expect(refusal([{ channelId: 11, value: 1, operator: 'share' as 'flat' }])).toMatch(/operator must be one of flat, percent/);
    expect(refusal([{ channelId: 11, value: 1, operator: 'flat', statementDate: '2026-02-30' }])).toMatch(/statement_date/);
  });

  it('never lets the allocations exceed the transaction total', () => {
    expect(refusal([{ channelId: 11, value: 6000, operator: 'flat' }, { channelId: 11, value: 4001, operator: 'flat' }])).toMatch(/add up to 10001 USD, more than the transaction total of 10000/);
    expect(plan([{ channelId: 11, value: 6000, operator: 'flat' }, { channelId: 11, value: 4000, operator: 'percent' }])).toHaveLength(2);
    // Two half-cent roundings up would make 4 of 3: refused rather than over-allocated.
    expect(refusal([{ channelId: 11, value: 5000, operator: 'percent' }, { channelId: 11, value: 5000, operator: 'percent' }], { source: { ...source, paidTotal: 3, channelTotal: 3 } })).toMatch(/add up to 4/);
  });

  it('refuses an allocation that rounds to 0 on either side: it would be shown as moved with nothing moved', () => {
    const hundred = { ...source, paidTotal: 100, channelTotal: 100 };
    expect(refusal([{ channelId: 11, value: 1, operator: 'percent' }], { source: hundred })).toBe(
      'Allocation 0: 1 basis points of 100 USD is 0 USD; an allocation moves at least one minor unit in each currency.');
    expect(plan([{ channelId: 11, value: 50, operator: 'percent' }], { source: hundred })[0]).toMatchObject({ total: 1, channelTotal: 1 });
    // 1350 KRW for 100 USD cents: 1 KRW is 0.07 cents, 7 KRW rounds to one.
    const krw = { ...source, paidCurrency: 'KRW', paidTotal: 1350, channelTotal: 100 };
    expect(refusal([{ channelId: 11, value: 500, operator: 'flat' }, { channelId: 11, value: 1, operator: 'flat' }], { source: krw })).toBe(
      "Allocation 1: 1 KRW is 0 USD at the transaction's rate; an allocation moves at least one minor unit in each currency.");
    expect(plan([{ channelId: 11, value: 7, operator: 'flat' }], { source: krw })[0]).toMatchObject({ total: 7, paidTotal: 7, channelTotal: 1 });
    // The paid side too: a channel-currency amount worth less than half a unit of the paid currency.
    const dear = { ...source, paidCurrency: 'KWD', paidTotal: 3, channelTotal: 1000 };
    expect(refusal([{ channelId: 11, currency: 'USD', value: 100, operator: 'flat' }], { source: dear })).toMatch(/Allocation 0: 100 USD is 0 KWD at the transaction's rate/);
  });

  it('returns the spec shape', () => {
    expect(allocationJson({ id: 7, toChannelId: 11, operator: 'flat', value: 920, currency: 'EUR', total: 920, channelCurrency: 'USD', channelTotal: 1000, reversed: false })).toEqual({
      id: 7, value: 920, total: 920, channels: 11, currencies: 'EUR', operator: 'flat', reversed: false,
      debit: { currencies: 'USD', total: 1000 }, credit: { currencies: 'USD', total: 1000 },
    });
  });
});

describe('planReversal', () => {
  it('reverses pro rata on a partial refund and in full on the rest, in both currencies', () => {
    // A 100.00 USD payment paid as 92.00 EUR: 27.60 EUR allocated in EUR (30.00 USD) and 10.01 USD in USD (9.21 EUR).
    const allocations = [
      { id: 1, channelTotal: 3000, channelReversed: 0, paidTotal: 2760, paidReversed: 0, totalIn: 'paid' as const },
      { id: 2, channelTotal: 1001, channelReversed: 0, paidTotal: 921, paidReversed: 0, totalIn: 'channel' as const },
    ];
    const first = planReversal({ allocations, sourceChannelTotal: 10000, refundedBefore: 0, refundChannelAmount: 2500, paid: { sourceTotal: 9200, refundedBefore: 0, refundAmount: 2300 } });
    expect(first).toEqual([
      { allocationId: 1, channelAmount: 750, paidAmount: 690, total: 690, fullyReversed: false },
      { allocationId: 2, channelAmount: 250, paidAmount: 230, total: 250, fullyReversed: false },
    ]);
    const after = allocations.map((a, i) => ({ ...a, channelReversed: first[i]!.channelAmount, paidReversed: first[i]!.paidAmount }));
    const rest = planReversal({ allocations: after, sourceChannelTotal: 10000, refundedBefore: 2500, refundChannelAmount: 7500, paid: { sourceTotal: 9200, refundedBefore: 2300, refundAmount: 6900 } });
    expect(rest).toEqual([
      { allocationId: 1, channelAmount: 2250, paidAmount: 2070, total: 2070, fullyReversed: true },
      { allocationId: 2, channelAmount: 751, paidAmount: 691, total: 751, fullyReversed: true },
    ]);
  });

  it('never gives back more than the refund in the paid currency: two halves of 765 JPY are 382 + 383, not 383 + 383', () => {
    const allocations = [1, 2].map((id) => ({ id, channelTotal: 500, channelReversed: 0, paidTotal: 750, paidReversed: 0, totalIn: 'paid' as const }));
    const parts = planReversal({ allocations, sourceChannelTotal: 1000, refundedBefore: 0, refundChannelAmount: 510, paid: { sourceTotal: 1500, refundedBefore: 0, refundAmount: 765 } });
    expect(parts.map((part) => [part.channelAmount, part.paidAmount])).toEqual([[255, 383], [255, 382]]);
  });

  it('takes back exactly the refund in whole units of both currencies and closes every allocation on the last refund (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: 2_000_000 }),
        fc.boolean(),
        fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 6 }),
        (total, paidWhole, forex, shares, refunds) => {
          const shareSum = shares.reduce((a, b) => a + b, 0);
          fc.pre(shareSum > 0 && shareSum <= 10_000);
          const paidSource = forex ? paidWhole : total;
          let allocations = shares.map((share, id) => {
            const channelTotal = Math.floor((total * share) / 10_000);
            const paidTotal = forex ? Math.floor((paidSource * share) / 10_000) : channelTotal;
            return { id, channelTotal, channelReversed: 0, paidTotal, paidReversed: 0, totalIn: 'paid' as const };
          });
          let refunded = 0;
          let refundedPaid = 0;
          const steps = [...refunds.map((r) => Math.min(r, total - refunded)), total];
          for (const step of steps) {
            const paidLeft = paidSource - refundedPaid;
            // A part that would leave no paid unit for the rest is refused: the rest is taken instead.
            const amount = paidLeft < 2 ? total - refunded : Math.min(step, total - refunded);
            if (amount === 0) continue;
            // The refund's paid amount is its cumulative conversion, clamped to take a unit and leave one, as forex-parts.ts prices it.
            const paidAmount = refunded + amount === total ? paidLeft : Math.min(Math.max(Math.round((paidSource * (refunded + amount)) / total) - refundedPaid, 1), paidLeft - 1);
            const parts = planReversal({
              allocations, sourceChannelTotal: total, refundedBefore: refunded, refundChannelAmount: amount,
              paid: forex ? { sourceTotal: paidSource, refundedBefore: refundedPaid, refundAmount: paidAmount } : null,
            });
            expect(parts.reduce((sum, part) => sum + part.channelAmount, 0)).toBeLessThanOrEqual(amount);
            // In the paid currency the reversals may exceed the refund where no split fits (docs/allocations.md, session 33).
            if (!forex) expect(parts.reduce((sum, part) => sum + part.paidAmount, 0)).toBeLessThanOrEqual(amount);
            allocations = allocations.map((a) => {
              const part = parts.find((p) => p.allocationId === a.id);
              if (!part) return a;
              // A part with no channel money moves no paid money, unless only its paid rest was left.
              if (part.channelAmount === 0) expect(a.channelReversed).toBe(a.channelTotal);
              return { ...a, channelReversed: a.channelReversed + part.channelAmount, paidReversed: a.paidReversed + part.paidAmount };
            });
            refunded += amount;
            refundedPaid += paidAmount;
            for (const a of allocations) {
              expect(a.channelReversed).toBeLessThanOrEqual(a.channelTotal);
              expect(a.paidReversed).toBeLessThanOrEqual(a.paidTotal);
            }
          }
          for (const a of allocations) expect([a.channelReversed, a.paidReversed]).toEqual([a.channelTotal, a.paidTotal]);
        },
      ),
    );
  });

  it('scales planned allocations to a partial capture', () => {
    const planned = (channelTotal: number) => ({ channelTotal, paidTotal: channelTotal });
    const same = (amount: number) => ({ channelTotal: amount, paidTotal: amount });
    expect(scaleToCapture({ planned: [planned(3000), planned(1000)], authorized: same(10000), captured: same(5000), forex: false })).toEqual([same(1500), same(500)]);
    expect(scaleToCapture({ planned: [planned(3333)], authorized: same(10000), captured: same(10000), forex: false })).toEqual([same(3333)]);
  });

  it('scales a forex capture by largest remainder in the paid currency too: two 50 % of a 765 JPY capture are 383 + 382 JPY', () => {
    const half = { channelTotal: 500, paidTotal: 750 };
    const scaled = scaleToCapture({ planned: [half, half], authorized: { channelTotal: 1000, paidTotal: 1500 }, captured: { channelTotal: 510, paidTotal: 765 }, forex: true });
    expect(scaled).toEqual([{ channelTotal: 255, paidTotal: 383 }, { channelTotal: 255, paidTotal: 382 }]);
    expect(scaleToCapture({ planned: [half, half], authorized: { channelTotal: 1000, paidTotal: 1500 }, captured: { channelTotal: 1000, paidTotal: 1500 }, forex: true })).toEqual([half, half]);
  });

  it('never scales a forex capture above the capture in either currency, and moves no paid money where no channel money moves (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ channelTotal: fc.integer({ min: 1, max: 100_000 }), paidTotal: fc.integer({ min: 1, max: 200_000 }) }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (planned, channelExtra, paidExtra, fraction) => {
          const authorized = {
            channelTotal: planned.reduce((sum, p) => sum + p.channelTotal, 0) + channelExtra,
            paidTotal: planned.reduce((sum, p) => sum + p.paidTotal, 0) + paidExtra,
          };
          const captured = { channelTotal: Math.floor(authorized.channelTotal * fraction), paidTotal: Math.floor(authorized.paidTotal * fraction) };
          const scaled = scaleToCapture({ planned, authorized, captured, forex: true });
          expect(scaled.reduce((sum, s) => sum + s.channelTotal, 0)).toBeLessThanOrEqual(captured.channelTotal);
          expect(scaled.reduce((sum, s) => sum + s.paidTotal, 0)).toBeLessThanOrEqual(captured.paidTotal);
          scaled.forEach((s, index) => {
            expect(s.channelTotal).toBeLessThanOrEqual(planned[index]!.channelTotal);
            expect(s.paidTotal).toBeLessThanOrEqual(planned[index]!.paidTotal);
            if (s.channelTotal === 0) expect(s.paidTotal).toBe(0);
          });
          expect(scaleToCapture({ planned, authorized, captured: authorized, forex: true })).toEqual(planned);
        },
      ),
    );
  });
});
