import type { LanguageCode } from '../../i18n/catalogue.js';
import type { MailData } from './content.js';
import type { MailKind } from './kinds.js';

/**
 * Realistic stand-in data for reviewing a template (`trustfare mail render` without
 * --transaction). Forex on purpose, so every row of the template shows.
 */
export function sampleMailData(kind: MailKind, language: LanguageCode): MailData {
  return {
    kind,
    transactionType: kind === 'refund' ? 'refund' : kind === 'chargeback' || kind === 'chargeback-notice' ? 'chargeback' : 'purchase',
    language,
    company: 'Sunny Tours',
    channelName: 'Sunny Tours EUR',
    payerName: 'Anna Traveller',
    payerEmail: 'anna.traveller@example.com',
    bookings: [{ trustId: '12-3456', reference: 'SUN-2026-0042' }],
    transactionTrustId: '12-98765',
    amount: { total: 135_000, currency: 'USD' },
    bookingAmount: { total: 125_000, currency: 'EUR' },
    exchangeRate: 1.08,
    card: { type: 'visa', lastFour: '1111' },
    date: new Date('2026-03-14T09:30:00Z'),
    reason: kind === 'failure' ? { code: '800.100.151', message: 'declined (invalid card)' } : null,
  };
}
