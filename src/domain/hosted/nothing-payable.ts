import type { NothingPayableReason } from '../bookings.js';

/**
 * The page message (src/i18n/pages) for each reason nothing can be paid on a booking now: one
 * table for the payment request page (server side) and the modal's frame (in the browser), which
 * hears the reason in its booking_error (`data.nothing_payable`). Each takes `{company}`.
 */
export const nothingPayableMessageKey = {
  paid: 'fullyPaid',
  disputed: 'notPayableOnline',
  in_progress: 'paymentInProgress',
  held: 'nothingDue',
  not_online: 'notPayableOnline',
} as const satisfies Record<NothingPayableReason, string>;
