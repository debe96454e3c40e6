import { limits } from '../../limits.js';
import { sendableAddress } from './mime.js';

/** Every email the service sends about a transaction. */
export const mailKinds = ['receipt', 'refund', 'failure', 'chargeback', 'chargeback-notice'] as const;
export type MailKind = (typeof mailKinds)[number];

export function isMailKind(value: unknown): value is MailKind {
  return typeof value === 'string' && (mailKinds as readonly string[]).includes(value);
}

/** Payer mails go to the cardholder in the payment's language; merchant mails to channel addresses. */
export const audienceOf: Record<MailKind, 'payer' | 'merchant'> = {
  receipt: 'payer',
  refund: 'payer',
  chargeback: 'payer',
  failure: 'merchant',
  'chargeback-notice': 'merchant',
};

/**
 * Types whose completion takes the payer's money and earns a receipt. Authorisations only hold
 * funds and vaults move none, so they send nothing: the receipt comes with the capture.
 */
export const receiptTypes: ReadonlySet<string> = new Set(['purchase', 'retained_purchase', 'capture']);

export interface ChannelMailSettings {
  primaryMail: string;
  bccTransactionalMails: boolean;
  mailFailures: boolean;
  chargebackMail: string;
}

export interface PlannedMail {
  kind: MailKind;
  to: string[];
  bcc: string[];
  /** Where a payer's reply goes: the channel's first primary_mail address. */
  replyTo: string | null;
}

/**
 * Which mails a transaction in its final state calls for (docs/emails.md "Which mail, to whom").
 * Pure: the caller loads the facts. Mails without any valid recipient are left out.
 */
export function planMails(input: { type: string; status: string; payerEmail: string | null; channel: ChannelMailSettings }): PlannedMail[] {
  const { type, status, channel } = input;
  const payer = parseAddressList(input.payerEmail ?? '');
  const primary = parseAddressList(channel.primaryMail);
  const replyTo = primary[0] ?? null;
  const transactionalBcc = channel.bccTransactionalMails ? primary : [];
  const plans: PlannedMail[] = [];
  if (status === 'complete' && receiptTypes.has(type)) plans.push({ kind: 'receipt', to: payer, bcc: transactionalBcc, replyTo });
  if (status === 'complete' && type === 'refund') plans.push({ kind: 'refund', to: payer, bcc: transactionalBcc, replyTo });
  if (status === 'complete' && type === 'chargeback') {
    plans.push({ kind: 'chargeback', to: payer, bcc: [], replyTo });
    plans.push({ kind: 'chargeback-notice', to: parseAddressList(channel.chargebackMail), bcc: [], replyTo: null });
  }
  if (status === 'failed' && channel.mailFailures) plans.push({ kind: 'failure', to: primary, bcc: [], replyTo: null });
  return plans.map(limitRecipients).filter((plan) => plan.to.length > 0);
}

// Deliberately simple: one @, no spaces, a dot in the domain. Channels validate on input; this
// only keeps a malformed stored value from breaking a whole mail.
const addressPattern = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

/** A comma-separated address list (primary_mail, chargeback_mail) as distinct valid addresses. */
export function parseAddressList(list: string): string[] {
  const seen = new Set<string>();
  const addresses: string[] = [];
  for (const candidate of list.split(',').map((part) => part.trim())) {
    // One that a header cannot carry (mime.ts) is skipped like a malformed one, so it never stops
    // the mail of the others on the list.
    if (!addressPattern.test(candidate) || sendableAddress(candidate) === undefined || seen.has(candidate.toLowerCase())) continue;
    seen.add(candidate.toLowerCase());
    addresses.push(candidate);
  }
  return addresses;
}

/** Drops Bcc copies of a To address and caps the recipients at limits.mailRecipientsMax. */
function limitRecipients(plan: PlannedMail): PlannedMail {
  const to = plan.to.slice(0, limits.mailRecipientsMax);
  const inTo = new Set(to.map((address) => address.toLowerCase()));
  const bcc = plan.bcc.filter((address) => !inTo.has(address.toLowerCase())).slice(0, Math.max(0, limits.mailRecipientsMax - to.length));
  return { ...plan, to, bcc };
}
