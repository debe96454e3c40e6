import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDirForFile, tempDirForTest } from '../support/temp-dir.js';
import { languageCodes, localeOf, translate } from '../../src/i18n/catalogue.js';
import { mailKinds } from '../../src/domain/emails/kinds.js';
import { sampleMailData } from '../../src/domain/emails/sample.js';
import { composeMail, renderMail } from '../../src/domain/emails/templates.js';
import { createMailer } from '../../src/domain/emails/transport.js';
import { createTestContext, testEnv, type TestContext } from '../support/context.js';
import { cli } from '../cli/helpers.js';
import { parseMail } from './support/mime.js';
import { createSite, insertBooking, insertChannel, insertTransaction, paidWithMailsRequested } from './support/fixtures.js';
import { operatorSettlementMessage, serviceFailures } from '../../src/domain/transactions/failures.js';
import { formatMoney } from '../../src/domain/money.js';
import { resendFailedMails } from '../../src/domain/emails/outbox.js';
import { limits } from '../../src/limits.js';

describe('every kind in every language', () => {
  for (const kind of mailKinds) {
    it.each(languageCodes)(`${kind} in %s renders both parts with every value filled in`, (language) => {
      const mail = renderMail(sampleMailData(kind, language));
      const english = renderMail(sampleMailData(kind, 'enGB'));
      for (const part of [mail.subject, mail.text, mail.html]) {
        expect(part).not.toMatch(/\{[A-Za-z]+\}/);
        expect(part).toContain('12-3456');
      }
      expect(mail.html).toContain(`<html lang="${localeOf(language)}">`);
      expect(mail.text).toContain('1111');
      if (language !== 'enGB') {
        expect(mail.subject).not.toBe(english.subject);
        expect(mail.text.split('\n')[0]).not.toBe(english.text.split('\n')[0]);
      }
    });
  }

  it('gives a failure the service stated itself (no processor code) in the mail language, not its stored English', () => {
    for (const failure of ['noProcessorAnswer', 'challengeNotPresented'] as const) {
      const data = { ...sampleMailData('failure', 'deDE'), reason: { code: null, message: serviceFailures[failure] } };
      const mail = renderMail(data);
      expect(mail.text).toContain(translate('deDE', `declines.${failure}`));
      expect(mail.text).not.toContain(serviceFailures[failure]);
    }
  });

  it('gives an operator\'s settlement as declined in the mail language, with the operator\'s reason as written', () => {
    const message = operatorSettlementMessage(' no such charge in the settlement file ');
    for (const language of languageCodes) {
      const mail = renderMail({ ...sampleMailData('failure', language), reason: { code: null, message } });
      expect(mail.text, language).toContain(translate(language, 'declines.settledByOperator', { reason: 'no such charge in the settlement file' }));
      if (language !== 'enGB') expect(mail.text, language).not.toContain('Settled by the operator');
    }
    expect(renderMail({ ...sampleMailData('failure', 'deDE'), reason: { code: null, message } }).text).toMatch(/Grund:\s+Vom Betreiber abgeschlossen: no such charge in the settlement file\n/);
  });

  it('says in every language that a refund failed, not a payment, when the failure is a refund\'s', () => {
    for (const language of languageCodes) {
      const payment = renderMail(sampleMailData('failure', language));
      const refund = renderMail({ ...sampleMailData('failure', language), transactionType: 'refund' });
      expect(refund.subject, language).toBe(translate(language, 'emails.failureRefundSubject', { channel: 'Sunny Tours EUR', bookingId: '12-3456' }));
      expect(refund.text.split('\n')[0], language).toBe(translate(language, 'emails.failureRefundHeading'));
      expect(refund.text, language).not.toContain(translate(language, 'emails.failureHeading'));
      expect(payment.subject, language).not.toBe(refund.subject);
    }
  });

  for (const [type, words] of [['void', 'failureVoid'], ['capture', 'failureCapture']] as const) {
    it(`says in every language that a ${type} failed and the amount is still held, not that a payment failed, when the failure is a ${type}'s`, () => {
      for (const language of languageCodes) {
        const payment = { ...sampleMailData('failure', language), transactionType: 'authorize' };
        const failed = { ...sampleMailData('failure', language), transactionType: type };
        const mail = renderMail(failed);
        expect(mail.subject, language).toBe(translate(language, `emails.${words}Subject`, { channel: 'Sunny Tours EUR', bookingId: '12-3456' }));
        expect(mail.text.split('\n')[0], language).toBe(translate(language, `emails.${words}Heading`));
        expect(mail.text, language).toContain(composeMail(failed).paragraphs[0]);
        expect(mail.text, language).not.toContain(composeMail(payment).paragraphs[0]);
        expect(mail.subject, language).not.toBe(renderMail(payment).subject);
      }
    });
  }

  it('says in every language that a card was not saved, with no amount, when the failure is a vault\'s', () => {
    for (const language of languageCodes) {
      const vault = { ...sampleMailData('failure', language), transactionType: 'vault', amount: { total: 0, currency: 'EUR' }, bookingAmount: null, exchangeRate: null, bookings: [] };
      const mail = renderMail(vault);
      expect(mail.subject, language).toBe(translate(language, 'emails.failureVaultSubject', { channel: 'Sunny Tours EUR', bookingId: '12-98765' }));
      expect(mail.text.split('\n')[0], language).toBe(translate(language, 'emails.failureVaultHeading'));
      expect(mail.text, language).toContain(translate(language, 'emails.failureVaultIntro', { channel: 'Sunny Tours EUR' }));
      expect(composeMail(vault).details.map((row) => row.label), language).not.toContain(translate(language, 'emails.labelAmount'));
    }
  });

  it('lines the plain-text values up in one column in every language, CJK labels counted at two columns a character', () => {
    // The width a fixed-width font gives a label (UAX #11): Han, kana, Hangul and fullwidth forms take two columns.
    const columns = (text: string) => [...text].reduce((sum, character) => sum + (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff01-\uff60]/u.test(character) ? 2 : 1), 0);
    for (const language of languageCodes) {
      const data = sampleMailData('failure', language);
      const lines = renderMail(data).text.split('\n');
      const amountLine = lines.find((line) => line.endsWith(formatMoney(data.bookingAmount!.total, 'EUR', localeOf(language))))!;
      const valueColumns = lines.filter((line) => /^[^:]+: +\S/.test(line) && line.includes('12-98765') || line === amountLine)
        .map((line) => columns(line.slice(0, line.search(/(?<=: +)\S/))));
      expect(valueColumns, language).toHaveLength(2);
      expect(new Set(valueColumns).size, language).toBe(1);
    }
    const japanese = renderMail(sampleMailData('failure', 'jaJA')).text;
    expect(japanese).toContain(`予約通貨での金額: €1,250.00\n`);
    expect(japanese).toContain(`金額:${' '.repeat(13)}$1,350.00\n`);
  });

  it('formats amounts and dates the way each locale writes them', () => {
    expect(renderMail(sampleMailData('receipt', 'deDE')).text).toMatch(/1\.250,00\s€/);
    expect(renderMail(sampleMailData('receipt', 'enGB')).text).toContain('€1,250.00');
    expect(renderMail(sampleMailData('receipt', 'jaJA')).text).toContain('2026年3月14日');
    expect(renderMail(sampleMailData('receipt', 'enGB')).text).toContain('14 March 2026');
    // A 24-hour clock in every language: Korean's default wrote a Latin "PM 09:30".
    for (const language of languageCodes) expect(renderMail(sampleMailData('receipt', language)).text, language).not.toMatch(/\b[AP]M\b/);
  });

  it('writes Latvian and Uzbek chargeback notices and the Latvian dispute mail in correct words', () => {
    const latvian = renderMail(sampleMailData('chargeback-notice', 'lvLV')).text;
    // "Darījums un tā rezervācijas": a masculine and a feminine noun together take the masculine plural.
    expect(latvian).toContain('Darījums un tā rezervācijas ir bloķēti,');
    // The payer's gender is unknown: no masculine-only participle ("esat apstrīdējis").
    expect(renderMail(sampleMailData('chargeback', 'lvLV')).text).not.toMatch(/apstrīdējis/);
    const uzbek = renderMail(sampleMailData('chargeback-notice', 'uzUZ'));
    // The English term only after the Uzbek one, as the Latvian and Romanian notices have it.
    for (const part of [uzbek.subject, uzbek.text.split('\n')[0]!]) expect(part, part).toMatch(/toʻlovni qaytarib olish \(chargeback\)/i);
    expect(uzbek.text.replace(/\(chargeback\)/g, '')).not.toMatch(/chargeback/i);
  });
});

describe('file transport (the default without SMTP_URL)', () => {
  it('writes one .eml per mail under DATA_DIR/mail, Bcc kept for review', async () => {
    const dataDir = tempDirForTest('mail');
    const mailer = createMailer({ dataDir, smtpUrl: undefined });
    expect(mailer.kind).toBe('file');
    const rendered = renderMail(sampleMailData('receipt', 'lvLV'));
    const receipt = await mailer.send({
      from: { name: 'Sunny Tours', address: 'payments@trustfare.test' }, to: ['anna@example.com'], bcc: ['ops@tours.example'], replyTo: null,
      ...rendered, messageId: '<receipt.1.1@trustfare.test>', locale: 'lv-LV', date: new Date(),
    });
    expect(readdirSync(path.join(dataDir, 'mail'))).toEqual(['receipt.1.1_trustfare.test.eml']);
    expect(receipt.deliveryId).toBe(path.join(dataDir, 'mail', 'receipt.1.1_trustfare.test.eml'));
    const mail = parseMail(readFileSync(receipt.deliveryId, 'utf8'));
    expect(mail.headers.get('bcc')).toBe('ops@tours.example');
    expect(mail.headers.get('content-language')).toBe('lv-LV');
    expect(mail.subject).toBe(rendered.subject);
    expect(mail.text).toBe(rendered.text);
  });

  it("keeps the mails from other local accounts (payer's name and email, amount, card's last four): the directory 0700, each file 0600", async () => {
    const dataDir = tempDirForTest('mail');
    const mailer = createMailer({ dataDir, smtpUrl: undefined });
    // Mode bits other accounts would get under the usual umask, whatever this process's is.
    const umask = process.umask(0o022);
    try {
      const sent = await mailer.send({
        from: { name: 'Sunny Tours', address: 'payments@trustfare.test' }, to: ['anna@example.com'], bcc: [], replyTo: null,
        ...renderMail(sampleMailData('receipt', 'enGB')), messageId: '<receipt.3.1@trustfare.test>', locale: 'en-GB', date: new Date(),
      });
      expect(statSync(path.join(dataDir, 'mail')).mode & 0o777).toBe(0o700);
      expect(statSync(sent.deliveryId).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(umask);
    }
  });

  it('makes the directory again when it was removed between mails: the failed mail goes at its retry', async () => {
    const dataDir = tempDirForTest('mail');
    const mailer = createMailer({ dataDir, smtpUrl: undefined });
    const mail = (id: number) => ({
      from: { name: 'Sunny Tours', address: 'payments@trustfare.test' }, to: ['anna@example.com'], bcc: [], replyTo: null,
      ...renderMail(sampleMailData('receipt', 'enGB')), messageId: `<receipt.${id}.1@trustfare.test>`, locale: 'en-GB', date: new Date(),
    });
    await mailer.send(mail(1));
    rmSync(path.join(dataDir, 'mail'), { recursive: true });
    await expect(mailer.send(mail(2))).rejects.toMatchObject({ permanent: false });
    await mailer.send(mail(2));
    expect(readdirSync(path.join(dataDir, 'mail'))).toEqual(['receipt.2.1_trustfare.test.eml']);
  });
});

describe('trustfare mail', () => {
  let t: TestContext;
  let url: string;
  const outDir = tempDirForFile('render');
  beforeAll(async () => {
    t = await createTestContext();
    url = t.config.databaseUrl!;
  });
  afterAll(async () => t.close());

  it('render writes a sample mail as .eml, .html or .txt', async () => {
    const eml = await cli(url, ['mail', 'render', '--kind', 'chargeback-notice', '--language', 'ukUK', '--out', path.join(outDir, 'notice.eml')]);
    expect(eml.code).toBe(0);
    expect(eml.json.subject).toBe('Чарджбек у каналі Sunny Tours EUR (12-3456)');
    expect(parseMail(readFileSync(path.join(outDir, 'notice.eml'), 'utf8')).subject).toBe(eml.json.subject);
    expect((await cli(url, ['mail', 'render', '--kind', 'receipt', '--language', 'zhZH', '--out', path.join(outDir, 'r.html')])).code).toBe(0);
    expect(readFileSync(path.join(outDir, 'r.html'), 'utf8')).toMatch(/^<!DOCTYPE html>[\s\S]*付款收据/);
    expect((await cli(url, ['mail', 'render', '--kind', 'refund', '--language', 'kkKK', '--out', path.join(outDir, 'r.txt')])).code).toBe(0);
    expect(readFileSync(path.join(outDir, 'r.txt'), 'utf8')).toMatch(/^Қаражатты қайтару\n/);
  });

  it('render uses a real transaction when given one, in the language asked for', async () => {
    const site = await createSite(t.db);
    const channelId = await insertChannel(t.db, site, { receiptLabel: 'Baltic Trips' });
    const bookingId = await insertBooking(t.db, site, { channelId, reference: 'RIX-77' });
    const transactionId = await insertTransaction(t.db, site, { channelId, type: 'purchase', status: 'complete', total: 4200, bookings: [{ id: bookingId, total: 4200 }] });
    const answer = await cli(url, ['mail', 'render', '--kind', 'receipt', '--language', 'lvLV', '--transaction', String(transactionId), '--out', path.join(outDir, 'real.txt')]);
    expect(answer.code).toBe(0);
    expect(answer.json.subject).toBe(`Jūsu maksājuma kvīts no Baltic Trips (${site.siteId}-${bookingId})`);
    expect(readFileSync(path.join(outDir, 'real.txt'), 'utf8')).toContain('RIX-77');
  });

  it('render refuses unknown kinds, languages and transactions with a clear message', async () => {
    const cases: [string[], RegExp][] = [
      [['--kind', 'invoice', '--language', 'enGB'], /--kind must be one of receipt, refund, failure, chargeback, chargeback-notice/],
      [['--kind', 'receipt', '--language', 'nlNL'], /--language must be one of zhZH, enGB/],
      [['--kind', 'receipt', '--language', 'enGB', '--transaction', '999999'], /transaction 999999 does not exist/],
    ];
    for (const [args, message] of cases) {
      const answer = await cli(url, ['mail', 'render', ...args, '--out', path.join(outDir, 'never.eml')]);
      expect(answer.code).toBe(1);
      expect(answer.stderr).toMatch(message);
    }
    expect(readdirSync(outDir)).not.toContain('never.eml');
  });

  it('set-aside lists the requests whose rendering failed, and retry puts one or all back in the queue', async () => {
    const site = await createSite(t.db);
    const channelId = await insertChannel(t.db, site, {});
    const requested = () => paidWithMailsRequested(t.db, site, { channelId, total: 4300, payeeEmail: 'aside@example.com' });
    const first = await requested();
    const second = await requested();
    // As the delivery job leaves a request it could not render (outbox.test.ts shows it doing so).
    await t.db.query(`UPDATE mail_requests SET last_error = 'rendering failed: broken row' WHERE transaction_id = ANY($1)`, [[first, second]]);
    const listed = await cli(url, ['mail', 'set-aside']);
    expect(listed.code).toBe(0);
    expect(listed.json.requests.map((request: { transaction_id: number; last_error: string }) => [request.transaction_id, request.last_error])).toEqual([
      [first, 'rendering failed: broken row'], [second, 'rendering failed: broken row'],
    ]);
    // Times as the other commands print them: GMT `YYYY-MM-DD HH:MM:SS`.
    expect(listed.json.requests[0].created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const [firstRequest, secondRequest] = listed.json.requests.map((request: { id: number }) => request.id);
    for (const [args, message] of [[['--request', 'x'], /--request must be a mail request id/], [['--request', '999999'], /mail request 999999 is not set aside/]] as [string[], RegExp][]) {
      const answer = await cli(url, ['mail', 'retry', ...args]);
      expect(answer.code).toBe(1);
      expect(answer.stderr).toMatch(message);
    }
    expect((await cli(url, ['mail', 'retry', '--request', String(firstRequest)])).json).toEqual({ retried: [firstRequest] });
    expect((await cli(url, ['mail', 'set-aside'])).json.requests.map((request: { id: number }) => request.id)).toEqual([secondRequest]);
    expect((await cli(url, ['mail', 'retry', '--all'])).json).toEqual({ retried: [secondRequest] });
    expect((await cli(url, ['mail', 'set-aside'])).json).toEqual({ requests: [] });
    expect((await cli(url, ['mail', 'deliver'])).json).toMatchObject({ requests: 2, sent: 2, errors: [] });
  });

  it('resend puts failed mails back in the outbox with fresh attempts, one by id or all written since a time, and deliver sends them', async () => {
    const site = await createSite(t.db);
    const channelId = await insertChannel(t.db, site, {});
    const paid = await Promise.all(['one', 'two', 'three', 'four'].map((name) => paidWithMailsRequested(t.db, site, { channelId, total: 4400, payeeEmail: `${name}@example.com` })));
    expect((await cli(url, ['mail', 'deliver'])).json).toMatchObject({ sent: 4 });
    const mailOf = async (transactionId: number) => (await t.db.one<{ id: number }>('SELECT id FROM email_outbox WHERE transaction_id = $1', [transactionId])).id;
    const [old, recent, pruned, sent] = await Promise.all(paid.map(mailOf));
    // As the delivery job leaves mails the relay refused for good (outbox.test.ts), one written two days ago, one pruned.
    await t.db.query(`UPDATE email_outbox SET status = 'failed', attempts = $2, sent_at = NULL, last_error = '550 relay refused' WHERE id = ANY($1)`, [[old, recent, pruned], limits.mailAttemptsMax]);
    await t.db.query(`UPDATE email_outbox SET created_at = now() - interval '2 days' WHERE id = $1`, [old]);
    await t.db.query(`UPDATE email_outbox SET text_body = '', html_body = '', bodies_pruned_at = now() WHERE id = $1`, [pruned]);
    const refusals: [string[], string][] = [
      [['--mail', 'x'], '--mail must be a mail id (email_outbox)'],
      [['--since', 'yesterday'], '--since must be a date as YYYY-MM-DD or an ISO 8601 date-time'],
      [['--mail', '99999999'], 'mail 99999999 does not exist'],
      [['--mail', String(sent)], `mail ${sent} is sent, not failed`],
      [['--mail', String(pruned)], `mail ${pruned} was written more than ${limits.mailBodyRetentionDays} days ago and its text is gone: \`trustfare mail render --transaction ${paid[2]} --kind receipt --language enGB --out FILE\` renders it again`],
    ];
    for (const [args, message] of refusals) {
      const answer = await cli(url, ['mail', 'resend', ...args]);
      expect([answer.code, answer.stderr], args.join(' ')).toEqual([1, `trustfare mail resend: ${message}`]);
    }
    expect((await cli(url, ['mail', 'resend', '--mail', String(old)])).json).toEqual({ resent: [old], requested: [], more: false });
    expect(await t.db.one('SELECT status, attempts FROM email_outbox WHERE id = $1', [old])).toEqual({ status: 'pending', attempts: 0 });
    // Since yesterday: the recent one; the old one is pending already, the pruned one has no text to send.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect((await cli(url, ['mail', 'resend', '--since', yesterday])).json).toEqual({ resent: [recent], requested: [], more: false });
    expect((await cli(url, ['mail', 'deliver'])).json).toMatchObject({ claimed: 2, sent: 2, failed: 0 });
    const rows = await t.db.query<{ id: number; status: string; attempts: number }>('SELECT id, status, attempts FROM email_outbox WHERE id = ANY($1)', [[old, recent, pruned]]);
    expect(Object.fromEntries(rows.map((row) => [row.id, [row.status, row.attempts]]))).toEqual({ [old!]: ['sent', 1], [recent!]: ['sent', 1], [pruned!]: ['failed', limits.mailAttemptsMax] });
    // Bounded: at most `count` a run, oldest first, and it says more are left.
    await t.db.query(`UPDATE email_outbox SET status = 'failed' WHERE id = ANY($1)`, [[old, recent]]);
    expect(await resendFailedMails(t.db, { since: new Date(0) }, { count: 1, now: new Date() })).toEqual({ resent: [old], requested: [], more: true });
    expect(await resendFailedMails(t.db, { since: new Date(0) }, { count: 1, now: new Date() })).toEqual({ resent: [recent], requested: [], more: false });
    expect((await cli(url, ['mail', 'deliver'])).json).toMatchObject({ sent: 2 });
  });

  it('failed lists the failed mails written since a time, oldest first, with the recipients still owed each and why, for resend', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const site = await createSite(t.db);
    const channelId = await insertChannel(t.db, site, { primaryMail: 'ops@owed.example', bccTransactionalMails: true });
    const paid: number[] = [];
    for (const name of ['greylisted', 'refused', 'fine']) paid.push(await paidWithMailsRequested(t.db, site, { channelId, total: 4600, payeeEmail: `${name}@example.com` }));
    expect((await cli(url, ['mail', 'deliver'])).json).toMatchObject({ sent: 3 });
    const [greylisted, refused] = await Promise.all(paid.map(async (transactionId) => (await t.db.one<{ id: number }>('SELECT id FROM email_outbox WHERE transaction_id = $1', [transactionId])).id));
    // As the delivery job leaves them: one the relay still deferred for the payer at the last attempt, one refused for good.
    await t.db.query(`UPDATE email_outbox SET status = 'failed', sent_at = NULL, retry_recipients = '{greylisted@example.com}', last_error = 'still deferred at the last attempt (8): greylisted@example.com' WHERE id = $1`, [greylisted]);
    await t.db.query(`UPDATE email_outbox SET status = 'failed', sent_at = NULL, last_error = '550 mailbox unavailable' WHERE id = $1`, [refused]);
    const listed = await cli(url, ['mail', 'failed', '--since', since]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json).toEqual({
      mails: [
        { id: greylisted, transaction_id: paid[0], kind: 'receipt', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/), owed_to: ['greylisted@example.com'], last_error: 'still deferred at the last attempt (8): greylisted@example.com' },
        { id: refused, transaction_id: paid[1], kind: 'receipt', created_at: expect.any(String), owed_to: ['refused@example.com', 'ops@owed.example'], last_error: '550 mailbox unavailable' },
      ],
      more: false,
    });
    expect((await cli(url, ['mail', 'failed', '--since', new Date(Date.now() + 60_000).toISOString()])).json).toEqual({ mails: [], more: false });
    // What resend then sends, to whom the list said.
    expect((await cli(url, ['mail', 'resend', '--since', since])).json).toEqual({ resent: [greylisted, refused], requested: [], more: false });
    expect((await cli(url, ['mail', 'deliver'])).json).toMatchObject({ sent: 2, failed: 0 });
    expect((await cli(url, ['mail', 'failed', '--since', since])).json).toEqual({ mails: [], more: false });
  });

  it('resend renders a mail stored unrendered before session 28 from its transaction now, by id or since a time, and deliver sends it', async () => {
    const site = await createSite(t.db);
    const channelId = await insertChannel(t.db, site, {});
    const paid: number[] = [];
    for (const name of ['byid', 'bysince']) paid.push(await paidWithMailsRequested(t.db, site, { channelId, total: 4500, reference: `UNR-${name}`, payeeEmail: `${name}@example.com` }));
    expect((await cli(url, ['mail', 'deliver'])).json).toMatchObject({ sent: 2 });
    // As a template that threw was stored before session 28: failed, '(not rendered)', no text; it
    // holds the transaction's one place for a receipt, so no request can write the receipt again.
    const [byId, bySince] = await Promise.all(paid.map(async (transactionId) => (await t.db.one<{ id: number }>(
      `UPDATE email_outbox SET status = 'failed', attempts = 0, sent_at = NULL, subject = '(not rendered)', text_body = '', html_body = '', last_error = 'rendering failed: boom'
        WHERE transaction_id = $1 RETURNING id`, [transactionId])).id));
    expect((await cli(url, ['mail', 'resend', '--mail', String(byId)])).json).toEqual({ resent: [], requested: [byId], more: false });
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect((await cli(url, ['mail', 'resend', '--since', yesterday])).json).toEqual({ resent: [], requested: [bySince], more: false });
    expect((await cli(url, ['mail', 'deliver'])).json).toMatchObject({ requests: 2, rendered: 2, sent: 2, failed: 0, errors: [] });
    const rows = await t.db.query<{ transaction_id: number; status: string; subject: string; text_body: string }>(
      'SELECT transaction_id, status, subject, text_body FROM email_outbox WHERE transaction_id = ANY($1) ORDER BY transaction_id', [paid]);
    expect(rows.map((row) => [row.transaction_id, row.status, row.subject])).toEqual(paid.map((transactionId) => [transactionId, 'sent', expect.stringMatching(/^Your payment receipt from /)]));
    expect(rows.map((row) => /UNR-\w+/.exec(row.text_body)?.[0])).toEqual(['UNR-byid', 'UNR-bysince']);
  });

  it('deliver sends due outbox mail through the configured transport (.eml files by default)', async () => {
    const site = await createSite(t.db);
    const channelId = await insertChannel(t.db, site, {});
    const transactionId = await paidWithMailsRequested(t.db, site, { channelId, total: 4200, payeeEmail: 'cli@example.com' });
    const answer = await cli(url, ['mail', 'deliver']);
    expect(answer.code).toBe(0);
    expect(answer.json).toMatchObject({ sent: 1, failed: 0 });
    const row = await t.db.one<{ status: string; delivery_id: string }>('SELECT status, delivery_id FROM email_outbox WHERE transaction_id = $1', [transactionId]);
    expect(row.status).toBe('sent');
    expect(row.delivery_id.startsWith(path.join(testEnv.DATA_DIR!, 'mail'))).toBe(true);
    expect(parseMail(readFileSync(row.delivery_id, 'utf8')).headers.get('to')).toBe('cli@example.com');
  });
});
