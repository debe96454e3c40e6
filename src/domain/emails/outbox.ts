import type { Queryable } from '../../storage/db.js';
import { limits } from '../../limits.js';
import { mailDataFor, mailLanguage, payerEmailOf } from './content.js';
import { loadTransactionFacts, type TransactionFacts } from './facts.js';
import { planMails, type PlannedMail } from './kinds.js';
import { renderMail, type RenderedMail } from './templates.js';

/**
 * Called by the payments code inside the database transaction that moved money or recorded a
 * failure, after the transaction row has its final status. Writes the outbox rows for every
 * mail that event calls for, so a committed payment always gets its mails and a rolled-back
 * one never does. Calling it again for the same transaction adds nothing (one row per kind).
 * Returns the number of rows written.
 */
export async function enqueueMailsForTransaction(tx: Queryable, transactionId: number): Promise<number> {
  const facts = await loadTransactionFacts(tx, transactionId);
  if (!facts) throw new Error(`enqueueMailsForTransaction: transaction ${transactionId} does not exist`);
  const plans = planMails({
    type: facts.transaction.type,
    status: facts.transaction.status,
    payerEmail: payerEmailOf(facts),
    channel: {
      primaryMail: facts.channel.primary_mail,
      bccTransactionalMails: facts.channel.mail_bcc_transactional_mails,
      mailFailures: facts.channel.mail_failures,
      chargebackMail: facts.channel.chargeback_mail,
    },
  });
  let written = 0;
  for (const plan of plans) written += await insertMail(tx, facts, plan);
  return written;
}

const insertStatement = {
  name: 'mail_outbox_insert',
  text: `INSERT INTO email_outbox (site_id, transaction_id, kind, language, from_name, reply_to, to_addresses, bcc_addresses, subject, text_body, html_body,
                                   status, last_error)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
         ON CONFLICT (transaction_id, kind) DO NOTHING
         RETURNING id`,
};

async function insertMail(tx: Queryable, facts: TransactionFacts, plan: PlannedMail): Promise<number> {
  const language = mailLanguage(plan.kind, facts);
  const data = mailDataFor(plan.kind, facts, language);
  const rendered = renderSafely(() => renderMail(data));
  const rows = await tx.query(
    insertStatement,
    [
      facts.transaction.site_id, facts.transaction.id, plan.kind, language, data.company, plan.replyTo, plan.to, plan.bcc,
      rendered.mail.subject, rendered.mail.text, rendered.mail.html, rendered.error ? 'failed' : 'pending', rendered.error,
    ],
  );
  return rows.length;
}

/**
 * A template bug must not undo a payment the processor already made: the row is kept as
 * `failed` with the error, visible to operators (and to `trustfare mail render`), instead of
 * throwing inside the payment's database transaction.
 */
function renderSafely(render: () => RenderedMail): { mail: RenderedMail; error: string | null } {
  try {
    return { mail: render(), error: null };
  } catch (error) {
    const message = `rendering failed: ${(error as Error).message}`.slice(0, limits.mailErrorLengthMax);
    return { mail: { subject: '(not rendered)', text: '', html: '' }, error: message };
  }
}
