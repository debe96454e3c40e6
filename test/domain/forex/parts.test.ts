import { describe, expect, it } from 'vitest';
import { limits } from '../../../src/limits.js';
import { convertAtQuote, ForexRefusal } from '../../../src/domain/forex/forex.js';
import type { RateQuote } from '../../../src/domain/forex/quotes.js';
import { channelPartOf, paidPartOf, type ForexWhole } from '../../../src/domain/transactions/forex-parts.js';

// A KRW channel paid in EUR: one won is under a tenth of a cent, so a part one won short of the
// rest converts to the whole EUR rest. 10 000 KRW × 0.00068 = 6.80 EUR.
const whole: ForexWhole = { paidCurrency: 'EUR', paidTotal: 680, channelCurrency: 'KRW', channelTotal: 10_000, rate: '0.00068' };

describe('parts of a forex transaction (docs/forex.md "Parts")', () => {
  it('a part that leaves channel money open leaves at least one paid unit open, so the last part still moves money on both sides', () => {
    // 9 999 KRW converts to 679.93 → 680 EUR cents, the whole paid side: it is held to 679.
    const first = paidPartOf(whole, { paid: 0, channel: 0 }, 9_999);
    expect(first).toBe(679);
    // The last won takes the last cent: no refund of channel money with nothing paid back.
    expect(paidPartOf(whole, { paid: first, channel: 9_999 }, 1)).toBe(1);
  });

  it('a paid part that leaves paid money open leaves at least one channel unit open (chargebacks are given in the paid currency)', () => {
    // An EUR channel paid in KRW: 6.80 EUR × 1470.5882 = 10 000 KRW. 9 999 KRW is 6.7993 → 6.80 EUR, the whole.
    const paidInWon: ForexWhole = { paidCurrency: 'KRW', paidTotal: 10_000, channelCurrency: 'EUR', channelTotal: 680, rate: '1470.5882' };
    const first = channelPartOf(paidInWon, { paid: 0, channel: 0 }, 9_999);
    expect(first).toBe(679);
    expect(channelPartOf(paidInWon, { paid: 9_999, channel: first }, 1)).toBe(1);
  });
});

describe('convertAtQuote', () => {
  const quote: RateQuote = { quoteId: 1, base: 'USD', currency: 'EUR', rate: '1', provider: 'test', expiresAt: new Date('2030-01-01T00:00:00Z'), modifiedAt: new Date('2026-01-01T00:00:00Z') };
  const now = new Date('2026-06-01T00:00:00Z');

  it('takes a conversion of exactly the largest total and refuses one minor unit more, on total', () => {
    expect(convertAtQuote({ amount: limits.amountCentsMax, quote, now })).toBe(limits.amountCentsMax);
    let refusal: unknown;
    try {
      convertAtQuote({ amount: limits.amountCentsMax + 1, quote, now });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ForexRefusal);
    expect(refusal).toMatchObject({ reason: 'above_maximum', param: 'total', currency: 'EUR' });
  });
});
