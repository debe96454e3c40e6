import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MailData } from '../../src/domain/emails/content.js';
import { deliverPendingMails } from '../../src/jobs/mail-delivery.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, insertChannel, paidWithMailsRequested } from './support/fixtures.js';

// A template bug (here: the receipt of one payer throws until "fixed"), as a release might ship.
const broken = { payer: 'broken@example.com', fixed: false };
vi.mock('../../src/domain/emails/templates.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/domain/emails/templates.js')>();
  return {
    ...original,
    renderMail: (data: MailData) => {
      if (data.payerEmail === broken.payer && !broken.fixed) throw new Error('template bug');
      return original.renderMail(data);
    },
  };
});

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

describe('a mail whose template throws', () => {
  it('is set aside, not stored as failed, so once the template is fixed `mail retry` sends it', async () => {
    const site = await createSite(t.db);
    const channelId = await insertChannel(t.db, site, {});
    const failing = await paidWithMailsRequested(t.db, site, { channelId, payeeEmail: broken.payer });
    const fine = await paidWithMailsRequested(t.db, site, { channelId, payeeEmail: 'fine@example.com' });
    const run = await deliverPendingMails(t.context, { batchSizeMax: 10 });
    expect(run.errors).toEqual([{ requestId: expect.any(Number), transactionId: failing, message: expect.stringContaining('template bug') }]);
    const outbox = async (id: number) => t.db.query<{ status: string }>('SELECT status FROM email_outbox WHERE transaction_id = $1', [id]);
    expect(await outbox(fine)).toEqual([{ status: 'sent' }]);
    // No row stands in the way of the mail it should have been.
    expect(await outbox(failing)).toEqual([]);
    broken.fixed = true;
    await t.db.query('UPDATE mail_requests SET last_error = NULL WHERE transaction_id = $1', [failing]);
    expect(await deliverPendingMails(t.context, { batchSizeMax: 10 })).toMatchObject({ sent: 1, errors: [] });
    expect(await outbox(failing)).toEqual([{ status: 'sent' }]);
  });
});
