import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bookingStatusRules, currentBookingStatus, deriveBookingStatus, type BookingMoneyFacts, type BookingStatus } from '../../src/domain/booking-status.js';

const base: BookingMoneyFacts = { total: 10_000, totalPaid: 0, totalAuthorized: 0, hasLockedTransaction: false, dateEnd: '2026-12-31', today: '2026-11-21', isDraft: false };

const cases: [string, Partial<BookingMoneyFacts>, BookingStatus][] = [
  ['fresh booking', {}, 'unpaid'],
  ['zero total, nothing received', { total: 0 }, 'unpaid'],
  ['zero total after end date', { total: 0, dateEnd: '2026-01-01' }, 'unpaid'],
  ['draft before any payment', { isDraft: true }, 'draft'],
  ['draft flag ignored once money is captured', { isDraft: true, totalPaid: 500 }, 'partial-payment'],
  ['draft flag ignored once money is authorised', { isDraft: true, totalAuthorized: 10_000 }, 'authorized'],
  ['part captured', { totalPaid: 1 }, 'partial-payment'],
  ['part captured, rest authorised', { totalPaid: 4_000, totalAuthorized: 6_000 }, 'partial-payment'],
  ['exactly paid', { totalPaid: 10_000 }, 'paid'],
  ['overpaid still paid', { totalPaid: 12_000 }, 'paid'],
  ['refunded back to part', { totalPaid: 9_999 }, 'partial-payment'],
  ['fully refunded', { totalPaid: 0 }, 'unpaid'],
  ['authorisations cover total', { totalAuthorized: 10_000 }, 'authorized'],
  ['authorisations exceed total', { totalAuthorized: 20_000 }, 'authorized'],
  ['authorisations short of total', { totalAuthorized: 9_999 }, 'unpaid'],
  ['paid and end date passed', { totalPaid: 10_000, dateEnd: '2026-11-20' }, 'completed'],
  ['paid and ends today is not yet completed', { totalPaid: 10_000, dateEnd: '2026-11-21' }, 'paid'],
  ['part paid after end date stays partial', { totalPaid: 5_000, dateEnd: '2026-01-01' }, 'partial-payment'],
  ['locked beats paid', { totalPaid: 10_000, hasLockedTransaction: true }, 'locked'],
  ['locked beats draft', { isDraft: true, hasLockedTransaction: true }, 'locked'],
  ['locked beats completed', { totalPaid: 10_000, dateEnd: '2026-01-01', hasLockedTransaction: true }, 'locked'],
];

describe('deriveBookingStatus', () => {
  it.each(cases)('%s', (_name, facts, expected) => {
    expect(deriveBookingStatus({ ...base, ...facts })).toBe(expected);
  });

  it('ends with a catch-all rule, so every input has a status', () => {
    expect(bookingStatusRules.at(-1)!.status).toBe('unpaid');
    fc.assert(
      fc.property(
        fc.record({ total: fc.nat(), totalPaid: fc.integer(), totalAuthorized: fc.nat(), hasLockedTransaction: fc.boolean(), isDraft: fc.boolean() }),
        (facts) => {
          const status = deriveBookingStatus({ ...base, ...facts });
          // Paid needs captured money covering a positive total; locked always wins.
          if (facts.hasLockedTransaction) return status === 'locked';
          if (status === 'paid') return facts.total > 0 && facts.totalPaid >= facts.total;
          return true;
        },
      ),
    );
  });
});

describe('currentBookingStatus', () => {
  it('shows a stored paid booking as completed once its end date has passed', () => {
    expect(currentBookingStatus('paid', '2026-11-20', '2026-11-21')).toBe('completed');
    expect(currentBookingStatus('paid', '2026-11-21', '2026-11-21')).toBe('paid');
    expect(currentBookingStatus('partial-payment', '2026-01-01', '2026-11-21')).toBe('partial-payment');
  });
});
