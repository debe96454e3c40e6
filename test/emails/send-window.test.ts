import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { deliverPendingMails } from '../../src/jobs/mail-delivery.js';
import type { Mailer, OutgoingMail } from '../../src/domain/emails/transport.js';
import { limits } from '../../src/limits.js';
import { receiptsRequested } from './support/fixtures.js';

// A claimed mail is hidden from other runs for limits.mailClaimLeaseMs. A run whose sends are slow
// (a relay timing out) must not start a send that could outlast the lease: another run would
// claim the row and send the same mail again.
let t: TestContext;
let offsetMs = 0;
let sendMs = 0;
const sent: OutgoingMail[] = [];
/** The job's clock when each send started. */
const startedAtMs: number[] = [];
const slowMailer: Mailer = {
  kind: 'smtp',
  async send(mail) {
    startedAtMs.push(Date.now() + offsetMs);
    await new Promise((resolve) => setTimeout(resolve, 5));
    offsetMs += sendMs; // the clock the job reads moves on by one slow send
    sent.push(mail);
    return { deliveryId: `250 ok ${mail.messageId}`, refusals: [] };
  },
  close: () => undefined,
};

beforeAll(async () => {
  t = await createTestContext({ mailer: slowMailer, now: () => new Date(Date.now() + offsetMs) });
});
afterAll(async () => t?.close());

describe('a delivery run whose sends are slow', () => {
  it('starts no send the lease could not cover, releases the rest uncounted, and the next run sends them once', async () => {
    const ids = await receiptsRequested(t.db, 10, 'SLOW-');
    // Each send takes a fifth of the lease: the first round of concurrent sends ends past the window.
    sendMs = limits.mailClaimLeaseMs / 5;
    const claimedNotBeforeMs = Date.now() + offsetMs;
    const first = await deliverPendingMails(t.context, { batchSizeMax: 10 });
    // The sends that finish first start further ones while the window is open (how many depends
    // on the order they finish in); each started inside it, and the rest were released.
    const windowMs = limits.mailClaimLeaseMs - (2 * limits.smtpConnectionTimeoutMs + limits.smtpSocketTimeoutMs);
    // Slack for the milliseconds the run itself took on the real clock.
    for (const started of startedAtMs) expect(started).toBeLessThanOrEqual(claimedNotBeforeMs + windowMs + 5_000);
    expect(startedAtMs.length).toBeGreaterThanOrEqual(limits.mailSendConcurrency);
    expect(first).toMatchObject({ claimed: 10, sent: startedAtMs.length, released: 10 - startedAtMs.length, backlog: true });
    expect(first.released).toBeGreaterThan(0);
    const rows = await t.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM email_outbox WHERE transaction_id = ANY($1) ORDER BY id', [ids]);
    expect(rows.filter((row) => row.status === 'sent')).toHaveLength(first.sent);
    // Released rows are pending with no attempt counted: nothing was tried.
    expect(rows.filter((row) => row.status === 'pending')).toEqual(Array.from({ length: first.released }, () => ({ status: 'pending', attempts: 0 })));

    sendMs = 0;
    const second = await deliverPendingMails(t.context, { batchSizeMax: 10 });
    expect(second).toMatchObject({ claimed: first.released, sent: first.released, released: 0 });
    expect(sent.map((mail) => mail.messageId).sort()).toEqual([...new Set(sent.map((mail) => mail.messageId))].sort());
    expect(sent).toHaveLength(10);
  });
});
