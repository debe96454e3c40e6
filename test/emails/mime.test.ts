import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { composeMessage, envelopeRecipients, quotedPrintable, type MimeMail } from '../../src/domain/emails/mime.js';
import { renderMail } from '../../src/domain/emails/templates.js';
import { sampleMailData } from '../../src/domain/emails/sample.js';
import { languageCodes, localeOf } from '../../src/i18n/catalogue.js';
import { createMailer } from '../../src/domain/emails/transport.js';
import { tempDirForTest } from '../support/temp-dir.js';
import { loadConfig } from '../../src/config.js';
import { testEnv } from '../support/context.js';
import { parseMail } from './support/mime.js';

const base: MimeMail = {
  from: { name: 'Sunny Tours', address: 'payments@trustfare.test' },
  to: ['anna@example.com'],
  bcc: ['ops@tours.example'],
  replyTo: 'desk@tours.example',
  subject: 'Your payment receipt',
  text: 'Paid.\n',
  html: '<p>Paid.</p>\n',
  messageId: '<receipt.1.2@trustfare.test>',
  locale: 'en-GB',
  date: new Date('2026-11-25T22:44:21Z'),
};

function lines(message: Buffer): string[] {
  const raw = message.toString('latin1');
  // Every line ends in CRLF: no bare LF or CR anywhere.
  expect(raw.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  return raw.split('\r\n');
}

describe('composeMessage', () => {
  it('writes the headers a reader sees, Bcc only for the kept copy', () => {
    const kept = parseMail(composeMessage(base, { bccHeader: true }).toString('utf8'));
    expect(Object.fromEntries(kept.headers)).toMatchObject({
      from: 'Sunny Tours <payments@trustfare.test>', to: 'anna@example.com', bcc: 'ops@tours.example', 'reply-to': 'desk@tours.example',
      subject: 'Your payment receipt', 'message-id': '<receipt.1.2@trustfare.test>', date: 'Wed, 25 Nov 2026 22:44:21 +0000',
      'content-language': 'en-GB', 'auto-submitted': 'auto-generated', 'mime-version': '1.0',
    });
    expect(kept.text).toBe('Paid.\n');
    expect(kept.html).toBe('<p>Paid.</p>\n');
    const sent = parseMail(composeMessage(base, { bccHeader: false }).toString('utf8'));
    expect(sent.headers.has('bcc')).toBe(false);
    expect(sent.headers.get('to')).toBe('anna@example.com');
  });

  it('every kind in every language reads back as rendered, within the line lengths', () => {
    for (const language of languageCodes) {
      for (const kind of ['receipt', 'refund', 'failure', 'chargeback', 'chargeback-notice'] as const) {
        const rendered = renderMail(sampleMailData(kind, language));
        const message = composeMessage({ ...base, ...rendered, from: { name: sampleMailData(kind, language).company, address: 'payments@trustfare.test' }, locale: localeOf(language) }, { bccHeader: true });
        const mail = parseMail(message.toString('utf8'));
        expect(mail.subject).toBe(rendered.subject);
        expect(mail.text).toBe(rendered.text);
        expect(mail.html).toBe(rendered.html);
        for (const line of lines(message)) expect(line.length).toBeLessThanOrEqual(78);
      }
    }
  });

  it('any subject, name and bodies read back exactly; headers stay headers; lines stay within the limits', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 600 }), (subject, name, body) => {
        const message = composeMessage({ ...base, subject, from: { ...base.from, name }, text: body, html: `<p>${body}</p>` }, { bccHeader: false });
        const mail = parseMail(message.toString('utf8'));
        // A body's CRLF and LF are both a line break; the reader sees LF.
        const asRead = (value: string) => value.replace(/\r\n/g, '\n');
        expect(mail.subject).toBe(subject);
        expect(mail.text).toBe(asRead(body));
        expect(mail.html).toBe(asRead(`<p>${body}</p>`));
        expect(mail.headers.has('bcc')).toBe(false);
        // The display name reads back as a reader reads it: decoded, or unquoted.
        const from = mail.headers.get('from')!;
        if (name === '') {
          expect(from).toBe('payments@trustfare.test');
        } else {
          expect(from.endsWith(' <payments@trustfare.test>')).toBe(true);
          const shown = from.slice(0, -' <payments@trustfare.test>'.length);
          expect(/^".*"$/s.test(shown) ? shown.slice(1, -1).replace(/\\(.)/gs, '$1') : shown).toBe(name);
        }
        for (const line of lines(message)) expect(line.length).toBeLessThanOrEqual(78);
      }),
      { numRuns: 300 },
    );
  });

  it('a subject carrying a line break and a header cannot add a header', () => {
    const message = composeMessage({ ...base, subject: 'Receipt\r\nBcc: thief@example.com', bcc: [] }, { bccHeader: true });
    const mail = parseMail(message.toString('utf8'));
    expect(mail.headers.has('bcc')).toBe(false);
    expect(mail.subject).toBe('Receipt\r\nBcc: thief@example.com');
  });

  it('writes an internationalised domain in its ASCII form, in the headers and the envelope', () => {
    const mail = { ...base, to: ['anna@bücher.de'], bcc: ['ops@Straße.example'] };
    const read = parseMail(composeMessage(mail, { bccHeader: true }).toString('utf8'));
    expect(read.headers.get('to')).toBe('anna@xn--bcher-kva.de');
    expect(read.headers.get('bcc')).toBe('ops@xn--strae-oqa.example');
    expect(envelopeRecipients(mail)).toEqual(['anna@xn--bcher-kva.de', 'ops@xn--strae-oqa.example']);
  });

  it('refuses an address that is not one, whatever the field', () => {
    for (const mail of [
      { ...base, to: ['anna@example.com\r\nBcc: thief@example.com'] },
      { ...base, bcc: ['Ops <ops@tours.example>'] },
      { ...base, replyTo: 'desk' },
      { ...base, from: { name: 'Shop', address: 'payments@trustfare.test>' } },
      // A local part beyond atext would need quoting or SMTPUTF8.
      { ...base, to: ['müller@example.de'] },
    ]) {
      expect(() => composeMessage(mail, { bccHeader: true })).toThrow(/not a mail address/);
    }
  });
});

describe('quotedPrintable', () => {
  it('keeps trailing blanks of a line, encodes "=" and 8-bit bytes, and breaks long lines softly', () => {
    expect(quotedPrintable('a \nb\t\r\nc ').toString()).toBe('a=20\r\nb=09\r\nc=20');
    expect(quotedPrintable('1+1=2 €').toString()).toBe('1+1=3D2 =E2=82=AC');
    const long = quotedPrintable('x'.repeat(200)).toString().split('\r\n');
    expect(long.map((line) => line.length)).toEqual([76, 76, 50]);
    expect(long.slice(0, 2).every((line) => line.endsWith('='))).toBe(true);
    // A line of exactly 76 needs no soft break.
    expect(quotedPrintable('y'.repeat(76)).toString()).toBe('y'.repeat(76));
    // An encoded byte is never split by a soft break.
    expect(quotedPrintable('é'.repeat(40)).toString().split('\r\n').every((line) => /^(=[0-9A-F]{2})*=?$/.test(line))).toBe(true);
  });
});

describe('mailers', () => {
  it('a mail whose address cannot be written fails for good, without a file', async () => {
    const dataDir = tempDirForTest('mail');
    const mailer = createMailer({ dataDir, smtpUrl: undefined });
    await expect(mailer.send({ ...base, to: ['not an address'] })).rejects.toMatchObject({ permanent: true, message: expect.stringMatching(/not a mail address/) });
  });
});

describe('MAIL_FROM', () => {
  it('is refused at start-up unless headers can carry it; by default it is no-reply@ the host of BASE_URL', () => {
    for (const value of ['Shop <shop@example.com>', 'shop@exämple.com', 'a(b)@example.com', 'shop@example.com;x@y.z']) {
      expect(() => loadConfig({ ...testEnv, MAIL_FROM: value })).toThrow(/MAIL_FROM/);
    }
    expect(loadConfig({ ...testEnv, MAIL_FROM: ' pay+ments@example.com ' }).mailFrom).toBe('pay+ments@example.com');
    expect(loadConfig({ ...testEnv, MAIL_FROM: '', BASE_URL: 'https://pay.example.com' }).mailFrom).toBe('no-reply@pay.example.com');
    expect(loadConfig({ ...testEnv, MAIL_FROM: '', BASE_URL: 'http://[::1]:3000' }).mailFrom).toBe('no-reply@localhost');
  });
});
