import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { SendMailOptions } from 'nodemailer/lib/mailer';
import type { Config } from '../../config.js';
import { limits } from '../../limits.js';

export interface OutgoingMail {
  from: { name: string; address: string };
  to: string[];
  bcc: string[];
  replyTo: string | null;
  subject: string;
  text: string;
  html: string;
  /** Stable per outbox row, so a repeated delivery is recognisable as the same message. */
  messageId: string;
  /** BCP 47 locale, sent as Content-Language. */
  locale: string;
}

export interface DeliveryReceipt {
  /** The SMTP server's answer or the path of the .eml file. */
  deliveryId: string;
  /** Recipients the server refused while accepting others. */
  rejected: string[];
}

/** Sends one mail or throws a MailDeliveryError; built once per process from configuration. */
export interface Mailer {
  readonly kind: 'file' | 'smtp';
  send(mail: OutgoingMail): Promise<DeliveryReceipt>;
  close(): void;
}

/** `permanent` failures (SMTP 5xx, no recipient accepted) are not retried. */
export class MailDeliveryError extends Error {
  constructor(message: string, readonly permanent: boolean) {
    super(message);
  }
}

/** SMTP when SMTP_URL is set; otherwise .eml files under DATA_DIR/mail (development, review). */
export function createMailer(config: Pick<Config, 'smtpUrl' | 'dataDir'>): Mailer {
  return config.smtpUrl ? smtpMailer(config.smtpUrl) : fileMailer(path.join(config.dataDir, 'mail'));
}

function messageOptions(mail: OutgoingMail): SendMailOptions {
  return {
    from: mail.from,
    to: mail.to,
    bcc: mail.bcc,
    ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: mail.messageId,
    headers: { 'Content-Language': mail.locale, 'Auto-Submitted': 'auto-generated' },
  };
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
      try {
        const info = await transport.sendMail(messageOptions(mail));
        return { deliveryId: String(info.response ?? info.messageId), rejected: info.rejected.map(String) };
      } catch (error) {
        throw classifySmtpError(error);
      }
    },
    close: () => transport.close(),
  };
}

/** 4xx and network trouble are worth retrying; 5xx and a refused envelope are not. */
function classifySmtpError(error: unknown): MailDeliveryError {
  const details = error as { message?: string; responseCode?: number; code?: string; response?: string };
  const responseCode = details.responseCode ?? 0;
  const permanent = (responseCode >= 500 && responseCode < 600) || (details.code === 'EENVELOPE' && responseCode >= 500);
  const message = [details.code, details.response ?? details.message].filter(Boolean).join(': ') || String(error);
  return new MailDeliveryError(message, permanent);
}

/**
 * Writes each mail as `<message id>.eml` (RFC 5322; the stream transport keeps the Bcc header, so
 * reviewers see every recipient).
 * Written to a temporary name and renamed, so a reader never sees half a file and a repeated
 * delivery replaces the same file.
 */
export function fileMailer(directory: string): Mailer {
  // Made once, not per mail (a system call on the thread pool each time); a failure is not kept,
  // so the next mail tries again.
  let made: Promise<unknown> | undefined;
  const madeDirectory = () => (made ??= mkdir(directory, { recursive: true }).catch((error: unknown) => {
    made = undefined;
    throw error;
  }));
  return {
    kind: 'file',
    async send(mail) {
      const message = await buildRawMessage(mail);
      const file = path.join(directory, `${mail.messageId.replace(/[<>]/g, '').replace(/[^A-Za-z0-9._-]/g, '_')}.eml`);
      try {
        await madeDirectory();
        await writeFile(`${file}.tmp`, message);
        await rename(`${file}.tmp`, file);
      } catch (error) {
        // The directory was removed meanwhile: make it again for the retry.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') made = undefined;
        throw new MailDeliveryError(`cannot write ${file}: ${(error as Error).message}`, false);
      }
      return { deliveryId: file, rejected: [] };
    },
    close: () => undefined,
  };
}

const messageBuilder = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

/** The complete RFC 5322 message (both parts, Bcc header kept), as a .eml file holds it. */
export async function buildRawMessage(mail: OutgoingMail): Promise<Buffer> {
  const info = await messageBuilder.sendMail(messageOptions(mail));
  return info.message as Buffer;
}
