import { declineReason, localeOf, translate, type LanguageCode, type MessageKey, type MessageVars } from '../../i18n/catalogue.js';
import { formatMoney } from '../money.js';
import { receiptDateTimeOptions } from '../../i18n/date-time.js';
import type { MailData } from './content.js';
import type { MailKind } from './kinds.js';
import { dateTimeFormat, numberFormat } from '../../i18n/formatters.js';
import { operatorSettlementReasonOf, serviceFailureOf } from '../transactions/failures.js';

/** A mail before formatting: the same document becomes the HTML part and the plain-text part. */
export interface MailDocument {
  language: LanguageCode;
  subject: string;
  heading: string;
  greeting: string;
  paragraphs: string[];
  details: { label: string; value: string }[];
  footer: string;
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

type Template = (data: MailData, say: Say) => MailDocument;
type Say = (key: MessageKey, vars?: MessageVars) => string;

/** One template per kind. Each picks its words; the layout below formats them. */
const templates: Record<MailKind, Template> = {
  receipt: (data, say) => payerDocument(data, say, {
    subject: say('emails.receiptSubject', { company: data.company, bookingId: mainId(data) }),
    heading: say('emails.receiptHeading'),
    intro: say('emails.receiptIntro', { company: data.company }),
  }),
  refund: (data, say) => payerDocument(data, say, {
    subject: say('emails.refundSubject', { company: data.company, bookingId: mainId(data) }),
    heading: say('emails.refundHeading'),
    intro: say('emails.refundIntro', { company: data.company, amount: money(data, data.amount) }),
  }),
  chargeback: (data, say) => payerDocument(data, say, {
    subject: say('emails.chargebackSubject', { company: data.company, bookingId: mainId(data) }),
    heading: say('emails.chargebackHeading'),
    intro: say('emails.chargebackIntro', { company: data.company, amount: money(data, data.amount) }),
  }),
  failure: (data, say) => {
    const keys = failureKeys[Object.hasOwn(failureKeys, data.transactionType) ? data.transactionType as keyof typeof failureKeys : 'payment'];
    return merchantDocument(data, say, {
      subject: say(keys.subject, { channel: data.channelName, bookingId: mainId(data) }),
      heading: say(keys.heading),
      intro: say(keys.intro, { channel: data.channelName, amount: money(data, data.amount) }),
    });
  },
  'chargeback-notice': (data, say) => merchantDocument(data, say, {
    subject: say('emails.chargebackNoticeSubject', { channel: data.channelName, bookingId: mainId(data) }),
    heading: say('emails.chargebackNoticeHeading'),
    intro: say('emails.chargebackNoticeIntro', { amount: money(data, data.amount), transactionId: data.transactionTrustId }),
  }),
};

export function composeMail(data: MailData): MailDocument {
  const say: Say = (key, vars) => translate(data.language, key, vars);
  return templates[data.kind](data, say);
}

export function renderMail(data: MailData): RenderedMail {
  const document = composeMail(data);
  return { subject: document.subject, text: toText(document), html: toHtml(document) };
}

type Words = { subject: string; heading: string; intro: string };

/**
 * A failed refund owes the payer money back, and a failed void leaves the amount held on the card:
 * "payment failed, no money was taken" told the merchant the opposite of what happened. A failed
 * capture took nothing, but the authorisation still holds the amount on the card (to capture
 * again or void), which the payment's words left out. A failed vault only did not save the card:
 * "a payment attempt of 0.00" named a payment that never was. Every other type that fails takes
 * or holds money.
 */
const failureKeys = {
  payment: { subject: 'emails.failureSubject', heading: 'emails.failureHeading', intro: 'emails.failureIntro' },
  refund: { subject: 'emails.failureRefundSubject', heading: 'emails.failureRefundHeading', intro: 'emails.failureRefundIntro' },
  void: { subject: 'emails.failureVoidSubject', heading: 'emails.failureVoidHeading', intro: 'emails.failureVoidIntro' },
  capture: { subject: 'emails.failureCaptureSubject', heading: 'emails.failureCaptureHeading', intro: 'emails.failureCaptureIntro' },
  vault: { subject: 'emails.failureVaultSubject', heading: 'emails.failureVaultHeading', intro: 'emails.failureVaultIntro' },
} as const satisfies Record<string, Record<keyof Words, MessageKey>>;

function payerDocument(data: MailData, say: Say, words: Words): MailDocument {
  return {
    language: data.language,
    ...words,
    greeting: data.payerName ? say('emails.greetingName', { name: data.payerName }) : say('emails.greetingTeam'),
    paragraphs: [words.intro],
    details: [...bookingDetails(data, say), ...paymentDetails(data, say)],
    footer: say('emails.footerPayer', { company: data.company }),
  };
}

function merchantDocument(data: MailData, say: Say, words: Words): MailDocument {
  const payer = [data.payerName, data.payerEmail && `<${data.payerEmail}>`].filter(Boolean).join(' ');
  return {
    language: data.language,
    ...words,
    greeting: say('emails.greetingTeam'),
    paragraphs: [words.intro],
    details: [
      { label: say('emails.labelChannel'), value: data.channelName },
      ...bookingDetails(data, say),
      ...paymentDetails(data, say),
      ...(payer ? [{ label: say('emails.labelPayer'), value: payer }] : []),
      ...(data.reason ? [{ label: say('emails.labelReason'), value: reasonText(data) }] : []),
    ],
    footer: say('emails.footerMerchant', { channel: data.channelName }),
  };
}

function bookingDetails(data: MailData, say: Say): MailDocument['details'] {
  const references = data.bookings.map((booking) => booking.reference.trim()).filter(Boolean);
  return [
    ...(data.bookings.length > 0 ? [{ label: say('emails.labelBookingId'), value: data.bookings.map((booking) => booking.trustId).join(', ') }] : []),
    ...(references.length > 0 ? [{ label: say('emails.labelBookingReference'), value: references.join(', ') }] : []),
    { label: say('emails.labelTransactionId'), value: data.transactionTrustId },
  ];
}

function paymentDetails(data: MailData, say: Say): MailDocument['details'] {
  // A vault moves no money (its total is 0 by the spec): an amount of 0.00 reads as a payment.
  const rows = data.transactionType === 'vault' ? [] : [{ label: say('emails.labelAmount'), value: money(data, data.amount) }];
  if (data.bookingAmount) rows.push({ label: say('emails.labelBookingAmount'), value: money(data, data.bookingAmount) });
  if (data.bookingAmount && data.exchangeRate !== null) rows.push({ label: say('emails.labelExchangeRate'), value: rateText(data) });
  if (data.card) rows.push({ label: say('emails.labelCard'), value: say('emails.cardEnding', { cardType: cardName(data.card.type, say), lastFour: data.card.lastFour }) });
  rows.push({ label: say('emails.labelDate'), value: dateText(data) });
  return rows;
}

/**
 * `<code> <reason>` with the reason in the mail's language (declines namespace), never the
 * gateway's English; without a code, the stored message (the service's own words).
 */
function reasonText(data: MailData): string {
  const { code, message } = data.reason!;
  if (code) return `${code} ${declineReason(data.language, code)}`;
  // A failure the service stated itself, or an operator's settlement, in the mail's language; any
  // other message as it came.
  const failure = serviceFailureOf(message);
  if (failure) return translate(data.language, `declines.${failure}`);
  const operatorReason = operatorSettlementReasonOf(message);
  return operatorReason === undefined ? message : translate(data.language, 'declines.settledByOperator', { reason: operatorReason });
}

/** Subject and notices name the first booking, or the transaction when there is none (a vault). */
function mainId(data: MailData): string {
  return data.bookings[0]?.trustId ?? data.transactionTrustId;
}

function money(data: MailData, amount: { total: number; currency: string }): string {
  return formatMoney(amount.total, amount.currency, localeOf(data.language));
}

/** `1 USD = 18.25 MXN`: booking-currency unit in payment currency, numbers in the locale's style. */
function rateText(data: MailData): string {
  const number = numberFormat(localeOf(data.language), rateOptions);
  return `${number.format(1)} ${data.bookingAmount!.currency} = ${number.format(data.exchangeRate!)} ${data.amount.currency}`;
}

const rateOptions: Intl.NumberFormatOptions = { maximumFractionDigits: 8 };

function dateText(data: MailData): string {
  return dateTimeFormat(localeOf(data.language), receiptDateTimeOptions).format(data.date);
}

/** Scheme names are brands and stay as they are; an unknown scheme is "Card" in the language. */
const schemeNames: Record<string, string> = {
  visa: 'Visa', master: 'Mastercard', amex: 'American Express', jcb: 'JCB', diners: 'Diners Club', discover: 'Discover',
};

function cardName(type: string | null, say: Say): string {
  return (type && schemeNames[type]) || say('emails.cardOther');
}

// ---------------------------------------------------------------------------------------------
// Layout: one plain-text and one HTML rendering of a document. Every value is escaped here.

function toText(document: MailDocument): string {
  const width = Math.max(...document.details.map((row) => displayWidth(row.label)));
  return [
    document.heading,
    '',
    document.greeting,
    '',
    ...document.paragraphs.flatMap((paragraph) => [paragraph, '']),
    ...document.details.map((row) => `${row.label}:${' '.repeat(width - displayWidth(row.label) + 1)}${row.value}`),
    '',
    '--',
    document.footer,
    '',
  ].join('\n');
}

// East Asian wide and fullwidth characters (UAX #11: Hangul, CJK, kana, fullwidth forms), which a
// fixed-width font draws two columns wide; combining marks and format characters draw none.
const wideCharacter = /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{20000}-\u{3fffd}]/u;
const zeroWidthCharacter = /[\p{Mn}\p{Me}\p{Cf}]/u;

/**
 * Columns a label takes in a fixed-width font, which is how plain-text mail is read: counted in
 * UTF-16 units, a Japanese, Chinese or Korean label took half its width and its value started
 * left of the others'.
 */
function displayWidth(text: string): number {
  let width = 0;
  for (const character of text) width += wideCharacter.test(character) ? 2 : zeroWidthCharacter.test(character) ? 0 : 1;
  return width;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!);
}

function toHtml(document: MailDocument): string {
  const rows = document.details
    .map((row) => `<tr><th scope="row" style="text-align:start;padding:6px 16px 6px 0;color:#555;font-weight:normal;vertical-align:top">${escapeHtml(row.label)}</th><td style="padding:6px 0;font-weight:bold">${escapeHtml(row.value)}</td></tr>`)
    .join('\n');
  return `<!DOCTYPE html>
<html lang="${localeOf(document.language)}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(document.subject)}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:-apple-system,'Segoe UI',Roboto,'Noto Sans','Noto Sans CJK SC',Arial,sans-serif;color:#1d2430">
<div style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:32px">
<h1 style="margin:0 0 24px;font-size:22px">${escapeHtml(document.heading)}</h1>
<p>${escapeHtml(document.greeting)}</p>
${document.paragraphs.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join('\n')}
<table role="presentation" style="border-collapse:collapse;margin:24px 0;font-size:15px">
${rows}
</table>
<p style="margin-top:32px;font-size:12px;color:#777">${escapeHtml(document.footer)}</p>
</div>
</body>
</html>
`;
}
