import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from '../command.js';
import { boundedInteger, instantOption, positiveInteger, required } from '../command.js';
import { isLanguageCode, languageCodes, localeOf } from '../../i18n/catalogue.js';
import { isMailKind, mailKinds } from '../../domain/emails/kinds.js';
import { mailDataFor, type MailData } from '../../domain/emails/content.js';
import { loadTransactionFacts } from '../../domain/emails/facts.js';
import { sampleMailData } from '../../domain/emails/sample.js';
import { renderMail, type RenderedMail } from '../../domain/emails/templates.js';
import { buildRawMessage } from '../../domain/emails/transport.js';
import { deliverPendingMails } from '../../jobs/mail-delivery.js';
import { failedMails, outboxMail, resendFailedMails, retrySetAsideRequests, setAsideRequests } from '../../domain/emails/outbox.js';
import { limits } from '../../limits.js';
import { gmtDateTime } from '../../domain/gmt.js';

/**
 * `trustfare mail render --kind K --language L [--transaction ID] --out FILE`: writes one email
 * for review: `.html` or `.txt` for that part alone, anything else a complete `.eml` message.
 * Without --transaction the template is filled with sample data. Nothing is sent or stored.
 */
const render: Command = {
  name: 'mail render',
  summary: 'render an email of any kind in any language to a file for review',
  options: { kind: { type: 'string' }, language: { type: 'string' }, transaction: { type: 'string' }, out: { type: 'string' } },
  required: ['kind', 'language', 'out'],
  async run(context, options) {
    const kind = required(options, 'kind');
    const language = required(options, 'language');
    const out = path.resolve(required(options, 'out'));
    if (!isMailKind(kind)) throw new Error(`--kind must be one of ${mailKinds.join(', ')}`);
    if (!isLanguageCode(language)) throw new Error(`--language must be one of ${languageCodes.join(', ')}`);
    let data: MailData;
    if (options.transaction === undefined) {
      data = sampleMailData(kind, language);
    } else {
      const id = positiveInteger('transaction', String(options.transaction), 'a transaction id');
      const facts = await loadTransactionFacts(context.db, id);
      if (!facts) throw new Error(`transaction ${id} does not exist`);
      data = mailDataFor(kind, facts, language);
    }
    const rendered = renderMail(data);
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(out, await fileContent(out, data, rendered, context.config.mailFrom));
    return { file: out, kind, language, subject: rendered.subject };
  },
};

async function fileContent(file: string, data: MailData, rendered: RenderedMail, mailFrom: string): Promise<string | Buffer> {
  const extension = path.extname(file).toLowerCase();
  if (extension === '.html' || extension === '.htm') return rendered.html;
  if (extension === '.txt') return rendered.text;
  return buildRawMessage({
    from: { name: data.company, address: mailFrom },
    to: [data.payerEmail || 'payer@example.com'],
    bcc: [],
    replyTo: null,
    ...rendered,
    messageId: `<render.${data.kind}.${data.language}@${mailFrom.split('@')[1] ?? 'localhost'}>`,
    locale: localeOf(data.language),
    date: new Date(),
  });
}

/** `trustfare mail deliver [--batch-size N]`: one delivery run now (the server's job does this continuously). */
const deliver: Command = {
  name: 'mail deliver',
  summary: 'send due emails from the outbox once and print the counts',
  options: { 'batch-size': { type: 'string' } },
  async run(context, options) {
    const batchSize = boundedInteger('batch-size', options['batch-size'] as string | undefined, { max: limits.mailBatchSizeMax, fallback: limits.mailBatchSizeDefault });
    return deliverPendingMails(context, { batchSizeMax: batchSize });
  },
};

/** `trustfare mail set-aside`: the mail requests whose rendering failed (docs/emails.md "Delivery"), oldest first. */
const setAside: Command = {
  name: 'mail set-aside',
  summary: `list mail requests set aside because their rendering failed (oldest ${limits.mailSetAsideListMax})`,
  async run(context) {
    // Times as every other command prints them (GMT `YYYY-MM-DD HH:MM:SS`), not as JSON writes a Date.
    const requests = await setAsideRequests(context.db, limits.mailSetAsideListMax);
    return { requests: requests.map((request) => ({ ...request, created_at: gmtDateTime(request.created_at) })) };
  },
};

/** `trustfare mail retry --request ID | --all`: puts set-aside requests back in the queue once their cause is fixed. */
const retry: Command = {
  name: 'mail retry',
  summary: 'put set-aside mail requests back in the delivery queue (--request ID or --all)',
  options: { request: { type: 'string' }, all: { type: 'boolean' } },
  required: [['request', 'all']],
  async run(context, options) {
    // Both together is a usage error, refused before the database opens (exclusiveOptions in ../command.ts).
    if (options.all === true) return { retried: await retrySetAsideRequests(context.db, 'all') };
    const id = positiveInteger('request', String(options.request), 'a mail request id');
    const retried = await retrySetAsideRequests(context.db, { id });
    if (retried.length === 0) throw new Error(`mail request ${id} is not set aside`);
    return { retried };
  },
};

/**
 * `trustfare mail failed [--since TIME]`: the mails the delivery gave up on, with who never got
 * each and why, so an operator knows what `mail resend` would send, and to whom, before running it.
 */
const failed: Command = {
  name: 'mail failed',
  summary: `list failed mails (the oldest ${limits.mailFailedListMax} written since --since YYYY-MM-DD|ISO date-time, else ever) with the recipients still owed each`,
  options: { since: { type: 'string' } },
  async run(context, options) {
    const listed = await failedMails(context.db, instantOption(options, 'since') ?? new Date(0), limits.mailFailedListMax);
    return { ...listed, mails: listed.mails.map((mail) => ({ ...mail, created_at: gmtDateTime(mail.created_at) })) };
  },
};

/**
 * `trustfare mail resend --mail ID | --since TIME`: puts mails the delivery gave up on (`failed`:
 * refused for good, or every attempt used) back in the outbox with every attempt again, once the
 * cause is fixed (the relay's settings, a recipient's mailbox). Nothing else ever sends them again.
 */
const resend: Command = {
  name: 'mail resend',
  summary: `send failed mails again: --mail ID, or --since YYYY-MM-DD|ISO date-time (the oldest ${limits.mailResendMax} written since)`,
  options: { mail: { type: 'string' }, since: { type: 'string' } },
  required: [['mail', 'since']],
  async run(context, options) {
    // Both together is a usage error, refused before the database opens (exclusiveOptions in ../command.ts).
    const since = instantOption(options, 'since');
    if (since !== undefined) return resendFailedMails(context.db, { since }, { count: limits.mailResendMax, now: context.now() });
    const id = positiveInteger('mail', String(options.mail), 'a mail id (email_outbox)');
    const resent = await resendFailedMails(context.db, { id }, { count: 1, now: context.now() });
    if (resent.resent.length > 0 || resent.requested.length > 0) return resent;
    const mail = await outboxMail(context.db, id);
    if (!mail) throw new Error(`mail ${id} does not exist`);
    if (mail.status !== 'failed') throw new Error(`mail ${id} is ${mail.status}, not failed`);
    // Failed and not resent: its bodies were pruned.
    const render = `\`trustfare mail render --transaction ${mail.transaction_id} --kind ${mail.kind} --language ${mail.language} --out FILE\``;
    throw new Error(`mail ${id} was written more than ${limits.mailBodyRetentionDays} days ago and its text is gone: ${render} renders it again`);
  },
};

export const commands: Command[] = [render, deliver, setAside, retry, failed, resend];
