import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Config } from '../../config.js';
import { limits } from '../../limits.js';
import { composeMessage, envelopeRecipients, type MimeMail } from './mime.js';

/** One mail to send: what composeMessage writes (Message-ID stable per outbox row, so a repeated delivery is recognisable). */
export type OutgoingMail = MimeMail & {
  /** The envelope's recipients when not all of `to` and `bcc` (a retry for the deferred ones). */
  envelopeTo?: string[];
};

/** A recipient the relay refused at RCPT TO, with its reply: for now (4xx: deferred, worth another attempt for them alone) or for good (5xx). */
export interface RecipientRefusal {
  recipient: string;
  /** The SMTP reply code; null when the relay's answer had none. */
  code: number | null;
  /** The relay's reply as it answered (code and text). */
  reply: string;
}

/** A refusal for now (4xx, e.g. greylisting): the recipient is tried again. */
export function isDeferral(refusal: RecipientRefusal): boolean {
  return refusal.code !== null && refusal.code >= 400 && refusal.code < 500;
}

export interface DeliveryReceipt {
  /** The SMTP server's answer or the path of the .eml file. */
  deliveryId: string;
  /** Recipients the server refused while accepting others, for now or for good. */
  refusals: RecipientRefusal[];
}

/** Sends one mail or throws a MailDeliveryError; built once per process from configuration. */
export interface Mailer {
  readonly kind: 'file' | 'smtp';
  send(mail: OutgoingMail): Promise<DeliveryReceipt>;
  close(): void;
}

/** `permanent` failures (SMTP 5xx, no recipient accepted) are not retried. */
export class MailDeliveryError extends Error {
  /** When the relay refused every recipient at RCPT TO: each one's refusal, so each is dealt with as its code says. */
  readonly refusals?: RecipientRefusal[];
  /** The relay's reply code to the whole mail, when it answered with one. */
  readonly responseCode: number | null;

  constructor(message: string, readonly permanent: boolean, details: { refusals?: RecipientRefusal[]; responseCode?: number | null } = {}) {
    super(message);
    if (details.refusals) this.refusals = details.refusals;
    this.responseCode = details.responseCode ?? null;
  }
}

/** SMTP when SMTP_URL is set; otherwise .eml files under DATA_DIR/mail (development, review). */
export function createMailer(config: Pick<Config, 'smtpUrl' | 'dataDir'>): Mailer {
  return config.smtpUrl ? smtpMailer(config.smtpUrl) : fileMailer(path.join(config.dataDir, 'mail'));
}

/**
 * The message, or a permanent failure: a header that cannot be written (an address outside what
 * the API accepts) would fail the same way at every retry.
 */
function composed(mail: OutgoingMail, options: { bccHeader: boolean }): Buffer {
  try {
    return composeMessage(mail, options);
  } catch (error) {
    throw new MailDeliveryError((error as Error).message, true);
  }
}

export function smtpMailer(url: string): Mailer {
  const transport = nodemailer.createTransport({
    url,
    // Kept-open connections, one per mail in flight (the delivery job sends several at once).
    pool: true,
    maxConnections: limits.mailSendConcurrency,
    connectionTimeout: limits.smtpConnectionTimeoutMs,
    greetingTimeout: limits.smtpConnectionTimeoutMs,
    socketTimeout: limits.smtpSocketTimeoutMs,
  });
  return {
    kind: 'smtp',
    async send(mail) {
      // nodemailer sends the message as composed (raw) to the envelope's recipients: Bcc only there.
      const message = composed(mail, { bccHeader: false });
      try {
        const info = await transport.sendMail({ envelope: { from: mail.from.address, to: mail.envelopeTo ?? envelopeRecipients(mail) }, raw: message });
        return { deliveryId: String(info.response ?? info.messageId), refusals: recipientRefusals(info) };
      } catch (error) {
        throw classifySmtpError(error);
      }
    },
    close: () => transport.close(),
  };
}

type RecipientErrors = { rejectedErrors?: { recipient?: string; responseCode?: number; response?: string; message?: string }[] };

/** The recipients the relay refused at RCPT TO, from nodemailer's answer or error. */
function recipientRefusals(answer: RecipientErrors): RecipientRefusal[] {
  return (answer.rejectedErrors ?? []).flatMap((refusal) => (refusal.recipient === undefined ? [] : [{
    recipient: refusal.recipient,
    code: refusal.responseCode ?? null,
    reply: refusal.response ?? refusal.message ?? '',
  }]));
}

/**
 * 4xx and network trouble are worth retrying; 5xx is not. When the relay refused every recipient
 * at RCPT TO, each refusal goes with the error: the delivery job retries the deferred ones (4xx)
 * alone and records the others (5xx) as never reached (until this audit the mail was retried for
 * all of them, and the 5xx refusals were never recorded).
 *
 * A refused login (AUTH) or sender (MAIL FROM) is retried whatever its code: it answers the
 * service's own settings (SMTP_URL's credentials, MAIL_FROM) or the relay's policy for them, the
 * same for every mail, and an operator puts it right. As a permanent failure, every mail of the
 * while (a password rotated on the relay before SMTP_URL) failed for good, and no command sends a
 * failed mail again.
 */
function classifySmtpError(error: unknown): MailDeliveryError {
  const details = error as { message?: string; responseCode?: number; code?: string; command?: string; response?: string } & RecipientErrors;
  const responseCode = details.responseCode ?? null;
  const refusesService = details.code === 'EAUTH' || details.command === 'MAIL FROM';
  const permanent = !refusesService && responseCode !== null && responseCode >= 500 && responseCode < 600;
  const message = [details.code, details.response ?? details.message].filter(Boolean).join(': ') || String(error);
  const refusals = details.code === 'EENVELOPE' && details.command === 'RCPT TO' ? recipientRefusals(details) : [];
  return new MailDeliveryError(message, permanent, { responseCode, ...(refusals.length > 0 ? { refusals } : {}) });
}

/**
 * Writes each mail as `<message id>.eml` (RFC 5322, with the Bcc header, so reviewers see every
 * recipient).
 * Written to a temporary name and renamed, so a reader never sees half a file and a repeated
 * delivery replaces the same file.
 *
 * Decision: the write and the rename are synchronous. Through the thread pool (fs/promises) a
 * 4 KB mail cost about 270 µs of CPU in all, 100 of them on the event loop; synchronously about
 * 100 µs, all on the event loop (docs/emails.md "Throughput"). A file this small goes to the page
 * cache, so the loop waits for no disk, and on a 2-core machine the thread pool's hand-offs were
 * the larger cost to the requests served beside the mail job. A data directory on a slow network
 * file system would make each mail hold the loop for longer: use SMTP there.
 */
export function fileMailer(directory: string): Mailer {
  // Made once, not per mail; a failure is not kept, so the next mail tries again.
  let made = false;
  return {
    kind: 'file',
    async send(mail) {
      const message = buildRawMessage(mail);
      const file = path.join(directory, `${mail.messageId.replace(/[<>]/g, '').replace(/[^A-Za-z0-9._-]/g, '_')}.eml`);
      try {
        if (!made) {
          // Only this account reads the mails (payer names and emails, amounts, cards' last
          // four): DATA_DIR is 0711, passable by every local account, so a directory made under
          // the usual umask (0755, files 0644) let any of them list and read every mail. A
          // directory made so before is closed too.
          mkdirSync(directory, { recursive: true, mode: 0o700 });
          chmodSync(directory, 0o700);
        }
        made = true;
        writeFileSync(`${file}.tmp`, message, { mode: 0o600 });
        renameSync(`${file}.tmp`, file);
      } catch (error) {
        // The directory was removed meanwhile: make it again for the retry.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') made = false;
        throw new MailDeliveryError(`cannot write ${file}: ${(error as Error).message}`, false);
      }
      return { deliveryId: file, refusals: [] };
    },
    close: () => undefined,
  };
}

/** The complete RFC 5322 message (both parts, Bcc header kept), as a .eml file holds it. */
export function buildRawMessage(mail: OutgoingMail): Buffer {
  return composed(mail, { bccHeader: true });
}
