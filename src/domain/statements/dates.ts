/**
 * `statement_date`: the date from which a transaction is available for statements
 * (docs/statements.md). The rule: the first period boundary strictly after the GMT calendar day
 * the transaction was created on, so a statement cut at a boundary covers everything created
 * before it and nothing created on the boundary day itself.
 * - week: the next Monday;
 * - biweek: the next Monday of the fortnight grid anchored at Monday 1970-01-05 (so every
 *   channel shares the same boundaries: 2026-01-05, 2026-01-19, ...);
 * - month: the first day of the next month.
 */
export const statementPeriods = ['week', 'biweek', 'month'] as const;
export type StatementPeriod = (typeof statementPeriods)[number];

const dayMs = 24 * 60 * 60 * 1000;
/** Monday 1970-01-05, the first Monday after the epoch: day 4 counted from 1970-01-01. */
const biweekAnchorDay = 4;

function gmtDay(date: Date): number {
  return Math.floor(date.getTime() / dayMs);
}

function dayText(day: number): string {
  return new Date(day * dayMs).toISOString().slice(0, 10);
}

export function statementDate(createdAt: Date, period: StatementPeriod): string {
  const day = gmtDay(createdAt);
  switch (period) {
    case 'week': {
      // 1970-01-01 was a Thursday: (day + 3) % 7 is 0 on Mondays.
      const sinceMonday = (day + 3) % 7;
      return dayText(day + 7 - sinceMonday);
    }
    case 'biweek': {
      const sinceAnchor = day - biweekAnchorDay;
      return dayText(biweekAnchorDay + (Math.floor(sinceAnchor / 14) + 1) * 14);
    }
    case 'month':
      return new Date(Date.UTC(createdAt.getUTCFullYear(), createdAt.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
    default:
      throw new Error(`unknown statement period ${String(period)}`);
  }
}

export function isStatementPeriod(value: string): value is StatementPeriod {
  return (statementPeriods as readonly string[]).includes(value);
}
