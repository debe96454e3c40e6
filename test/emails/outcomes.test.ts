import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { statementsDuring } from '../support/statements.js';
import { deliverPendingMails, retryDelayMs } from '../../src/jobs/mail-delivery.js';
import { MailDeliveryError, type Mailer, type OutgoingMail } from '../../src/domain/emails/transport.js';
import { limits } from '../../src/limits.js';
import { receiptsRequested } from './support/fixtures.js';

// A relay that answers at once: every send of a run finishes while the first outcome is being
// written, so the rest wait for one more write.
let t: TestContext;
const refusals = new Map<string, MailDeliveryError>();
const sent: OutgoingMail[] = [];
const instantMailer: Mailer = {
  kind: 'smtp',
  async send(mail) {
    const reference = /REF-\d+/.exec(mail.text)?.[0] ?? '';
    const refusal = refusals.get(reference);
    if (refusal) throw refusal;
    sent.push(mail);
    return { deliveryId: `250 queued as ${reference}`, refusals: [] };
  },
  close: () => undefined,
};

beforeAll(async () => {
  t = await createTestContext({ mailer: instantMailer });
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await deliverPendingMails(t.context, { batchSizeMax: limits.mailBatchSizeMax });
  refusals.clear();
  sent.length = 0;
});

const isOutcomeWrite = (statement: string) => /^UPDATE email_outbox o\s+SET status = r\.status/.test(statement);

describe('the outcomes of a delivery run', () => {
  it('are recorded together, not in one statement per mail', async () => {
    const ids = await receiptsRequested(t.db, 20, 'REF-');
    const { result: run, statements } = await statementsDuring(() => deliverPendingMails(t.context, { batchSizeMax: limits.mailBatchSizeMax }));
    expect(run).toMatchObject({ claimed: 20, sent: 20, retrying: 0, failed: 0 });
    expect(sent).toHaveLength(20);
    // The first outcome is written alone; the others finished while it was and go in the next write.
    expect(statements.filter(isOutcomeWrite)).toHaveLength(2);
    const rows = await t.db.query<{ status: string; delivery_id: string; sent_at: Date | null }>(
      'SELECT status, delivery_id, sent_at FROM email_outbox WHERE transaction_id = ANY($1) ORDER BY id', [ids]);
    expect(rows).toHaveLength(20);
    rows.forEach((row, index) => expect(row).toEqual({ status: 'sent', delivery_id: `250 queued as REF-${index}`, sent_at: expect.any(Date) }));
  });

  it('each reach their own row when one write holds sent, retried and refused mails', async () => {
    const ids = await receiptsRequested(t.db, 4, 'REF-');
    refusals.set('REF-1', new MailDeliveryError('451 try again later', false));
    refusals.set('REF-2', new MailDeliveryError('550 no such user', true));
    const before = Date.now();
    const run = await deliverPendingMails(t.context, { batchSizeMax: limits.mailBatchSizeMax });
    expect(run).toMatchObject({ claimed: 4, sent: 2, retrying: 1, failed: 1 });
    const rows = await t.db.query<{ status: string; attempts: number; last_error: string | null; delivery_id: string | null; sent_at: Date | null; next_attempt_at: Date }>(
      'SELECT status, attempts, last_error, delivery_id, sent_at, next_attempt_at FROM email_outbox WHERE transaction_id = ANY($1) ORDER BY id', [ids]);
    expect(rows.map(({ status, attempts, last_error, delivery_id }) => ({ status, attempts, last_error, delivery_id }))).toEqual([
      { status: 'sent', attempts: 1, last_error: null, delivery_id: '250 queued as REF-0' },
      { status: 'pending', attempts: 1, last_error: '451 try again later', delivery_id: null },
      { status: 'failed', attempts: 1, last_error: '550 no such user', delivery_id: null },
      { status: 'sent', attempts: 1, last_error: null, delivery_id: '250 queued as REF-3' },
    ]);
    expect(rows.map((row) => row.sent_at !== null)).toEqual([true, false, false, true]);
    // The retried mail is due after its backoff, not at once.
    expect(rows[1]!.next_attempt_at.getTime()).toBeGreaterThanOrEqual(before + retryDelayMs(1) - 1_000);
    // And it is not sent again by the next run.
    refusals.clear();
    expect(await deliverPendingMails(t.context, { batchSizeMax: limits.mailBatchSizeMax })).toMatchObject({ claimed: 0 });
  });

  it('stop the run when their write fails: no send starts after it, and the mails not sent stay claimed', async () => {
    const ids = await receiptsRequested(t.db, 12, 'REF-');
    // The database refuses every outcome (a status change), as a full disk or a lost server would.
    await t.db.query(`CREATE FUNCTION test_refuse_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.status <> OLD.status THEN RAISE EXCEPTION 'cannot record this outcome'; END IF; RETURN NEW; END $$`);
    await t.db.query('CREATE TRIGGER test_refuse_outcome BEFORE UPDATE ON email_outbox FOR EACH ROW EXECUTE FUNCTION test_refuse_outcome()');
    // Sends that take a while, so the failed write is known before the later ones would start.
    const quickSend = instantMailer.send;
    instantMailer.send = async (mail) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return quickSend(mail);
    };
    try {
      await expect(deliverPendingMails(t.context, { batchSizeMax: limits.mailBatchSizeMax })).rejects.toThrow('cannot record this outcome');
    } finally {
      instantMailer.send = quickSend;
      await t.db.query('DROP TRIGGER test_refuse_outcome ON email_outbox');
      await t.db.query('DROP FUNCTION test_refuse_outcome()');
    }
    expect(sent.length).toBeGreaterThanOrEqual(limits.mailSendConcurrency);
    expect(sent.length).toBeLessThan(12);
    // Nothing recorded: every row still pending under this run's claim, sent again once the lease ends.
    const rows = await t.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM email_outbox WHERE transaction_id = ANY($1)', [ids]);
    expect(rows).toEqual(Array.from({ length: 12 }, () => ({ status: 'pending', attempts: 1 })));
  });

  it('are not written over a newer claim of the same row', async () => {
    const [id] = await receiptsRequested(t.db, 1, 'REF-');
    // The send outlasts the lease: another run claims the row again (one more attempt) meanwhile.
    let claimAgain: (() => Promise<void>) | null = async () => {
      await t.db.query(`UPDATE email_outbox SET attempts = attempts + 1 WHERE transaction_id = $1`, [id]);
    };
    const slowSend = instantMailer.send;
    instantMailer.send = async (mail) => {
      await claimAgain?.();
      claimAgain = null;
      return slowSend(mail);
    };
    try {
      expect(await deliverPendingMails(t.context, { batchSizeMax: limits.mailBatchSizeMax })).toMatchObject({ claimed: 1, sent: 1 });
    } finally {
      instantMailer.send = slowSend;
    }
    // The newer claim's attempt decides the row: still pending, for it to record.
    expect(await t.db.query('SELECT status, attempts FROM email_outbox WHERE transaction_id = $1', [id])).toEqual([{ status: 'pending', attempts: 2 }]);
  });
});
