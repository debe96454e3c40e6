import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { deliverPendingMails } from '../../src/jobs/mail-delivery.js';
import type { Mailer, OutgoingMail } from '../../src/domain/emails/transport.js';
import { limits } from '../../src/limits.js';
import { createSite, insertChannel, paidWithMailsRequested } from './support/fixtures.js';

// A claimed mail is hidden from other runs for limits.mailClaimLeaseMs. A run whose sends are slow
// (a relay timing out) must not start a send that could outlast the lease: another run would
// claim the row and send the same mail again.
let t: TestContext;
let offsetMs = 0;
let sendMs = 0;
const sent: OutgoingMail[] = [];
const slowMailer: Mailer = {
  kind: 'smtp',
  async send(mail) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    offsetMs += sendMs; // the clock the job reads moves on by one slow send
    sent.push(mail);
    return { deliveryId: `250 ok ${mail.messageId}`, rejected: [] };
  },
  close: () => undefined,
};

beforeAll(async () => {
  t = await createTestContext({ mailer: slowMailer, now: () => new Date(Date.now() + offsetMs) });
});
afterAll(async () => t?.close());

async function requestReceipts(count: number): Promise<number[]> {
  const site = await createSite(t.db);
  const channelId = await insertChannel(t.db, site);
  const ids: number[] = [];
  for (let index = 0; index < count; index++) ids.push(await paidWithMailsRequested(t.db, site, { channelId, reference: `SLOW-${index}`, total: 1_000 }));
  return ids;
}

describe('a delivery run whose sends are slow', () => {
  it('starts no send the lease could not cover, releases the rest uncounted, and the next run sends them once', async () => {
    const ids = await requestReceipts(10);
    // Each send takes a fifth of the lease: the first round of concurrent sends ends past the window.
    sendMs = limits.mailClaimLeaseMs / 5;
    const first = await deliverPendingMails(t.context, { batchSizeMax: 10 });
    expect(first).toMatchObject({ claimed: 10, sent: limits.mailSendConcurrency, released: 10 - limits.mailSendConcurrency, backlog: true });
    const rows = await t.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM email_outbox WHERE transaction_id = ANY($1) ORDER BY id', [ids]);
    expect(rows.filter((row) => row.status === 'sent')).toHaveLength(limits.mailSendConcurrency);
    // Released rows are pending with no attempt counted: nothing was tried.
    expect(rows.filter((row) => row.status === 'pending')).toEqual(Array.from({ length: 10 - limits.mailSendConcurrency }, () => ({ status: 'pending', attempts: 0 })));

    sendMs = 0;
    const second = await deliverPendingMails(t.context, { batchSizeMax: 10 });
    expect(second).toMatchObject({ claimed: 10 - limits.mailSendConcurrency, sent: 10 - limits.mailSendConcurrency, released: 0 });
    expect(sent.map((mail) => mail.messageId).sort()).toEqual([...new Set(sent.map((mail) => mail.messageId))].sort());
    expect(sent).toHaveLength(10);
  });
});
