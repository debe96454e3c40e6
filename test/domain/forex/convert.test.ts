import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { convert, divideDecimals, divideHalfUp, formatDecimal, parseDecimal, percentOf, splitProRata } from '../../../src/domain/money.js';

describe('convert', () => {
  it('converts between 2-decimal currencies, rounding half-up to the cent', () => {
    expect(convert({ amount: 10000, from: 'USD', to: 'EUR', rate: '0.92' })).toBe(9200);
    // 33.33 USD × 0.9234 = 30.776922 EUR → 30.78
    expect(convert({ amount: 3333, from: 'USD', to: 'EUR', rate: '0.9234' })).toBe(3078);
    // exactly half a cent rounds up: 1 cent × 0.5 = 0.5 cent → 1
    expect(convert({ amount: 1, from: 'USD', to: 'EUR', rate: '0.5' })).toBe(1);
    expect(convert({ amount: 1, from: 'USD', to: 'EUR', rate: '0.4999999' })).toBe(0);
  });

  it('handles 0-decimal targets and sources (JPY, KRW, ISK, CLP)', () => {
    // 12.34 USD × 150 = 1851 JPY
    expect(convert({ amount: 1234, from: 'USD', to: 'JPY', rate: '150' })).toBe(1851);
    // 12.35 USD × 150.5 = 1858.675 JPY → 1859
    expect(convert({ amount: 1235, from: 'USD', to: 'JPY', rate: '150.5' })).toBe(1859);
    // 1000 JPY × 0.006667 USD = 6.667 USD → 6.67 (667 cents)
    expect(convert({ amount: 1000, from: 'JPY', to: 'USD', rate: '0.006667' })).toBe(667);
    expect(convert({ amount: 100, from: 'EUR', to: 'KRW', rate: '1467.39' })).toBe(1467);
    expect(convert({ amount: 1000, from: 'ISK', to: 'CLP', rate: '6.521' })).toBe(6521);
  });

  it('handles 3-decimal currencies (KWD, BHD)', () => {
    // 100.00 USD × 0.307 = 30.700 KWD = 30700 fils
    expect(convert({ amount: 10000, from: 'USD', to: 'KWD', rate: '0.307' })).toBe(30700);
    // 1.234 BHD × 2.6595744680 USD = 3.2819148... USD → 328 cents
    expect(convert({ amount: 1234, from: 'BHD', to: 'USD', rate: '2.659574468085' })).toBe(328);
    // 0.005 USD per fils boundary: 1 cent × 0.0005 KWD... 0.01 × 0.05 = 0.0005 KWD = 0.5 fils → 1
    expect(convert({ amount: 1, from: 'USD', to: 'KWD', rate: '0.05' })).toBe(1);
  });

  it('reads exponents and trailing zeros in rates exactly', () => {
    expect(formatDecimal(parseDecimal('1e-7'))).toBe('0.0000001');
    expect(formatDecimal(parseDecimal('1.50000'))).toBe('1.5');
    expect(formatDecimal(parseDecimal('2E3'))).toBe('2000');
    expect(() => parseDecimal('0')).toThrow(/positive decimal/);
    expect(() => parseDecimal('-1.2')).toThrow(/positive decimal/);
    expect(() => parseDecimal('1,2')).toThrow(/positive decimal/);
    expect(formatDecimal(divideDecimals(parseDecimal('1'), parseDecimal('0.92'), 12))).toBe('1.086956521739');
  });

  it('rounds half away from zero', () => {
    expect(divideHalfUp(5n, 2n)).toBe(3n);
    expect(divideHalfUp(-5n, 2n)).toBe(-3n);
    expect(divideHalfUp(7n, 3n)).toBe(2n);
    expect(percentOf(3, 5000)).toBe(2);
    expect(percentOf(10000, 1250)).toBe(1250);
  });

  it('is exact for rate 1 and monotone in the amount (property)', () => {
    const currency = fc.constantFrom('USD', 'EUR', 'JPY', 'KWD', 'CLP', 'BHD');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e12 }), currency, (amount, code) => {
        expect(convert({ amount, from: code, to: code, rate: '1' })).toBe(amount);
      }),
    );
    const rate = fc.tuple(fc.integer({ min: 1, max: 10 ** 5 }), fc.integer({ min: 0, max: 9 })).map(([units, scale]) => formatDecimal({ units: BigInt(units), scale }));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e7 }), fc.integer({ min: 0, max: 1e6 }), rate, currency, currency, (amount, step, text, from, to) => {
        const low = convert({ amount, from, to, rate: text });
        const high = convert({ amount: amount + step, from, to, rate: text });
        expect(high).toBeGreaterThanOrEqual(low);
      }),
    );
  });

  it('splits pro rata so the parts add up exactly and never exceed their weights', () => {
    expect(splitProRata(100, [1, 1, 1])).toEqual([34, 33, 33]);
    expect(splitProRata(0, [0, 0])).toEqual([0, 0]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1e9 }), { minLength: 1, maxLength: 8 }), fc.double({ min: 0, max: 1, noNaN: true }), (weights, fraction) => {
        const sum = weights.reduce((a, b) => a + b, 0);
        fc.pre(sum > 0);
        const total = Math.floor(sum * fraction);
        const parts = splitProRata(total, weights);
        expect(parts.reduce((a, b) => a + b, 0)).toBe(total);
        parts.forEach((part, index) => expect(part).toBeLessThanOrEqual(weights[index]!));
      }),
    );
  });
});
