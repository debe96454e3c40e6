import { minorUnitDigits } from '../money.js';
import { firstLanguage, type LanguageCode } from '../../i18n/catalogue.js';
import { audienceOf, type MailKind } from './kinds.js';
import type { BookingRow, PayerBookingRow, PayerRow, TransactionFacts, TransactionRow } from './facts.js';

export interface Money {
  total: number;
  currency: string;
}

/** What one mail says, independent of language and format; templates turn it into text. */
export interface MailData {
  kind: MailKind;
  /** The type of the transaction the mail is about (a failure notice says what failed: a refund or a payment). */
  transactionType: string;
  language: LanguageCode;
  /** Company name shown to the payer: the channel's receipt_label, else the site name. */
  company: string;
  channelName: string;
  payerName: string;
  payerEmail: string;
  bookings: { trustId: string; reference: string }[];
  /** trust_id of the transaction the mail is about (for chargebacks: the disputed payment). */
  transactionTrustId: string;
  amount: Money;
  /** Set when the payer paid in another currency than the booking's (forex). */
  bookingAmount: Money | null;
  /** Payment-currency units per booking-currency unit, as recorded or as implied by the amounts. */
  exchangeRate: number | null;
  card: { type: string | null; lastFour: string } | null;
  date: Date;
  /**
   * Why the transaction failed, for failure notices only: the gateway's decline code (the template
   * shows it with the catalogue's reason in the mail's language) and the stored message (shown
   * as is when there is no code: the service's own explanation, e.g. no answer from the processor).
   */
  reason: { code: string | null; message: string } | null;
}

/** Site-prefixed id, `<site_id>-<id>`, as the API shows trust_id. */
export function trustId(siteId: number, id: number): string {
  return `${siteId}-${id}`;
}

/**
 * Payer mails use the language of the payment (a refund or chargeback follows linked_id to the
 * original payment), then the booking's, then the channel's. Merchant notices use the channel's.
 */
export function mailLanguage(kind: MailKind, facts: TransactionFacts): LanguageCode {
  if (audienceOf[kind] === 'merchant') return firstLanguage(facts.channel.language);
  return firstLanguage(facts.original.language, facts.payerBooking?.language, facts.channel.language);
}

/**
 * The payer's address: the transaction's payee_email, the original payment's (for a capture, the
 * authorisation's), else the lead traveller of the payment's first booking (the one its receipt
 * went to, whichever booking a refund or chargeback of it names first).
 */
export function payerEmailOf(facts: TransactionFacts): string | null {
  return payersOf(facts).map((payer) => nonEmpty(payer.payee_email)).find(Boolean) ?? nonEmpty(facts.payerBooking?.email) ?? null;
}

/** Where the payee fields are looked for, nearest first. */
function payersOf(facts: TransactionFacts): PayerRow[] {
  return facts.capturedFrom ? [facts.transaction, facts.original, facts.capturedFrom] : [facts.transaction, facts.original];
}

export function mailDataFor(kind: MailKind, facts: TransactionFacts, language: LanguageCode = mailLanguage(kind, facts)): MailData {
  const { transaction, original, channel, bookings } = facts;
  // A chargeback mail describes the disputed payment; every other mail its own transaction.
  const subject = kind === 'chargeback' || kind === 'chargeback-notice' ? original : transaction;
  const cardSource = transaction.last_four ? transaction : original;
  return {
    kind,
    transactionType: transaction.type,
    language,
    company: nonEmpty(channel.receipt_label) ?? channel.site_name,
    channelName: channel.name,
    payerName: payerNameOf(payersOf(facts), facts.payerBooking ?? undefined),
    payerEmail: payerEmailOf(facts) ?? '',
    bookings: bookings.map((booking) => ({ trustId: trustId(booking.site_id, booking.id), reference: booking.reference })),
    transactionTrustId: trustId(subject.site_id, subject.id),
    amount: { total: transaction.total, currency: transaction.currency },
    ...forexOf(transaction, bookings),
    card: cardSource.last_four ? { type: cardSource.card_brand, lastFour: cardSource.last_four } : null,
    date: transaction.settled_at ?? transaction.created_at,
    reason: kind === 'failure' ? failureReason(transaction) : null,
  };
}

function payerNameOf(payers: PayerRow[], booking: PayerBookingRow | undefined): string {
  const name = (row: { first: string | null | undefined; last: string | null | undefined }) => [row.first, row.last].map((part) => part?.trim() ?? '').filter(Boolean).join(' ');
  return payers.map((payer) => name({ first: payer.payee_name, last: payer.payee_surname })).find(Boolean)
    || name({ first: booking?.firstname, last: booking?.surname });
}

/**
 * Bookings are paid in the channel currency; when the payer's currency differs, the mail shows
 * both amounts and the rate: the forex terms recorded on the transaction (docs/forex.md), else
 * the booking shares and the rate they imply.
 */
function forexOf(transaction: TransactionRow, bookings: BookingRow[]): Pick<MailData, 'bookingAmount' | 'exchangeRate'> {
  const booked = transaction.channel_currency && transaction.channel_total !== null
    ? { total: transaction.channel_total, currency: transaction.channel_currency }
    : bookingSide(bookings);
  if (!booked || booked.currency === transaction.currency) return { bookingAmount: null, exchangeRate: null };
  const recorded = transaction.forex_rate === null ? Number.NaN : Number(transaction.forex_rate);
  return { bookingAmount: booked, exchangeRate: Number.isFinite(recorded) && recorded > 0 ? recorded : impliedRate(transaction, booked) };
}

function bookingSide(bookings: BookingRow[]): Money | null {
  const currency = bookings[0]?.currency;
  if (!currency) return null;
  return { total: bookings.filter((booking) => booking.currency === currency).reduce((sum, booking) => sum + booking.share, 0), currency };
}

function impliedRate(transaction: TransactionRow, booked: Money): number | null {
  if (booked.total <= 0 || transaction.total <= 0) return null;
  const paid = transaction.total / 10 ** minorUnitDigits(transaction.currency);
  const bookedUnits = booked.total / 10 ** minorUnitDigits(booked.currency);
  return Number((paid / bookedUnits).toPrecision(6));
}

/** The gateway's code and message; the payments code writes the code into content too (`<code> <message>`). */
function failureReason(transaction: TransactionRow): MailData['reason'] {
  const code = nonEmpty(transaction.decline_code) ?? null;
  const content = transaction.content.trim();
  const message = code && content.startsWith(code) ? content.slice(code.length).trim() : content;
  return code || message ? { code, message } : null;
}

function nonEmpty(value: string | null | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
