import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { statementsDuring } from '../support/statements.js';
import { wholeTableReadsDuring } from '../support/scans.js';
import { statisticsSayEmpty } from '../support/statistics.js';
import { renderRequestedMails, requestMails } from '../../src/domain/emails/outbox.js';
import { deliverPendingMails, pruneMailBodies, retryDelayMs } from '../../src/jobs/mail-delivery.js';
import { smtpMailer, type OutgoingMail } from '../../src/domain/emails/transport.js';
import { formatMoney } from '../../src/domain/money.js';
import { limits } from '../../src/limits.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from './support/smtp.js';
import { createSite, insertBooking, insertChannel, insertTransaction, paidWithMailsRequested, type ChannelOptions } from './support/fixtures.js';
import type { SiteFixture } from '../support/fixtures.js';

let smtp: TestSmtpServer;
let t: TestContext;
let site: SiteFixture;
// The worker's clock runs ahead of the database's now() by `offsetMs`, which tests move to
// pass a retry delay without waiting.
let offsetMs = 1000;

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await createTestContext({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'payments@trustfare.test' }, now: () => new Date(Date.now() + offsetMs) });
  site = await createSite(t.db);
});

afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

beforeEach(async () => {
  // Each test looks only at what it sends itself.
  await deliverPendingMails(t.context, { batchSizeMax: limits.mailBatchSizeMax });
  smtp.received.length = 0;
});

/** A booking on a fresh channel and a completed transaction paying it, committed with its mails. */
async function paidBooking(options: { channel?: ChannelOptions; booking?: { language?: string; email?: string; reference?: string }; transaction?: Partial<Parameters<typeof insertTransaction>[2]> } = {}) {
  const channelId = await insertChannel(t.db, site, options.channel);
  const bookingId = await insertBooking(t.db, site, { channelId, ...options.booking });
  const transactionId = await t.db.transaction(async (tx) => {
    const id = await insertTransaction(tx, site, {
      channelId, type: 'purchase', status: 'complete', total: 123_456, payeeName: 'Anna', payeeSurname: 'Traveller', payeeEmail: 'payer@example.com',
      bookings: [{ id: bookingId, total: 123_456 }], ...options.transaction,
    });
    await requestMails(tx, id);
    return id;
  });
  return { channelId, bookingId, transactionId, bookingTrustId: `${site.siteId}-${bookingId}` };
}

async function follow(channelId: number, bookingId: number, options: Parameters<typeof insertTransaction>[2]): Promise<number> {
  return t.db.transaction(async (tx) => {
    const id = await insertTransaction(tx, site, { ...options, channelId });
    await requestMails(tx, id);
    return id;
  });
}

async function deliver(): Promise<ReceivedMail[]> {
  const before = smtp.received.length;
  await deliverPendingMails(t.context, { batchSizeMax: limits.mailBatchSizeMax });
  return smtp.received.slice(before);
}

async function outboxRows(transactionId: number) {
  return t.db.query<{ kind: string; status: string; attempts: number; last_error: string | null; language: string }>(
    'SELECT kind, status, attempts, last_error, language FROM email_outbox WHERE transaction_id = $1 ORDER BY id', [transactionId]);
}

describe('payment receipt', () => {
  it('goes to the payer in the transaction language, BCC to every primary_mail address', async () => {
    const { transactionId, bookingTrustId } = await paidBooking({
      channel: { receiptLabel: 'Voyages Soleil', primaryMail: 'ops@tours.example, finance@tours.example', bccTransactionalMails: true },
      booking: { reference: 'PAR-2026' },
      transaction: { language: 'frFR' },
    });
    const [mail, ...others] = await deliver();
    expect(others).toEqual([]);
    expect(mail!.envelopeTo.sort()).toEqual(['finance@tours.example', 'ops@tours.example', 'payer@example.com']);
    expect(mail!.headers.get('to')).toBe('payer@example.com');
    expect(mail!.headers.has('bcc')).toBe(false);
    expect(mail!.headers.get('from')).toBe('Voyages Soleil <payments@trustfare.test>');
    expect(mail!.headers.get('reply-to')).toBe('ops@tours.example');
    expect(mail!.subject).toBe(`Votre reçu de paiement de Voyages Soleil (${bookingTrustId})`);
    expect(mail!.text).toContain('Bonjour Anna Traveller,');
    expect(mail!.text).toContain('PAR-2026');
    expect(mail!.text).toContain(formatMoney(123_456, 'EUR', 'fr-FR'));
    expect(mail!.text).toContain('234,56');
    expect(mail!.text).toContain('Visa se terminant par 1111');
    expect(mail!.text).toContain('14 mars 2026');
    expect(mail!.html).toContain('<html lang="fr-FR">');
    expect(mail!.html).toContain('Reçu de paiement');
    expect(await outboxRows(transactionId)).toEqual([{ kind: 'receipt', status: 'sent', attempts: 1, last_error: null, language: 'frFR' }]);
  });

  it('without BCC when the flag is off, to the booking email when there is no payee_email, company = site name without receipt_label', async () => {
    const { bookingTrustId } = await paidBooking({
      channel: { primaryMail: 'ops@tours.example', bccTransactionalMails: false },
      booking: { email: 'lead@example.com' },
      transaction: { payeeEmail: null, language: 'deDE' },
    });
    const [mail] = await deliver();
    expect(mail!.envelopeTo).toEqual(['lead@example.com']);
    const siteName = (await t.db.one<{ name: string }>('SELECT name FROM sites WHERE id = $1', [site.siteId])).name;
    expect(mail!.subject).toBe(`Ihre Zahlungsbestätigung von ${siteName} (${bookingTrustId})`);
  });

  it('falls back to the booking language, then the channel language, when the transaction has none we know', async () => {
    await paidBooking({ booking: { language: 'ptBR' }, channel: { language: 'koKO' }, transaction: { language: 'xxXX' } });
    await paidBooking({ booking: { language: 'xxXX' }, channel: { language: 'koKO' }, transaction: { language: '' } });
    const mails = await deliver();
    expect(mails.map((mail) => mail.text.split('\n')[0])).toEqual(['Recibo de pagamento', '결제 영수증']);
  });

  it('shows both currencies and the rate for a forex payment', async () => {
    await paidBooking({ transaction: { currency: 'USD', total: 13_500, language: 'enGB' }, booking: {} }).then(async ({ transactionId }) => {
      // The booking share stays in the channel currency: 125.00 EUR paid as 135.00 USD.
      await t.db.query('UPDATE transaction_bookings SET total = 12500 WHERE transaction_id = $1', [transactionId]);
      await t.db.query("DELETE FROM email_outbox WHERE transaction_id = $1", [transactionId]);
      await t.db.transaction((tx) => requestMails(tx, transactionId));
    });
    const [mail] = await deliver();
    expect(mail!.text).toMatch(/Amount:\s+US\$135\.00/);
    expect(mail!.text).toMatch(/Amount in booking currency:\s+€125\.00/);
    expect(mail!.text).toMatch(/Exchange rate:\s+1 EUR = 1\.08 USD/);
  });

  it('is sent for captures but not for authorisations, vaults or voids', async () => {
    const { channelId, bookingId, transactionId } = await paidBooking({ transaction: { type: 'authorize', language: 'itIT', total: 1_500_000 } });
    await follow(channelId, bookingId, { channelId, type: 'vault', status: 'complete', total: 0 });
    await follow(channelId, bookingId, { channelId, type: 'void', status: 'complete', total: 123_456, linkedId: transactionId });
    expect(await deliver()).toEqual([]);
    await follow(channelId, bookingId, { channelId, type: 'capture', status: 'complete', total: 1_500_000, linkedId: transactionId, language: 'itIT', bookings: [{ id: bookingId, total: 1_500_000 }] });
    const [capture] = await deliver();
    expect(capture!.subject).toMatch(/^La tua ricevuta di pagamento/);
    expect(capture!.text).toContain('15.000,00');
  });

  it('is written once however often the payments code reports the transaction', async () => {
    const { transactionId } = await paidBooking();
    await t.db.transaction((tx) => requestMails(tx, transactionId));
    await t.db.transaction((tx) => requestMails(tx, transactionId));
    expect(await deliver()).toHaveLength(1);
    expect(await outboxRows(transactionId)).toHaveLength(1);
  });

  it('is rendered for the status it was requested at, even when the row moved on before the delivery job ran', async () => {
    // A chargeback can lock the purchase between its settlement and the job's next run.
    const { transactionId, bookingTrustId } = await paidBooking({ transaction: { language: 'enGB' } });
    await t.db.query(`UPDATE transactions SET status = 'locked' WHERE id = $1`, [transactionId]);
    const [mail, ...others] = await deliver();
    expect(others).toEqual([]);
    expect(mail!.subject).toContain(bookingTrustId);
    expect(await outboxRows(transactionId)).toEqual([{ kind: 'receipt', status: 'sent', attempts: 1, last_error: null, language: 'enGB' }]);
    expect(await t.db.query('SELECT id FROM mail_requests WHERE transaction_id = $1', [transactionId])).toEqual([]);
  });

  it('is never written for a payment whose database transaction rolls back', async () => {
    const channelId = await insertChannel(t.db, site, { primaryMail: 'ops@tours.example', bccTransactionalMails: true });
    const bookingId = await insertBooking(t.db, site, { channelId });
    let transactionId = 0;
    await expect(t.db.transaction(async (tx) => {
      transactionId = await insertTransaction(tx, site, { channelId, type: 'purchase', status: 'complete', total: 5000, bookings: [{ id: bookingId, total: 5000 }] });
      expect(await requestMails(tx, transactionId)).toBe(1);
      throw new Error('ledger did not balance');
    })).rejects.toThrow('ledger did not balance');
    // The request went with the rollback: nothing is left for the job to render.
    expect(await t.db.query('SELECT id FROM mail_requests WHERE transaction_id = $1', [transactionId])).toEqual([]);
    expect(await t.db.query('SELECT id FROM email_outbox WHERE transaction_id = $1', [transactionId])).toEqual([]);
    expect(await deliver()).toEqual([]);
  });

  it('contains the last four digits of the card and never the card number or BIN', async () => {
    await paidBooking({ transaction: { cardBrand: 'master', lastFour: '4444', binNumber: '555555' } });
    const [mail] = await deliver();
    expect(mail!.text).toContain('Mastercard ending in 4444');
    for (const secret of ['5555555555554444', '5555 5555 5555 4444', '555555']) expect(mail!.raw).not.toContain(secret);
  });

  it('escapes HTML in every value', async () => {
    await paidBooking({ channel: { receiptLabel: 'Tours <b>&</b> "Co"' }, booking: { reference: '<script>alert(1)</script>' } });
    const [mail] = await deliver();
    expect(mail!.html).not.toContain('<script>');
    expect(mail!.html).not.toContain('<b>&</b>');
    expect(mail!.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail!.html).toContain('Tours &lt;b&gt;&amp;&lt;/b&gt; &quot;Co&quot;');
    expect(mail!.text).toContain('<script>alert(1)</script>');
  });
});

describe('refunds and chargebacks', () => {
  it('send the refund in the language of the original payment, with the receipt BCC rule', async () => {
    const { channelId, bookingId, transactionId, bookingTrustId } = await paidBooking({
      channel: { receiptLabel: 'Sakura Travel', primaryMail: 'ops@sakura.example', bccTransactionalMails: true },
      transaction: { language: 'jaJA', currency: 'JPY', total: 50_000 },
      booking: {},
    });
    await deliver();
    // The refund request did not name a language: its row has the default enGB.
    const refundId = await follow(channelId, bookingId, { channelId, type: 'refund', status: 'complete', total: 20_000, currency: 'JPY', linkedId: transactionId, payeeEmail: null, bookings: [{ id: bookingId, total: 20_000 }] });
    const [mail] = await deliver();
    expect(mail!.envelopeTo.sort()).toEqual(['ops@sakura.example', 'payer@example.com']);
    expect(mail!.subject).toBe(`Sakura Travel からの返金（${bookingTrustId}）`);
    expect(mail!.text).toContain(formatMoney(20_000, 'JPY', 'ja-JP'));
    expect((await outboxRows(refundId))[0]).toMatchObject({ kind: 'refund', language: 'jaJA', status: 'sent' });
  });

  it('tell the payer in the payment language and notify chargeback_mail in the channel language', async () => {
    const { channelId, bookingId, transactionId, bookingTrustId } = await paidBooking({
      channel: { name: 'Moscow desk', language: 'deDE', chargebackMail: 'disputes@tours.example,risk@tours.example', primaryMail: 'ops@tours.example', bccTransactionalMails: true },
      transaction: { language: 'ruRU' },
    });
    await deliver();
    // Operators record a chargeback with linked_id and total only (no bookings, payee or language).
    await follow(channelId, bookingId, { channelId, type: 'chargeback', status: 'complete', total: 123_456, linkedId: transactionId, payeeEmail: null, cardBrand: null, lastFour: null });
    const mails = await deliver();
    const payer = mails.find((mail) => mail.envelopeTo.includes('payer@example.com'))!;
    const notice = mails.find((mail) => mail.envelopeTo.includes('disputes@tours.example'))!;
    expect(mails).toHaveLength(2);
    expect(payer.envelopeTo).toEqual(['payer@example.com']);
    expect(payer.subject).toMatch(/^Платёж оспорен/);
    expect(payer.text).toContain('Visa, оканчивающаяся на 1111');
    expect(notice.envelopeTo.sort()).toEqual(['disputes@tours.example', 'risk@tours.example']);
    expect(notice.subject).toBe(`Rückbuchung auf Moscow desk (${bookingTrustId})`);
    expect(notice.text).toContain(`${site.siteId}-${transactionId}`);
    expect(notice.text).toContain('Anna Traveller <payer@example.com>');
  });
});

describe('a batch of requests', () => {
  it('is rendered in five statements, each mail from its own transaction, payment and bookings', async () => {
    // Two payments on different channels and languages, a refund of the first, a chargeback of
    // the second (no bookings of its own), and the first payment requested twice: one batch.
    const ja = await paidBooking({ channel: { receiptLabel: 'Sakura Travel' }, transaction: { language: 'jaJA', currency: 'JPY', total: 50_000 }, booking: { reference: 'JA-1' } });
    const ru = await paidBooking({ channel: { name: 'Moscow desk', language: 'deDE', chargebackMail: 'disputes@tours.example' }, transaction: { language: 'ruRU' }, booking: { reference: 'RU-1' } });
    const refundId = await follow(ja.channelId, ja.bookingId, { channelId: ja.channelId, type: 'refund', status: 'complete', total: 20_000, currency: 'JPY', linkedId: ja.transactionId, payeeEmail: null, bookings: [{ id: ja.bookingId, total: 20_000 }] });
    const chargebackId = await follow(ru.channelId, ru.bookingId, { channelId: ru.channelId, type: 'chargeback', status: 'complete', total: 123_456, linkedId: ru.transactionId, payeeEmail: null });
    await t.db.transaction((tx) => requestMails(tx, ja.transactionId));

    const { result: run, statements } = await statementsDuring(() => renderRequestedMails(t.db, { batchSizeMax: limits.mailBatchSizeMax, claimedUntil: new Date() }));

    // BEGIN, the claim, the facts, the outbox rows, COMMIT: not two statements per request.
    expect(statements).toHaveLength(5);
    expect(run).toMatchObject({ requests: 5, written: 5, errors: [] });
    expect(run.claimed).toHaveLength(5);
    const mails = await t.db.query<{ transaction_id: number; kind: string; language: string; to_addresses: string[]; subject: string }>(
      'SELECT transaction_id, kind, language, to_addresses, subject FROM email_outbox WHERE transaction_id = ANY($1) ORDER BY id',
      [[ja.transactionId, ru.transactionId, refundId, chargebackId]],
    );
    expect(mails.map(({ transaction_id, kind, language, to_addresses }) => ({ transaction_id, kind, language, to_addresses }))).toEqual([
      { transaction_id: ja.transactionId, kind: 'receipt', language: 'jaJA', to_addresses: ['payer@example.com'] },
      { transaction_id: ru.transactionId, kind: 'receipt', language: 'ruRU', to_addresses: ['payer@example.com'] },
      // The refund follows its own payment (Japanese), the chargeback its own (Russian to the payer, the channel's German to disputes).
      { transaction_id: refundId, kind: 'refund', language: 'jaJA', to_addresses: ['payer@example.com'] },
      { transaction_id: chargebackId, kind: 'chargeback', language: 'ruRU', to_addresses: ['payer@example.com'] },
      { transaction_id: chargebackId, kind: 'chargeback-notice', language: 'deDE', to_addresses: ['disputes@tours.example'] },
    ]);
    expect(mails[0]!.subject).toContain(ja.bookingTrustId);
    expect(mails[2]!.subject).toBe(`Sakura Travel からの返金（${ja.bookingTrustId}）`);
    // The chargeback names no bookings: its mails show those of the payment it applies to.
    expect(mails[3]!.subject).toContain(ru.bookingTrustId);
    expect(mails[4]!.subject).toContain(ru.bookingTrustId);
  });
});

describe('failure notifications', () => {
  it('go to primary_mail in the channel language when mail_failures is on, and nothing goes to the payer', async () => {
    const { transactionId } = await paidBooking({
      channel: { name: 'Canal Sud', language: 'esES', primaryMail: 'ops@tours.example, alerts@tours.example', mailFailures: true, bccTransactionalMails: true },
      transaction: { status: 'failed', language: 'frFR', content: 'declined (stolen card)', declineCode: '800.100.159', total: 10_059 },
    });
    const [mail, ...others] = await deliver();
    expect(others).toEqual([]);
    expect(mail!.envelopeTo.sort()).toEqual(['alerts@tours.example', 'ops@tours.example']);
    expect(mail!.subject).toMatch(/^Pago fallido en Canal Sud/);
    // The gateway code with the reason in the channel's language, not the gateway's English.
    expect(mail!.text).toMatch(/Motivo:\s+800\.100\.159 rechazada \(tarjeta robada\)/);
    expect(mail!.text).not.toContain('stolen card');
    expect((await outboxRows(transactionId)).map((row) => row.kind)).toEqual(['failure']);
  });

  it('are not sent when mail_failures is off', async () => {
    await paidBooking({ channel: { primaryMail: 'ops@tours.example', mailFailures: false }, transaction: { status: 'failed' } });
    expect(await deliver()).toEqual([]);
  });
});

describe('delivery', () => {
  it('retries after an SMTP 451 with backoff and ends sent', async () => {
    const { transactionId } = await paidBooking();
    smtp.refuseNext(1, 451);
    expect(await deliver()).toEqual([]);
    const [afterRefusal] = await outboxRows(transactionId);
    expect(afterRefusal).toMatchObject({ status: 'pending', attempts: 1 });
    expect(afterRefusal!.last_error).toContain('451');
    // Not due again until the backoff has passed.
    expect(await deliver()).toEqual([]);
    offsetMs += retryDelayMs(1) + 1000;
    expect(await deliver()).toHaveLength(1);
    expect(await outboxRows(transactionId)).toMatchObject([{ status: 'sent', attempts: 2, last_error: null }]);
  });

  it('gives up at once on a permanent 5xx refusal and keeps the error', async () => {
    const { transactionId } = await paidBooking();
    smtp.refuseNext(1, 550);
    expect(await deliver()).toEqual([]);
    const [row] = await outboxRows(transactionId);
    expect(row).toMatchObject({ status: 'failed', attempts: 1 });
    expect(row!.last_error).toContain('550');
  });

  it('marks a mail failed after limits.mailAttemptsMax temporary refusals', async () => {
    const { transactionId } = await paidBooking();
    smtp.refuseNext(limits.mailAttemptsMax, 451);
    for (let attempt = 1; attempt <= limits.mailAttemptsMax; attempt++) {
      await deliver();
      offsetMs += retryDelayMs(attempt) + 1000;
    }
    expect(await outboxRows(transactionId)).toMatchObject([{ status: 'failed', attempts: limits.mailAttemptsMax }]);
    expect(await deliver()).toEqual([]);
  });

  it('sends each mail once when several workers run at the same time', async () => {
    const ids: number[] = [];
    for (let index = 0; index < 6; index++) ids.push((await paidBooking({ booking: { reference: `PAR-${index}` } })).transactionId);
    const runs = await Promise.all([1, 2, 3].map(() => deliverPendingMails(t.context, { batchSizeMax: 2 })));
    const more = await deliverPendingMails(t.context, { batchSizeMax: 10 });
    expect(runs.reduce((sum, run) => sum + run.sent, 0) + more.sent).toBe(6);
    const references = smtp.received.map((mail) => /PAR-\d/.exec(mail.text)?.[0]).sort();
    expect(references).toEqual(['PAR-0', 'PAR-1', 'PAR-2', 'PAR-3', 'PAR-4', 'PAR-5']);
    const statuses = await t.db.query<{ status: string }>('SELECT status FROM email_outbox WHERE transaction_id = ANY($1)', [ids]);
    expect(statuses.every((row) => row.status === 'sent')).toBe(true);
  });

  it('sets aside a request whose rendering fails, with its error, and renders and sends the others', async () => {
    const broken = await paidBooking({ booking: { reference: 'BROKEN-1' } });
    await paidBooking({ booking: { reference: 'FINE-1' } });
    const references = (mails: ReceivedMail[]) => mails.map((mail) => /(BROKEN|FINE)-1/.exec(mail.text)?.[0]);
    // A statement that fails for this one transaction, as a bug or a row the templates cannot
    // handle would: in the batch's database transaction it rolls the whole batch back.
    await t.db.query(`CREATE FUNCTION test_refuse_mail() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.transaction_id = ${broken.transactionId} THEN RAISE EXCEPTION 'cannot store this mail'; END IF; RETURN NEW; END $$`);
    await t.db.query('CREATE TRIGGER test_refuse_mail BEFORE INSERT ON email_outbox FOR EACH ROW EXECUTE FUNCTION test_refuse_mail()');
    try {
      const before = smtp.received.length;
      const run = await deliverPendingMails(t.context, { batchSizeMax: 10 });
      expect(run).toMatchObject({ requests: 2, rendered: 1, sent: 1, backlog: false });
      expect(run.errors).toEqual([{ requestId: expect.any(Number), transactionId: broken.transactionId, message: expect.stringContaining('cannot store this mail') }]);
      expect(references(smtp.received.slice(before))).toEqual(['FINE-1']);
      const kept = await t.db.query<{ last_error: string }>('SELECT last_error FROM mail_requests WHERE transaction_id = $1', [broken.transactionId]);
      expect(kept).toEqual([{ last_error: expect.stringContaining('cannot store this mail') }]);
      // Later runs leave it alone.
      expect(await deliverPendingMails(t.context, { batchSizeMax: 10 })).toMatchObject({ requests: 0, errors: [] });
    } finally {
      await t.db.query('DROP TRIGGER test_refuse_mail ON email_outbox');
      await t.db.query('DROP FUNCTION test_refuse_mail()');
    }
    // An operator who fixed the cause clears the error: the next run renders and sends it.
    await t.db.query('UPDATE mail_requests SET last_error = NULL WHERE transaction_id = $1', [broken.transactionId]);
    expect(references(await deliver())).toEqual(['BROKEN-1']);
    expect(await t.db.query('SELECT 1 FROM mail_requests WHERE transaction_id = $1', [broken.transactionId])).toHaveLength(0);
  });

  it('leaves a request whose rendering meets a passing database error for the next run, and sets it aside only after limits.mailRenderTransientFailuresMax of them', async () => {
    await paidBooking({ booking: { reference: 'FINE-2' } });
    const unlucky = await paidBooking({ booking: { reference: 'UNLUCKY-1' } });
    const references = (mails: ReceivedMail[]) => mails.map((mail) => /(UNLUCKY|FINE)-\d/.exec(mail.text)?.[0]);
    const request = () => t.db.query<{ last_error: string | null }>('SELECT last_error FROM mail_requests WHERE transaction_id = $1', [unlucky.transactionId]);
    // A statement timeout (SQLSTATE 57014) while this one transaction's mail is written, as a
    // loaded database gives: nothing is wrong with the request.
    await t.db.query(`CREATE FUNCTION test_time_out_mail() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.transaction_id = ${unlucky.transactionId} THEN RAISE EXCEPTION 'canceling statement due to statement timeout' USING ERRCODE = '57014'; END IF; RETURN NEW; END $$`);
    await t.db.query('CREATE TRIGGER test_time_out_mail BEFORE INSERT ON email_outbox FOR EACH ROW EXECUTE FUNCTION test_time_out_mail()');
    try {
      const run = await deliverPendingMails(t.context, { batchSizeMax: 10 });
      expect(run).toMatchObject({ rendered: 1, sent: 1, errors: [], deferred: 1 });
      expect(references(smtp.received)).toEqual(['FINE-2']);
      // Still queued, not set aside for an operator's `mail retry`.
      expect(await request()).toEqual([{ last_error: null }]);
      // A cause that does not pass is not retried without end: after the bound, set aside with its error.
      for (let run = 2; run < limits.mailRenderTransientFailuresMax; run++) expect((await deliverPendingMails(t.context, { batchSizeMax: 10 })).errors).toEqual([]);
      expect(await request()).toEqual([{ last_error: null }]);
      const last = await deliverPendingMails(t.context, { batchSizeMax: 10 });
      expect(last.errors).toEqual([{ requestId: expect.any(Number), transactionId: unlucky.transactionId, message: expect.stringContaining('statement timeout') }]);
      expect(await request()).toEqual([{ last_error: expect.stringContaining('statement timeout') }]);
      // Put back by an operator, it gets the same number of tries again.
      await t.db.query(`UPDATE mail_requests SET last_error = NULL WHERE transaction_id = $1`, [unlucky.transactionId]);
      expect((await deliverPendingMails(t.context, { batchSizeMax: 10 })).errors).toEqual([]);
      expect(await request()).toEqual([{ last_error: null }]);
    } finally {
      await t.db.query('DROP TRIGGER test_time_out_mail ON email_outbox');
      await t.db.query('DROP FUNCTION test_time_out_mail()');
    }
    // The database is well again: the next run sends it, with no operator.
    expect(references(await deliver())).toEqual(['UNLUCKY-1']);
    expect(await request()).toEqual([]);
  });

  it('claims its batch without reading the requests set aside, however many there are', async () => {
    // Set-aside requests stay in the table until an operator puts them back. A claim that read
    // them all (migration 021) would slow every run as they pile up.
    const aside = await paidBooking({ booking: { reference: 'ASIDE-1' } });
    await t.db.query(
      `INSERT INTO mail_requests (site_id, transaction_id, status, last_error) SELECT $1, $2, 'complete', 'left for an operator' FROM generate_series(1, 20000)`,
      [site.siteId, aside.transactionId],
    );
    await t.db.query('ANALYZE mail_requests');
    try {
      const { result: mails, reads } = await wholeTableReadsDuring(['mail_requests_claim'], deliver);
      expect(mails.map((mail) => /ASIDE-1/.exec(mail.text)?.[0])).toEqual(['ASIDE-1']);
      expect(reads.get('mail_requests_claim')).toEqual([[]]);
    } finally {
      await t.db.query(`DELETE FROM mail_requests WHERE last_error = 'left for an operator'`);
    }
  });

  it('reports a backlog while a run takes a full batch, and the runs that follow take the rest', async () => {
    for (let index = 0; index < 7; index++) await paidBooking({ booking: { reference: `BACKLOG-${index}` } });
    const runs = [];
    for (let run = 0; run < 10 && runs.at(-1)?.backlog !== false; run++) runs.push(await deliverPendingMails(t.context, { batchSizeMax: 3 }));
    expect(runs.map((run) => [run.requests, run.sent, run.backlog])).toEqual([[3, 3, true], [3, 3, true], [1, 1, false]]);
    expect(smtp.received.map((mail) => /BACKLOG-\d/.exec(mail.text)?.[0]).sort()).toEqual(['BACKLOG-0', 'BACKLOG-1', 'BACKLOG-2', 'BACKLOG-3', 'BACKLOG-4', 'BACKLOG-5', 'BACKLOG-6']);
  });

  it('takes one batch of requests and one of due mail, even when the statistics say the queues are empty', async () => {
    // The planner then guesses a nested loop that would run a batch's sub-select once per row,
    // taking every queued row (src/storage/batches.ts); a batch is the bound whatever it guesses.
    for (let index = 0; index < 5; index++) await paidBooking({ booking: { reference: `RETRIED-${index}` } });
    smtp.refuseNext(5, 451);
    expect(await deliver()).toEqual([]);
    offsetMs += retryDelayMs(1) + 1000;
    for (let index = 0; index < 5; index++) await paidBooking({ booking: { reference: `QUEUED-${index}` } });
    await statisticsSayEmpty(t.db, 'mail_requests');
    await statisticsSayEmpty(t.db, 'email_outbox');
    const run = await deliverPendingMails(t.context, { batchSizeMax: 2 });
    expect(run).toMatchObject({ requests: 2, claimed: 4, sent: 4, backlog: true });
    expect(smtp.received.map((mail) => /(RETRIED|QUEUED)-\d/.exec(mail.text)?.[0]).sort()).toEqual(['QUEUED-0', 'QUEUED-1', 'RETRIED-0', 'RETRIED-1']);
    for (let run = 0; run < 10 && (await deliverPendingMails(t.context, { batchSizeMax: 2 })).backlog; run++);
    expect(smtp.received).toHaveLength(10);
  });

  it('takes what is due as well as a full batch of fresh requests: fresh mail cannot hold a retry back', async () => {
    const retried = await paidBooking({ booking: { reference: 'RETRY-1' } });
    smtp.refuseNext(1, 451);
    expect(await deliver()).toEqual([]);
    offsetMs += retryDelayMs(1) + 1000;
    for (let index = 0; index < 3; index++) await paidBooking({ booking: { reference: `FRESH-${index}` } });
    const run = await deliverPendingMails(t.context, { batchSizeMax: 3 });
    expect(run).toMatchObject({ requests: 3, claimed: 4, sent: 4, backlog: true });
    expect(smtp.received.map((mail) => /(RETRY|FRESH)-\d/.exec(mail.text)?.[0]).sort()).toEqual(['FRESH-0', 'FRESH-1', 'FRESH-2', 'RETRY-1']);
    expect(await outboxRows(retried.transactionId)).toMatchObject([{ status: 'sent', attempts: 2 }]);
  });

  it('a mail rendered by a run that died is sent once the run\'s claim has run out, not before', async () => {
    const { transactionId } = await paidBooking({ booking: { reference: 'CRASH-1' } });
    // The run rendered it, claimed for the lease as every run's fresh mail is, and never sent it.
    const rendered = await renderRequestedMails(t.db, { batchSizeMax: 10, claimedUntil: new Date(t.context.now().getTime() + limits.mailClaimLeaseMs) });
    expect(rendered.claimed.map((mail) => [mail.transaction_id, mail.attempts])).toEqual([[transactionId, 1]]);
    expect(await deliver()).toEqual([]);
    offsetMs += limits.mailClaimLeaseMs + 1000;
    expect((await deliver()).map((mail) => /CRASH-1/.exec(mail.text)?.[0])).toEqual(['CRASH-1']);
    expect(await outboxRows(transactionId)).toMatchObject([{ status: 'sent', attempts: 2 }]);
  });

  it('sends up to limits.mailSendConcurrency mails at once to a slow relay, each once', async () => {
    const count = limits.mailSendConcurrency * 2;
    for (let index = 0; index < count; index++) await paidBooking({ booking: { reference: `SLOW-${index}` } });
    smtp.answerDelayMs = 150;
    smtp.mostAtOnce = 0;
    try {
      const run = await deliverPendingMails(t.context, { batchSizeMax: limits.mailBatchSizeMax });
      expect(run).toMatchObject({ requests: count, claimed: count, sent: count, backlog: false });
    } finally {
      smtp.answerDelayMs = 0;
    }
    expect(smtp.mostAtOnce).toBe(limits.mailSendConcurrency);
    expect(smtp.received.map((mail) => /SLOW-\d+/.exec(mail.text)?.[0]).sort()).toEqual(Array.from({ length: count }, (_, index) => `SLOW-${index}`).sort());
  });
});

describe('retention', () => {
  it('empties the bodies of sent and failed mails after limits.mailBodyRetentionDays, keeps the rows, and never touches pending mail', async () => {
    const sent = await paidBooking({ booking: { reference: 'KEEP-SENT' } });
    const failed = await paidBooking({ booking: { reference: 'KEEP-FAILED' } });
    smtp.refuseNext(1, 550);
    await deliver();
    smtp.refuseNext(0, 550);
    // Which of the two was refused depends on the send order: find each row's status.
    const statuses = await t.db.query<{ transaction_id: number; status: string }>('SELECT transaction_id, status FROM email_outbox WHERE transaction_id = ANY($1)', [[sent.transactionId, failed.transactionId]]);
    expect(statuses.map((row) => row.status).sort()).toEqual(['failed', 'sent']);
    const pending = await paidBooking({ booking: { reference: 'KEEP-PENDING' } });
    // Rendered (by the delivery job's first step) but not yet sent: a refusal keeps it pending.
    smtp.refuseNext(1, 451);
    await deliver();
    const bodies = (transactionId: number) => t.db.one<{ status: string; text_body: string; html_body: string; subject: string; bodies_pruned_at: Date | null }>(
      'SELECT status, text_body, html_body, subject, bodies_pruned_at FROM email_outbox WHERE transaction_id = $1', [transactionId]);
    expect((await pruneMailBodies(t.context)).pruned).toBe(0);
    offsetMs += limits.mailBodyRetentionDays * 86_400_000 + 60_000;
    const runs = [];
    // Every mail this file sent is old enough now: batches of 5 until one comes back short, each
    // a batch of 5 even when the statistics say the table is empty (src/storage/batches.ts).
    await statisticsSayEmpty(t.db, 'email_outbox');
    for (let run = 0; run < 200 && runs.at(-1)?.backlog !== false; run++) runs.push(await pruneMailBodies(t.context, { batchSize: 5 }));
    expect(runs.at(-1)?.backlog).toBe(false);
    expect(runs.slice(0, -1).every((run) => run.pruned === 5 && run.backlog)).toBe(true);
    for (const { transactionId } of [sent, failed]) {
      const row = await bodies(transactionId);
      expect(row).toMatchObject({ text_body: '', html_body: '', bodies_pruned_at: expect.any(Date) });
      expect(row.subject).not.toBe('');
    }
    const waiting = await bodies(pending.transactionId);
    expect(waiting).toMatchObject({ status: 'pending', bodies_pruned_at: null });
    expect(waiting.text_body).toContain('KEEP-PENDING');
  });
});

describe('a relay that refuses the service, not the mail', () => {
  it('keeps the mail pending while the relay refuses the login or the sender, and sends it once the relay takes them', async () => {
    const relay = await startSmtpServer({ password: 'rotated' });
    const url = new URL(relay.url);
    url.username = 'trustfare';
    url.password = 'before-rotation';
    const local = await createTestContext({ mailer: smtpMailer(url.href), now: () => new Date(Date.now() + offsetMs) });
    try {
      const site = await createSite(local.db);
      const channelId = await insertChannel(local.db, site, {});
      const transactionId = await paidWithMailsRequested(local.db, site, { channelId, total: 4200, payeeEmail: 'payer@example.com' });
      const row = () => local.db.one<{ status: string; last_error: string | null }>('SELECT status, last_error FROM email_outbox WHERE transaction_id = $1', [transactionId]);
      expect(await deliverPendingMails(local.context)).toMatchObject({ sent: 0, failed: 0, retrying: 1 });
      expect(await row()).toMatchObject({ status: 'pending', last_error: expect.stringContaining('535') });
      // The operator sets the relay's new password (here: the relay takes the old one again).
      relay.password = 'before-rotation';
      // The relay refuses the sender address for a while (its policy, the same for every mail).
      relay.refuseSenderNext(1, 553);
      offsetMs += retryDelayMs(1) + 1000;
      expect(await deliverPendingMails(local.context)).toMatchObject({ sent: 0, failed: 0, retrying: 1 });
      expect(await row()).toMatchObject({ status: 'pending', last_error: expect.stringContaining('553') });
      offsetMs += retryDelayMs(2) + 1000;
      expect(await deliverPendingMails(local.context)).toMatchObject({ sent: 1 });
      expect(relay.received.map((mail) => mail.envelopeTo)).toEqual([['payer@example.com']]);
    } finally {
      local.context.mailer.close();
      await local.close();
      await relay.close();
    }
  });
});

describe('SMTP connections', () => {
  const mail = (subject: string): OutgoingMail => ({
    from: { name: 'Shop', address: 'payments@trustfare.test' }, to: ['payer@example.com'], bcc: [], replyTo: null,
    subject, text: subject, html: `<p>${subject}</p>`, messageId: `<${subject.replaceAll(' ', '-')}@trustfare.test>`, locale: 'en-GB', date: new Date(),
  });

  it('are kept open between mails, and a mail after the relay closed an idle one still goes at the first attempt', async () => {
    const relay = await startSmtpServer({ idleTimeoutMs: 200 });
    const mailer = smtpMailer(relay.url);
    try {
      await mailer.send(mail('first'));
      await mailer.send(mail('second'));
      expect(relay.connections).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 600));
      await mailer.send(mail('after the idle close'));
      expect(relay.received.map((received) => received.subject)).toEqual(['first', 'second', 'after the idle close']);
      expect(relay.connections).toBe(2);
    } finally {
      mailer.close();
      await relay.close();
    }
  });
});
