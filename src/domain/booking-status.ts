/**
 * Booking status is derived, never set by hand: one ordered rule table over the money facts of
 * the booking (decisions.md "Status transitions"). The first rule that holds wins. Callers (the
 * payments code inside its database transactions, bookings PUT when the total changes) compute
 * the facts, call deriveBookingStatus and store the result.
 */

export const bookingStatuses = ['draft', 'unpaid', 'partial-payment', 'authorized', 'paid', 'completed', 'locked'] as const;
export type BookingStatus = (typeof bookingStatuses)[number];

/** Statuses visible through the API (`draft` shows only in the modal's callbacks). */
export const publicBookingStatuses = ['authorized', 'completed', 'locked', 'paid', 'partial-payment', 'unpaid'] as const;

export interface BookingMoneyFacts {
  /** Booking total, cents. */
  total: number;
  /** Captured money (purchases and captures) net of refunds, cents. */
  totalPaid: number;
  /** Authorised and not yet captured or voided, cents. */
  totalAuthorized: number;
  /** Any linked transaction is locked by a chargeback. */
  hasLockedTransaction: boolean;
  /** End date of the booking, `YYYY-MM-DD`. */
  dateEnd: string;
  /** Today's GMT date, `YYYY-MM-DD`. */
  today: string;
  /** The modal is creating the booking and no payment has been attempted yet. */
  isDraft: boolean;
}

export interface BookingStatusRule {
  status: BookingStatus;
  /** The condition in words, for docs and test names. */
  when: string;
  holds: (facts: BookingMoneyFacts) => boolean;
}

const noMoney = (facts: BookingMoneyFacts) => facts.totalPaid <= 0 && facts.totalAuthorized <= 0;
// A zero total owes nothing and has received nothing: it stays unpaid rather than "paid" from
// birth, so every booking starts unpaid as the spec says.
const fullyPaid = (facts: BookingMoneyFacts) => facts.total > 0 && facts.totalPaid >= facts.total;

export const bookingStatusRules: readonly BookingStatusRule[] = [
  { status: 'locked', when: 'any linked transaction is locked (chargeback)', holds: (facts) => facts.hasLockedTransaction },
  { status: 'draft', when: 'the modal is creating it and no money has arrived', holds: (facts) => facts.isDraft && noMoney(facts) },
  { status: 'completed', when: 'captured money covers the total and the end date has passed', holds: (facts) => fullyPaid(facts) && facts.dateEnd < facts.today },
  { status: 'paid', when: 'captured money net of refunds covers the total', holds: fullyPaid },
  { status: 'partial-payment', when: 'some money is captured, less than the total', holds: (facts) => facts.totalPaid > 0 },
  { status: 'authorized', when: 'authorisations cover the total and nothing is captured', holds: (facts) => facts.total > 0 && facts.totalAuthorized >= facts.total },
  { status: 'unpaid', when: 'otherwise', holds: () => true },
];

export function deriveBookingStatus(facts: BookingMoneyFacts): BookingStatus {
  for (const rule of bookingStatusRules) {
    if (rule.holds(facts)) return rule.status;
  }
  throw new Error('booking status table has no catch-all rule');
}

/**
 * The status to show now. `completed` depends on the calendar, and no write happens when a
 * paid booking's end date passes, so reads turn a stored `paid` into `completed` on the fly. A
 * `draft` (a booking the modal created, no payment attempted yet) shows as such only in the
 * modal's callbacks (`showDraft`), as the spec says; the REST API shows what it is, `unpaid`,
 * also when the modal was abandoned and the draft stays.
 */
export function currentBookingStatus(stored: BookingStatus, dateEnd: string, today: string, options: { showDraft?: boolean } = {}): BookingStatus {
  if (stored === 'draft') return options.showDraft ? 'draft' : 'unpaid';
  return stored === 'paid' && dateEnd < today ? 'completed' : stored;
}

/** SQL form of currentBookingStatus (the REST API's), for filtering lists; `$today` is a placeholder. */
export function currentBookingStatusSql(alias: string, todayPlaceholder: string): string {
  return `(CASE WHEN ${alias}.status = 'paid' AND ${alias}.date_end < ${todayPlaceholder}::date THEN 'completed' WHEN ${alias}.status = 'draft' THEN 'unpaid' ELSE ${alias}.status END)`;
}

let formattedDay = Number.NaN;
let formattedDate = '';

/** Today's date in GMT, `YYYY-MM-DD` (formatted once per day: every booking answer asks). */
export function gmtDate(now: Date): string {
  const day = Math.floor(now.getTime() / 86_400_000);
  if (day !== formattedDay) {
    formattedDate = now.toISOString().slice(0, 10);
    formattedDay = day;
  }
  return formattedDate;
}
