import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { statementDate } from '../../../src/domain/statements/index.js';

describe('statementDate', () => {
  it.each([
    // [created (GMT), week, biweek, month]
    ['2026-11-21T10:00:00Z', '2026-11-23', '2026-11-23', '2026-12-01'], // Saturday; 2026-11-23 is on the fortnight grid
    ['2026-11-23T00:00:00Z', '2026-11-30', '2026-12-07', '2026-12-01'], // a boundary itself: the next one
    ['2026-11-29T23:59:59Z', '2026-11-30', '2026-12-07', '2026-12-01'], // Sunday night GMT
    ['2026-11-30T00:00:00Z', '2026-12-07', '2026-12-07', '2026-12-01'], // a week boundary, mid-fortnight
    ['2026-12-31T23:00:00Z', '2027-01-04', '2027-01-04', '2027-01-01'], // year end
    ['2028-02-29T12:00:00Z', '2028-03-06', '2028-03-13', '2028-03-01'], // leap day
  ])('created %s → week %s, biweek %s, month %s', (created, week, biweek, month) => {
    const at = new Date(created);
    expect(statementDate(at, 'week')).toBe(week);
    expect(statementDate(at, 'biweek')).toBe(biweek);
    expect(statementDate(at, 'month')).toBe(month);
  });

  it('is always after the creation day, a Monday for weeks, within one period (property)', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }), (at) => {
        const day = at.toISOString().slice(0, 10);
        for (const [period, maxDays] of [['week', 7], ['biweek', 14], ['month', 31]] as const) {
          const result = statementDate(at, period);
          expect(result > day).toBe(true);
          const gap = (Date.parse(`${result}T00:00:00Z`) - Date.parse(`${day}T00:00:00Z`)) / 86_400_000;
          expect(gap).toBeGreaterThanOrEqual(1);
          expect(gap).toBeLessThanOrEqual(maxDays);
          if (period !== 'month') expect(new Date(`${result}T00:00:00Z`).getUTCDay()).toBe(1);
          else expect(result.endsWith('-01')).toBe(true);
        }
      }),
    );
  });
});
