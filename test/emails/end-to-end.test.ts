import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { backgroundJobs, startJobRunner } from '../../src/jobs/index.js';
import { recordChargeback } from '../../src/domain/transactions/chargebacks.js';
import { convert, formatMoney } from '../../src/domain/money.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from './support/smtp.js';
import { resendFailedMails } from '../../src/domain/emails/outbox.js';
import { limits } from '../../src/limits.js';
import { cli } from '../cli/helpers.js';
import type { DeliveryRun } from '../../src/jobs/mail-delivery.js';

// Through the REST API with sandbox tokens on test channels: the payments code writes the
// outbox rows, the worker delivers them to a real SMTP server.
let smtp: TestSmtpServer;
let t: TestContext;
let site: SiteFixture;
let base: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await createTestContext({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'payments@trustfare.test' }, now: () => new Date(Date.now() + 1000) });
  site = await createSite(t.db);
  base = `/${site.path}/site-json/vendor/v2`;
});

afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

beforeEach(() => {
  smtp.received.length = 0;
});

async function api(method: 'POST' | 'PUT', path: string, payload: Record<string, unknown>) {
  const response = await t.app.inject({ method, url: `${base}${path}`, headers: site.headers, payload });
  expect(response.statusCode, response.body).toBeLessThan(300);
  return response.json();
}

async function channel(settings: Record<string, unknown>): Promise<number> {
  return (await api('POST', '/channels', { name: 'Alpine Tours', currencies: 'EUR', ...settings })).id;
}

async function booking(channelId: number, extra: Record<string, unknown> = {}): Promise<number> {
  return (await api('POST', '/bookings', {
    firstname: 'Lena', surname: 'Berg', email: 'lena@example.com', date: '2030-08-01', total: 80_000, currencies: 'EUR', countries: 'AT', channels: channelId, reference: 'ALP-9', ...extra,
  })).id;
}

function purchase(channelId: number, bookingId: number, total: number, extra: Record<string, unknown> = {}) {
  return api('POST', '/transactions', { transaction_types: 'purchase', channels: channelId, currencies: 'EUR', total, token: 'tok_visa', bookings: [{ id: bookingId, currencies: 'EUR', total }], ...extra });
}

/** One run of the background job the server schedules, and what it reports. */
async function deliverRun(): Promise<DeliveryRun> {
  const job = backgroundJobs.find((candidate) => candidate.name === 'mail-delivery')!;
  return (await job.run(t.context)) as DeliveryRun;
}

/** One run of the background job the server schedules (proves it is registered). */
async function deliver(): Promise<ReceivedMail[]> {
  const job = backgroundJobs.find((candidate) => candidate.name === 'mail-delivery')!;
  await job.run(t.context);
  return [...smtp.received];
}

/** The outbox row of the one mail of the booking's payment. */
function outboxRowOf(bookingId: number) {
  return t.db.one<{ id: number; transaction_id: number; status: string; attempts: number; retry_recipients: string[] | null; last_error: string | null }>(
    'SELECT o.id, o.transaction_id, o.status, o.attempts, o.retry_recipients, o.last_error FROM email_outbox o JOIN transaction_bookings tb ON tb.transaction_id = o.transaction_id WHERE tb.booking_id = $1', [bookingId]);
}

/** What `trustfare mail failed` lists of the transaction's mails. */
async function failedMailsOf(transactionId: number): Promise<{ id: number; owed_to: string[]; last_error: string }[]> {
  const listed = await cli(t.config.databaseUrl!, ['mail', 'failed'], { SMTP_URL: smtp.url });
  expect(listed.code, listed.stderr).toBe(0);
  return listed.json.mails.filter((mail: { transaction_id: number }) => mail.transaction_id === transactionId);
}

describe('mails from real payments', () => {
  it('purchase: receipt in the request language to payee_email, BCC to primary_mail', async () => {
    const channelId = await channel({ language: 'deDE', primary_mail: 'ops@alpine.example,finance@alpine.example', mail_bcc_transactional_mails: true, receipt_label: 'Alpine Tours GmbH' });
    const bookingId = await booking(channelId);
    const payment = await purchase(channelId, bookingId, 80_000, { language: 'itIT', payee_email: 'payer@example.com', payee_name: 'Marco', payee_surname: 'Rossi' });
    expect(payment.status).toBe('complete');
    const [mail, ...others] = await deliver();
    expect(others).toEqual([]);
    expect(mail!.envelopeTo.sort()).toEqual(['finance@alpine.example', 'ops@alpine.example', 'payer@example.com']);
    expect(mail!.subject).toBe(`La tua ricevuta di pagamento da Alpine Tours GmbH (${site.siteId}-${bookingId})`);
    expect(mail!.text).toContain('Gentile Marco Rossi,');
    expect(mail!.text).toContain(`${payment.trust_id}`);
    expect(mail!.text).toContain('Visa che termina con 1111');
    expect(mail!.raw).not.toContain('4111111111111111');
  });

  it('forex purchase: the receipt shows the paid amount, the booking amount and the recorded rate', async () => {
    const channelId = (await api('POST', '/channels', { name: 'Dollar Desk', currencies: 'USD', language: 'enGB' })).id;
    const bookingId = (await api('POST', '/bookings', {
      firstname: 'Lena', surname: 'Berg', email: 'lena@example.com', date: '2030-08-01', total: 20_000, currencies: 'USD', countries: 'US', channels: channelId,
    })).id;
    // Reading the channel quotes the sandbox rate of the day (forex_feed).
    const feed = (await t.app.inject({ url: `${base}/channels/${channelId}`, headers: site.headers })).json().forex_feed;
    expect(feed.rates.EUR).toBeDefined();
    const { rate } = await t.db.one<{ rate: string }>("SELECT rate::text AS rate FROM rate_quotes WHERE base = 'USD' AND currency = 'EUR' ORDER BY id DESC LIMIT 1");
    const paid = convert({ amount: 20_000, from: 'USD', to: 'EUR', rate });
    const payment = await api('POST', '/transactions', {
      transaction_types: 'purchase', channels: channelId, currencies: 'EUR', total: paid, token: 'tok_visa', bookings: [{ id: bookingId, currencies: 'USD', total: 20_000 }],
    });
    expect(payment.status).toBe('complete');
    expect(payment.forex_rate).not.toBeNull();
    const [mail] = await deliver();
    expect(mail!.text).toMatch(new RegExp(`Amount:\\s+€${(paid / 100).toFixed(2).replace('.', '\\.')}`));
    expect(mail!.text).toMatch(/Amount in booking currency:\s+US\$200\.00/);
    const shownRate = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 8 }).format(Number(payment.forex_rate));
    expect(mail!.text).toMatch(new RegExp(`Exchange rate:\\s+1 USD = ${shownRate.replace('.', '\\.')} EUR`));
  });

  it('declined purchase: failure notice to primary_mail in the channel language, nothing to the payer', async () => {
    const channelId = await channel({ name: 'Fjord Trips', language: 'lvLV', primary_mail: 'alerts@fjord.example', mail_failures: true, mail_bcc_transactional_mails: true });
    const bookingId = await booking(channelId, { total: 10_051 });
    const payment = await purchase(channelId, bookingId, 10_051, { language: 'frFR' });
    expect(payment.status).toBe('failed');
    const [mail, ...others] = await deliver();
    expect(others).toEqual([]);
    expect(mail!.envelopeTo).toEqual(['alerts@fjord.example']);
    expect(mail!.subject).toBe(`Neizdevies maksājums kanālā Fjord Trips (${site.siteId}-${bookingId})`);
    expect(mail!.text).toContain('800.100.151');
  });

  it('declined purchase: the reason is in the notice\'s language next to the gateway code; English as the gateway said it', async () => {
    const german = await channel({ name: 'Alpen Reisen', language: 'deDE', primary_mail: 'team@alpen.example', mail_failures: true });
    const english = await channel({ name: 'Lake Tours', language: 'enGB', primary_mail: 'ops@lake.example', mail_failures: true });
    expect((await purchase(german, await booking(german, { total: 10_051 }), 10_051)).status).toBe('failed');
    expect((await purchase(english, await booking(english, { total: 10_059 }), 10_059)).status).toBe('failed');
    const mails = await deliver();
    const inGerman = mails.find((mail) => mail.envelopeTo.includes('team@alpen.example'))!;
    expect(inGerman.text).toMatch(/Grund:\s+800\.100\.151 abgelehnt \(ungültige Karte\)/);
    expect(inGerman.html).toContain('800.100.151 abgelehnt (ungültige Karte)');
    expect(inGerman.text).not.toContain('invalid card');
    const inEnglish = mails.find((mail) => mail.envelopeTo.includes('ops@lake.example'))!;
    expect(inEnglish.text).toMatch(/Reason:\s+800\.100\.159 declined \(stolen card\)/);
  });

  it('declined vault: the notice says the card was not saved, not that a payment of 0.00 failed', async () => {
    const channelId = await channel({ name: 'Card Desk', language: 'enGB', primary_mail: 'ops@cards.example', mail_failures: true });
    const vault = await api('POST', '/transactions', { transaction_types: 'vault', channels: channelId, currencies: 'EUR', total: 0, token: 'tok_visa_declined' });
    expect(vault.status).toBe('failed');
    const [mail, ...others] = await deliver();
    expect(others).toEqual([]);
    expect(mail!.envelopeTo).toEqual(['ops@cards.example']);
    expect(mail!.subject).toBe(`Card not saved on Card Desk (${vault.trust_id})`);
    expect(mail!.text).toContain('Saving a card on channel Card Desk did not succeed.');
    // A vault moves no money: no "payment attempt", and no amount of 0.00.
    expect(mail!.text).not.toMatch(/payment|Amount|0\.00/i);
    expect(mail!.text).toMatch(/Reason:\s+800\.100\.100 /);
  });

  it('declined refund: the notice says the refund failed and nothing went back to the card, not that a payment failed', async () => {
    const channelId = await channel({ name: 'Refund Desk', language: 'deDE', primary_mail: 'ops@refunds.example', mail_failures: true });
    const bookingId = await booking(channelId);
    const payment = await purchase(channelId, bookingId, 80_000, { payee_email: 'payer@example.com' });
    await deliver();
    smtp.received.length = 0;
    const refund = await api('POST', '/transactions', {
      transaction_types: 'refund', channels: channelId, currencies: 'EUR', total: 10_051, linked_id: payment.id, bookings: [{ id: bookingId, currencies: 'EUR', total: 10_051 }],
    });
    expect(refund.status).toBe('failed');
    const [notice, ...others] = await deliver();
    expect(others).toEqual([]);
    expect(notice!.envelopeTo).toEqual(['ops@refunds.example']);
    expect(notice!.subject).toBe(`Erstattung fehlgeschlagen auf Refund Desk (${site.siteId}-${bookingId})`);
    expect(notice!.text.split('\n')[0]).toBe('Erstattung fehlgeschlagen');
    expect(notice!.text).toContain(`Eine Erstattung über ${formatMoney(10_051, 'EUR', 'de-DE')} auf dem Kanal Refund Desk war nicht erfolgreich.`);
    expect(notice!.text).not.toMatch(/Zahlung|abgebucht/);
  });

  // A declined void or capture leaves the authorisation holding the amount: the notice says so, not that a payment failed.
  const heldAfter = [
    {
      type: 'void', name: 'Hold Desk', language: 'frFR', locale: 'fr-FR', to: 'ops@holds.example', subject: 'Échec de l’annulation sur Hold Desk', heading: 'Échec de l’annulation',
      intro: (amount: string) => `L’annulation d’une autorisation de ${amount} sur le canal Hold Desk n’a pas abouti. Le montant reste bloqué sur la carte.`, not: /paiement|débité/,
    },
    {
      type: 'capture', name: 'Capture Desk', language: 'enGB', locale: 'en-GB', to: 'ops@captures.example', subject: 'Capture failed on Capture Desk', heading: 'Capture failed',
      intro: (amount: string) => `Capturing ${amount} of an authorisation on channel Capture Desk did not succeed. No money was taken, and the amount is still held on the card by the authorisation.`, not: /Payment failed|payment attempt/,
    },
  ];
  for (const held of heldAfter) {
    it(`declined ${held.type}: the notice says the ${held.type} failed and the amount is still held on the card, not that a payment failed`, async () => {
      const channelId = await channel({ name: held.name, language: held.language, primary_mail: held.to, mail_failures: true });
      const bookingId = await booking(channelId);
      const share = { bookings: [{ id: bookingId, currencies: 'EUR', total: 30_000 }] };
      const authorization = await api('POST', '/transactions', { transaction_types: 'authorize', channels: channelId, currencies: 'EUR', total: 30_000, token: 'tok_visa', ...share });
      expect(authorization.status).toBe('complete');
      // The processor no longer lets it be voided or captured (as when the hold was already released at its end).
      await t.db.query(`UPDATE sandbox_operations SET voided = true WHERE reference = (SELECT uuid::text FROM transactions WHERE id = $1)`, [authorization.id]);
      const followUp = await api('POST', '/transactions', { transaction_types: held.type, channels: channelId, currencies: 'EUR', total: 30_000, linked_id: authorization.id, ...share });
      expect(followUp.status).toBe('failed');
      const [notice, ...others] = await deliver();
      expect(others).toEqual([]);
      expect(notice!.envelopeTo).toEqual([held.to]);
      expect(notice!.subject).toBe(`${held.subject} (${site.siteId}-${bookingId})`);
      expect(notice!.text.split('\n')[0]).toBe(held.heading);
      expect(notice!.text).toContain(held.intro(formatMoney(30_000, 'EUR', held.locale)));
      expect(notice!.text).not.toMatch(held.not);
    });
  }

  it('declined purchase on a channel without mail_failures sends nothing', async () => {
    const channelId = await channel({ primary_mail: 'alerts@fjord.example', mail_failures: false });
    const bookingId = await booking(channelId, { total: 10_052 });
    expect((await purchase(channelId, bookingId, 10_052)).status).toBe('failed');
    expect(await deliver()).toEqual([]);
  });

  it('an address on a channel list that no header can carry is skipped: the receipt and the other copies still go', async () => {
    const refused = await t.app.inject({ method: 'POST', url: `${base}/channels`, headers: site.headers, payload: { name: 'Nord', currencies: 'EUR', primary_mail: 'jörg@nord.example' } });
    expect(refused.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { primary_mail: 'must be email addresses separated by commas' } } });
    const channelId = await channel({ primary_mail: 'ops@nord.example', mail_bcc_transactional_mails: true });
    // Stored before the API refused such addresses.
    await t.db.query(`UPDATE channels SET primary_mail = 'jörg@nord.example, ops@nord.example' WHERE id = $1`, [channelId]);
    const bookingId = await booking(channelId, { email: 'lena@example.com' });
    await purchase(channelId, bookingId, 80_000);
    const mails = await deliver();
    expect(mails.map((mail) => mail.envelopeTo.sort())).toEqual([['lena@example.com', 'ops@nord.example']]);
    expect(mails[0]!.raw).toMatch(/^Reply-To: ops@nord\.example\r?$/im);
  });

  it("a payer the relay defers (greylisting) still gets the receipt, later, and the merchant's copy that went through is not sent twice", async () => {
    const channelId = await channel({ primary_mail: 'ops@grey.example', mail_bcc_transactional_mails: true });
    const bookingId = await booking(channelId, { email: 'grey@example.com' });
    await purchase(channelId, bookingId, 80_000);
    smtp.deferRecipient('grey@example.com', 1);
    expect((await deliver()).map((mail) => mail.envelopeTo)).toEqual([['ops@grey.example']]);
    const row = await t.db.one<{ status: string; retry_recipients: string[] }>('SELECT o.status, o.retry_recipients FROM email_outbox o JOIN transactions x ON x.id = o.transaction_id JOIN transaction_bookings tb ON tb.transaction_id = x.id WHERE tb.booking_id = $1', [bookingId]);
    expect(row).toEqual({ status: 'pending', retry_recipients: ['grey@example.com'] });
    await t.db.query('UPDATE email_outbox SET next_attempt_at = now() - interval \'1 second\' WHERE status = \'pending\'');
    smtp.received.length = 0;
    const later = await deliver();
    expect(later.map((mail) => mail.envelopeTo)).toEqual([['grey@example.com']]);
    expect(later[0]!.raw).toMatch(/^To: grey@example\.com\r?$/im);
  });

  it('a payer the relay still defers at the last attempt leaves the mail failed for them alone, not sent, and resend sends it to them alone', async () => {
    const channelId = await channel({ primary_mail: 'ops@last.example', mail_bcc_transactional_mails: true });
    const bookingId = await booking(channelId, { email: 'stuck@example.com' });
    await purchase(channelId, bookingId, 80_000);
    // The relay is away for every attempt but the last (whole mails refused for now).
    smtp.refuseNext(1, 451);
    expect(await deliver()).toEqual([]);
    const row = () => t.db.one<{ id: number; status: string; retry_recipients: string[] | null; last_error: string | null }>(
      'SELECT o.id, o.status, o.retry_recipients, o.last_error FROM email_outbox o JOIN transaction_bookings tb ON tb.transaction_id = o.transaction_id WHERE tb.booking_id = $1', [bookingId]);
    // Every attempt but the last used up: the next one is the last.
    await t.db.query(`UPDATE email_outbox SET attempts = $2, next_attempt_at = now() - interval '1 second' WHERE id = $1`, [(await row()).id, limits.mailAttemptsMax - 1]);
    // At the last attempt it takes the merchant's copy and greylists the payer.
    smtp.deferRecipient('stuck@example.com', 1);
    expect((await deliver()).map((mail) => mail.envelopeTo)).toEqual([['ops@last.example']]);
    const last = await row();
    expect(last).toMatchObject({ status: 'failed', retry_recipients: ['stuck@example.com'] });
    // Who is still owed the mail, each with the relay's reply (nothing else before them).
    expect(last.last_error).toBe(`still deferred at the last attempt (${limits.mailAttemptsMax}): stuck@example.com (450 Greylisted, try again later)`);
    expect(await resendFailedMails(t.db, { id: last.id }, { count: 1, now: new Date() })).toEqual({ resent: [last.id], requested: [], more: false });
    smtp.received.length = 0;
    const again = await deliver();
    expect(again.map((mail) => mail.envelopeTo)).toEqual([['stuck@example.com']]);
    expect((await row()).status).toBe('sent');
  });

  it('a payer the relay defers while it refuses the Bcc address for good (no recipient taken) is retried alone and gets the receipt; the mail then ends failed for the Bcc address, listed by mail failed', async () => {
    const channelId = await channel({ primary_mail: 'gone@mixed.example', mail_bcc_transactional_mails: true });
    const bookingId = await booking(channelId, { email: 'later@example.com' });
    await purchase(channelId, bookingId, 80_000);
    smtp.deferRecipient('later@example.com', 1);
    smtp.refuseRecipient('gone@mixed.example', 10, 550);
    expect(await deliver()).toEqual([]);
    const first = await outboxRowOf(bookingId);
    expect(first).toMatchObject({ status: 'pending', retry_recipients: ['later@example.com'] });
    expect(first.last_error).toMatch(/gone@mixed\.example/);
    await t.db.query('UPDATE email_outbox SET next_attempt_at = now() - interval \'1 second\' WHERE status = \'pending\'');
    const run = await deliverRun();
    expect(smtp.received.map((mail) => mail.envelopeTo)).toEqual([['later@example.com']]);
    // The payer has the receipt; the merchant's copy never went: the mail says so, for good.
    const last = await outboxRowOf(bookingId);
    // And the log line (the job runner's warning) gives the first attempt's reply to the copy.
    expect(run.failures).toEqual([expect.objectContaining({ mail: last.id, owed: { to: 0, bcc: 1 }, replies: [{ recipient: 'bcc', code: 550, text: '550 No such mailbox' }] })]);
    expect(last).toMatchObject({ status: 'failed', retry_recipients: ['gone@mixed.example'] });
    expect(last.last_error).toBe('refused for good: gone@mixed.example (550 No such mailbox)');
    expect(await failedMailsOf(last.transaction_id)).toEqual([expect.objectContaining({ id: last.id, owed_to: ['gone@mixed.example'], last_error: last.last_error })]);
  });

  it('a Bcc address refused for good is still owed the mail after a later attempt the relay refused whole, and the mail ends failed for it with its reply', async () => {
    const channelId = await channel({ primary_mail: 'gone@twice.example', mail_bcc_transactional_mails: true });
    const bookingId = await booking(channelId, { email: 'slow@example.com' });
    await purchase(channelId, bookingId, 80_000);
    smtp.deferRecipient('slow@example.com', 1);
    smtp.refuseRecipient('gone@twice.example', 10, 550);
    expect(await deliver()).toEqual([]);
    const due = () => t.db.query('UPDATE email_outbox SET next_attempt_at = now() - interval \'1 second\' WHERE status = \'pending\'');
    // The second attempt, for the payer alone, meets a relay that takes no mail for now.
    await due();
    smtp.refuseNext(1, 451);
    expect(await deliver()).toEqual([]);
    const second = await outboxRowOf(bookingId);
    expect(second).toMatchObject({ status: 'pending', retry_recipients: ['slow@example.com'] });
    expect(second.last_error).toBe('EMESSAGE: 451 Try again later; refused for good: gone@twice.example (550 No such mailbox)');
    await due();
    expect((await deliver()).map((mail) => mail.envelopeTo)).toEqual([['slow@example.com']]);
    expect(await outboxRowOf(bookingId)).toMatchObject({ status: 'failed', retry_recipients: ['gone@twice.example'], last_error: 'refused for good: gone@twice.example (550 No such mailbox)' });
  });

  it('a payer the relay refuses for good while it takes the Bcc copy leaves the mail failed for the payer, listed by mail failed, and resend sends it to the payer alone', async () => {
    const channelId = await channel({ primary_mail: 'ops@half.example', mail_bcc_transactional_mails: true });
    const bookingId = await booking(channelId, { email: 'full@example.com' });
    await purchase(channelId, bookingId, 80_000);
    smtp.refuseRecipient('full@example.com', 1, 552);
    expect((await deliver()).map((mail) => mail.envelopeTo)).toEqual([['ops@half.example']]);
    const failed = await outboxRowOf(bookingId);
    expect(failed).toMatchObject({ status: 'failed', retry_recipients: ['full@example.com'], attempts: 1 });
    expect(failed.last_error).toBe('refused for good: full@example.com (552 No such mailbox)');
    expect(await failedMailsOf(failed.transaction_id)).toEqual([expect.objectContaining({ id: failed.id, owed_to: ['full@example.com'] })]);
    // The mailbox has room again: resend goes to the payer alone, not the merchant a second time.
    expect((await cli(t.config.databaseUrl!, ['mail', 'resend', '--mail', String(failed.id)], { SMTP_URL: smtp.url })).json).toEqual({ resent: [failed.id], requested: [], more: false });
    smtp.received.length = 0;
    expect((await deliver()).map((mail) => mail.envelopeTo)).toEqual([['full@example.com']]);
    expect(await outboxRowOf(bookingId)).toMatchObject({ status: 'sent', last_error: null });
    expect(await failedMailsOf(failed.transaction_id)).toEqual([]);
  });

  it("logs each mail that failed for good as one warning with the mail, its kind, transaction, bookings and the relay's reply, and no address or card", async () => {
    const channelId = await channel({ primary_mail: 'ops@logged.example', mail_bcc_transactional_mails: true });
    const bookingId = await booking(channelId, { email: 'unknown@example.com' });
    const payment = await purchase(channelId, bookingId, 80_000);
    smtp.refuseRecipient('unknown@example.com', 1, 550, '<unknown@example.com>: Recipient address rejected: User unknown');
    const lines: { level: string; details: Record<string, unknown>; message: string }[] = [];
    const logged = (level: string) => (details: Record<string, unknown>, message: string) => void lines.push({ level, details, message });
    const mailJob = backgroundJobs.find((candidate) => candidate.name === 'mail-delivery')!;
    const runner = startJobRunner(t.context, [{ ...mailJob, intervalMs: 1 }], { info: logged('info'), warn: logged('warn'), error: logged('error') });
    const warnings = () => lines.filter((line) => line.level === 'warn' && line.details.transaction === payment.id);
    for (let wait = 0; wait < 400 && warnings().length === 0; wait++) await new Promise((resolve) => setTimeout(resolve, 10));
    await runner.stop();
    const { id } = await outboxRowOf(bookingId);
    expect(warnings()).toEqual([{
      level: 'warn',
      message: 'mail failed for good: `trustfare mail failed` lists it, `trustfare mail resend` sends it again',
      details: {
        job: 'mail-delivery', mail: id, kind: 'receipt', site: site.siteId, transaction: payment.id, bookings: [bookingId], attempts: 1,
        owed: { to: 1, bcc: 0 },
        replies: [{ recipient: 'to', code: 550, text: '550 [address]: Recipient address rejected: User unknown' }],
      },
    }]);
    // The database keeps the address (the operator's record, `mail failed`); the log does not.
    expect(JSON.stringify(lines)).not.toMatch(/@|4111/);
    expect((await outboxRowOf(bookingId)).last_error).toBe('refused for good: unknown@example.com (550 <unknown@example.com>: Recipient address rejected: User unknown)');
  });

  it('logs a run whose mails the relay deferred as one warning with its replies: a relay down or SMTP_URL refused shows at LOG_LEVEL=warn within seconds, not an hour later as failures', async () => {
    const channelId = await channel({});
    const bookingId = await booking(channelId, { email: 'later@example.com' });
    await purchase(channelId, bookingId, 80_000);
    smtp.refuseNext(1, 451);
    const lines: { level: string; details: Record<string, unknown>; message: string }[] = [];
    const logged = (level: string) => (details: Record<string, unknown>, message: string) => void lines.push({ level, details, message });
    const mailJob = backgroundJobs.find((candidate) => candidate.name === 'mail-delivery')!;
    const runner = startJobRunner(t.context, [{ ...mailJob, intervalMs: 1 }], { info: logged('info'), warn: logged('warn'), error: logged('error') });
    const warnings = () => lines.filter((line) => line.level === 'warn');
    for (let wait = 0; wait < 400 && warnings().length === 0; wait++) await new Promise((resolve) => setTimeout(resolve, 10));
    await runner.stop();
    expect(warnings()).toEqual([{
      level: 'warn',
      message: 'mail not sent, tried again with backoff (failed for good after 8 attempts): check the relay and SMTP_URL; `trustfare mail deliver` tries at once',
      details: { job: 'mail-delivery', retrying: 1, replies: [{ code: 451, text: expect.stringContaining('451') }] },
    }]);
    expect(JSON.stringify(lines)).not.toMatch(/@/);
    expect(await outboxRowOf(bookingId)).toMatchObject({ status: 'pending', attempts: 1 });
  });

  it('a mail the relay refuses whole for good is reported with its reply to the whole mail and every recipient owed', async () => {
    const channelId = await channel({ primary_mail: 'ops@whole.example', mail_bcc_transactional_mails: true });
    const bookingId = await booking(channelId, { email: 'whole@example.com' });
    await purchase(channelId, bookingId, 80_000);
    smtp.refuseNext(1, 554);
    const run = await deliverRun();
    const { id } = await outboxRowOf(bookingId);
    expect(run.failures).toEqual([expect.objectContaining({ mail: id, bookings: [bookingId], owed: { to: 1, bcc: 1 }, replies: [{ code: 554, text: 'EMESSAGE: 554 Mailbox unavailable' }] })]);
  });

  it('a mail whose every recipient the relay refuses for good fails at once', async () => {
    const channelId = await channel({ primary_mail: 'gone@dead.example', mail_bcc_transactional_mails: true });
    const bookingId = await booking(channelId, { email: 'nobody@dead.example' });
    await purchase(channelId, bookingId, 80_000);
    smtp.refuseRecipient('nobody@dead.example', 10, 550);
    smtp.refuseRecipient('gone@dead.example', 10, 551);
    expect(await deliver()).toEqual([]);
    const row = await t.db.one<{ status: string; attempts: number }>(
      'SELECT o.status, o.attempts FROM email_outbox o JOIN transaction_bookings tb ON tb.transaction_id = o.transaction_id WHERE tb.booking_id = $1', [bookingId]);
    expect(row).toEqual({ status: 'failed', attempts: 1 });
  });

  it("a capture's receipt and its refund's mail go to the payer named on the authorisation, not the lead traveller", async () => {
    const channelId = await channel({});
    const bookingId = await booking(channelId, { email: 'lead@example.com' });
    const authorisation = await api('POST', '/transactions', {
      transaction_types: 'authorize', channels: channelId, currencies: 'EUR', total: 80_000, token: 'tok_visa', bookings: [{ id: bookingId, currencies: 'EUR', total: 80_000 }],
      payee_email: 'payer@example.com', payee_name: 'Pablo', payee_surname: 'Pagador',
    });
    const capture = await api('POST', '/transactions', {
      transaction_types: 'capture', channels: channelId, currencies: 'EUR', total: 80_000, linked_id: authorisation.id, bookings: [{ id: bookingId, currencies: 'EUR', total: 80_000 }],
    });
    expect(capture.status).toBe('complete');
    await api('POST', '/transactions', {
      transaction_types: 'refund', channels: channelId, currencies: 'EUR', total: 1_000, linked_id: capture.id, bookings: [{ id: bookingId, currencies: 'EUR', total: 1_000 }],
    });
    const mails = await deliver();
    expect(mails.map((mail) => mail.envelopeTo)).toEqual([['payer@example.com'], ['payer@example.com']]);
    expect(mails.every((mail) => mail.text.includes('Pablo Pagador'))).toBe(true);
  });

  it("a refund or chargeback of one booking of a two-booking payment goes to the payment's payer, not to the other booking's traveller", async () => {
    const channelId = await channel({});
    const first = await booking(channelId, { firstname: 'Ann', surname: 'Lead', email: 'ann@example.com', total: 5_000, language: 'frFR' });
    const second = await booking(channelId, { firstname: 'Bob', surname: 'Other', email: 'bob@example.com', total: 3_000, language: 'deDE' });
    const payment = await api('POST', '/transactions', {
      transaction_types: 'purchase', channels: channelId, currencies: 'EUR', total: 8_000, token: 'tok_visa',
      bookings: [{ id: first, currencies: 'EUR', total: 5_000 }, { id: second, currencies: 'EUR', total: 3_000 }],
    });
    await api('POST', '/transactions', {
      transaction_types: 'refund', channels: channelId, currencies: 'EUR', total: 1_000, linked_id: payment.id, bookings: [{ id: second, currencies: 'EUR', total: 1_000 }],
    });
    await recordChargeback(t.context, { siteId: site.siteId, userId: null, source: 'cli', isPlatformAdmin: true }, { type: 'chargeback', linkedId: payment.id, total: 5_500 });
    const mails = await deliver();
    expect(mails.map((mail) => mail.envelopeTo)).toEqual([['ann@example.com'], ['ann@example.com'], ['ann@example.com']]);
    // One payer, one name and one language for every mail of the payment (Bob's card was never charged).
    expect(mails.every((mail) => mail.text.includes('Ann Lead') && !mail.text.includes('Bob'))).toBe(true);
    expect(mails.map((mail) => mail.text.split('\n')[0])).toEqual(['Reçu de paiement', 'Remboursement', 'Paiement contesté']);
  });

  it('refund and chargeback keep the language of the original payment; chargeback_mail gets the notice', async () => {
    const channelId = await channel({ language: 'esES', chargeback_mail: 'disputes@alpine.example', primary_mail: 'ops@alpine.example' });
    const bookingId = await booking(channelId, { email: 'booker@example.com' });
    const payment = await purchase(channelId, bookingId, 80_000, { language: 'koKO' });
    const refund = await api('POST', '/transactions', {
      transaction_types: 'refund', channels: channelId, currencies: 'EUR', total: 30_000, linked_id: payment.id, bookings: [{ id: bookingId, currencies: 'EUR', total: 30_000 }],
    });
    expect(refund.status).toBe('complete');
    await recordChargeback(t.context, { siteId: site.siteId, userId: null, source: 'cli', isPlatformAdmin: true }, { type: 'chargeback', linkedId: payment.id, total: 50_000 });
    const mails = await deliver();
    const toPayer = mails.filter((mail) => mail.envelopeTo.includes('booker@example.com'));
    expect(toPayer.map((mail) => mail.text.split('\n')[0])).toEqual(['결제 영수증', '환불', '결제 이의 제기']);
    const notice = mails.find((mail) => mail.envelopeTo.includes('disputes@alpine.example'))!;
    expect(notice.envelopeTo).toEqual(['disputes@alpine.example']);
    expect(notice.subject).toBe(`Contracargo en Alpine Tours (${site.siteId}-${bookingId})`);
    expect(mails).toHaveLength(4);
  });
});
