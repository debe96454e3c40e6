import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { deliverPendingMails } from '../../src/jobs/mail-delivery.js';
import type { Mailer, OutgoingMail } from '../../src/domain/emails/transport.js';
import { limits } from '../../src/limits.js';
import { receiptsRequested } from './support/fixtures.js';

// A relay can drag one send out past the claim's lease, each reply inside the socket timeout. The
// run sending it keeps its claim, so another run finds nothing to claim and the mail goes once.
let t: TestContext;
let offsetMs = 0;
const sent: OutgoingMail[] = [];
let releaseFirst = () => undefined as void;
let firstStarted = () => undefined as void;
const firstSendStarted = new Promise<void>((resolve) => { firstStarted = resolve; });
/** Its first send hangs until the test releases it; any later one answers at once. */
const draggingMailer: Mailer = {
  kind: 'smtp',
  async send(mail) {
    sent.push(mail);
    if (sent.length === 1) {
      await new Promise<void>((resolve) => {
        releaseFirst = resolve;
        firstStarted();
      });
    }
    return { deliveryId: `250 ok ${mail.messageId}`, refusals: [] };
  },
  close: () => undefined,
};

beforeAll(async () => {
  t = await createTestContext({ mailer: draggingMailer, now: () => new Date(Date.now() + offsetMs) });
});
afterAll(async () => t?.close());

describe('a send that outlasts its claim', () => {
  it('keeps the claim while the send goes on: a second run claims nothing and the mail is sent once', async () => {
    const [transactionId] = await receiptsRequested(t.db, 1, 'DRAG-');
    const firstRun = deliverPendingMails(t.context, { batchSizeMax: 10, claimRenewalMs: 20 });
    await firstSendStarted;
    // The send is still under way when the lease would have run out.
    offsetMs += limits.mailClaimLeaseMs + 60_000;
    const renewed = async () => {
      const [row] = await t.db.query<{ next_attempt_at: Date }>('SELECT next_attempt_at FROM email_outbox WHERE transaction_id = $1', [transactionId]);
      return row!.next_attempt_at.getTime() > Date.now() + offsetMs;
    };
    for (let tries = 0; tries < 100 && !(await renewed()); tries++) await new Promise((resolve) => setTimeout(resolve, 20));

    const secondRun = await deliverPendingMails(t.context, { batchSizeMax: 10 });
    expect(secondRun).toMatchObject({ claimed: 0, sent: 0 });
    releaseFirst();
    expect(await firstRun).toMatchObject({ claimed: 1, sent: 1, released: 0 });
    expect(sent).toHaveLength(1);
    const [row] = await t.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM email_outbox WHERE transaction_id = $1', [transactionId]);
    expect(row).toEqual({ status: 'sent', attempts: 1 });
  });
});
