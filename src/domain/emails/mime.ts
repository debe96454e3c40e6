import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';

/**
 * The RFC 5322 message of one mail: headers, then a multipart/alternative body with the text and
 * HTML parts, both UTF-8 in quoted-printable (RFC 2045), every line ending in CRLF.
 *
 * Why not nodemailer's composer (docs/emails.md "Throughput"): it builds each message through a
 * tree of streams, 410 µs of CPU for a 3 KB receipt (660 µs with its stream transport), about a
 * fifth of the service's busy CPU while it took purchases and sent their receipts. The messages
 * the service sends have one fixed shape, which this writes in one pass over the bytes.
 * nodemailer still speaks SMTP (transport.ts sends this message as its raw source).
 */
export interface MimeMail {
  from: { name: string; address: string };
  to: readonly string[];
  /** Written as a header only with `bccHeader` (the .eml files kept for review); SMTP sends Bcc in the envelope alone. */
  bcc: readonly string[];
  replyTo: string | null;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  /** BCP 47, sent as Content-Language. */
  locale: string;
  date: Date;
}

export function composeMessage(mail: MimeMail, options: { bccHeader: boolean }): Buffer {
  const boundary = `=_trustfare_${randomBytes(12).toString('hex')}`;
  const headers = [
    `Content-Language: ${headerToken(mail.locale)}`,
    'Auto-Submitted: auto-generated',
    `From: ${mailbox(mail.from.name, mail.from.address)}`,
    ...(mail.to.length > 0 ? [`To: ${addressList(mail.to)}`] : []),
    ...(options.bccHeader && mail.bcc.length > 0 ? [`Bcc: ${addressList(mail.bcc)}`] : []),
    ...(mail.replyTo ? [`Reply-To: ${address(mail.replyTo)}`] : []),
    `Subject: ${unstructured(mail.subject, 'Subject: '.length)}`,
    `Message-ID: ${messageIdOf(mail.messageId)}`,
    `Date: ${rfc5322Date(mail.date)}`,
    'MIME-Version: 1.0',
    // The boundary holds "=_", which quoted-printable output never does: no part can contain it.
    `Content-Type: multipart/alternative;\r\n boundary="${boundary}"`,
  ];
  const part = (type: string) => `Content-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n`;
  return Buffer.concat([
    Buffer.from(`${headers.join('\r\n')}\r\n\r\n--${boundary}\r\n${part('text/plain')}`, 'latin1'),
    quotedPrintable(mail.text),
    Buffer.from(`\r\n--${boundary}\r\n${part('text/html')}`, 'latin1'),
    quotedPrintable(mail.html),
    Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1'),
  ]);
}

/** The envelope of an SMTP send: every To and Bcc recipient, checked as the headers are. */
export function envelopeRecipients(mail: Pick<MimeMail, 'to' | 'bcc'>): string[] {
  return [...mail.to, ...mail.bcc].map(address);
}

/** Anything else in a header is a programming error or an attack on the headers: refused. */
export class MimeHeaderError extends Error {}

// An addr-spec a header carries as it is: RFC 5322 atext and dots before the "@", an ASCII
// domain after it.
const localPartPattern = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+$/;
const domainPattern = /^[A-Za-z0-9.-]+$/;

/**
 * The address as a header carries it: an internationalised domain in its ASCII (punycode) form,
 * as nodemailer wrote it; undefined when a header cannot carry it (a local part outside atext
 * would need quoting or SMTPUTF8, which the service does not send).
 */
export function sendableAddress(value: string): string | undefined {
  const at = value.lastIndexOf('@');
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (at <= 0 || !localPartPattern.test(local)) return undefined;
  if (domainPattern.test(domain)) return value;
  const ascii = domainToASCII(domain);
  return ascii !== '' && domainPattern.test(ascii) ? `${local}@${ascii}` : undefined;
}

function address(value: string): string {
  const sendable = sendableAddress(value);
  if (sendable === undefined) throw new MimeHeaderError(`not a mail address that can be sent: ${JSON.stringify(value)}`);
  return sendable;
}

function addressList(values: readonly string[]): string {
  return values.map(address).join(',\r\n ');
}

function mailbox(name: string, addr: string): string {
  if (name === '') return address(addr);
  const phrase = displayName(name);
  // After encoded words the address takes a line of its own: the last word's line stays short.
  return `${phrase}${phrase.startsWith(wordPrefix) ? '\r\n ' : ' '}<${address(addr)}>`;
}

const printableAscii = /^[\x20-\x7e]*$/;
// Words of RFC 5322 atext between single spaces: a phrase that needs no quotes.
const plainPhrase = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+( [A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// Longer names go as encoded words, which fold: the From line stays short.
const plainNameLengthMax = 40;

/**
 * As it is when it is a plain phrase, a quoted string when it is other printable ASCII, else
 * encoded words (RFC 2047 5(3)). "=?" is always quoted: a reader would decode it as a word.
 */
function displayName(name: string): string {
  if (name.length <= plainNameLengthMax && printableAscii.test(name)) {
    return plainPhrase.test(name) && !name.includes('=?') ? name : `"${name.replace(/["\\]/g, '\\$&')}"`;
  }
  return encodedWords(name, 'From: '.length);
}

/**
 * Subject: as it is when short printable ASCII, else encoded words (never a bare line break).
 * Blanks at either end are encoded too: readers drop them from a plain header.
 */
function unstructured(value: string, used: number): string {
  if (printableAscii.test(value) && used + value.length <= lineLengthMax && !value.includes('=?') && !/^ | $/.test(value)) return value;
  return encodedWords(value, used);
}

// RFC 5322 2.1.1: lines SHOULD stay within 78 characters; RFC 2047: an encoded word within 75.
const lineLengthMax = 78;
const encodedWordMax = 75;
const wordPrefix = '=?UTF-8?B?';
const wordSuffix = '?=';

/**
 * Base64 encoded words, folded onto continuation lines, each holding whole characters
 * (RFC 2047 5: a character is never split between two words).
 */
function encodedWords(value: string, used: number): string {
  const words: string[] = [];
  let chunk = '';
  let chunkBytes = 0;
  // The first word shares its line with the header's name.
  let bytesMax = wordBytesMax(Math.min(encodedWordMax, lineLengthMax - used));
  for (const character of value) {
    const bytes = Buffer.byteLength(character);
    if (chunkBytes + bytes > bytesMax && chunk !== '') {
      words.push(encodedWord(chunk));
      chunk = '';
      chunkBytes = 0;
      bytesMax = wordBytesMax(encodedWordMax);
    }
    chunk += character;
    chunkBytes += bytes;
  }
  if (chunk !== '' || words.length === 0) words.push(encodedWord(chunk));
  return words.join('\r\n ');
}

function encodedWord(text: string): string {
  return `${wordPrefix}${Buffer.from(text, 'utf8').toString('base64')}${wordSuffix}`;
}

/** The most bytes whose base64 fits in an encoded word of `length` characters. */
function wordBytesMax(length: number): number {
  return Math.max(3, Math.floor((length - wordPrefix.length - wordSuffix.length) / 4) * 3);
}

function messageIdOf(value: string): string {
  if (!/^<[^\s<>]+@[^\s<>]+>$/.test(value)) throw new MimeHeaderError(`not a Message-ID: ${JSON.stringify(value)}`);
  return value;
}

function headerToken(value: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(value)) throw new MimeHeaderError(`not a language tag: ${JSON.stringify(value)}`);
  return value;
}

/** `Wed, 25 Nov 2026 22:44:21 +0000` (RFC 5322 3.3; toUTCString's "GMT" is the obsolete form). */
export function rfc5322Date(date: Date): string {
  return date.toUTCString().replace(/ GMT$/, ' +0000');
}

// Quoted-printable (RFC 2045 6.7): lines of at most 76 characters, a soft break "=" before the
// limit, line breaks kept as CRLF, and a space or tab before a break encoded (rule 3).
const qpLineMax = 76;
const hexDigits = Buffer.from('0123456789ABCDEF', 'latin1');
const EQUALS = 0x3d;
const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const LF = 0x0a;

/** Whether a byte goes as it is: printable ASCII except "=", and space and tab (rule 3 aside). */
const literal = new Uint8Array(256);
for (let byte = 0x21; byte <= 0x7e; byte++) literal[byte] = byte === EQUALS ? 0 : 1;
literal[SPACE] = 1;
literal[TAB] = 1;

export function quotedPrintable(text: string): Buffer {
  const input = Buffer.from(text, 'utf8');
  const end = input.length;
  // Worst case: every byte as =XX, plus a soft break (3 bytes) per 25 of them.
  const output = Buffer.allocUnsafe(end * 3 + Math.ceil(end / 24) * 3 + 3);
  let length = 0;
  let column = 0;
  for (let index = 0; index < end; index++) {
    const byte = input[index]!;
    if (byte === LF || (byte === CR && input[index + 1] === LF)) {
      if (byte === CR) index += 1;
      output[length++] = CR;
      output[length++] = LF;
      column = 0;
      continue;
    }
    // Whether the line ends after this byte is asked only when it matters (a blank, or the last
    // column): most bytes are plain and mid-line, and this loop is most of a message's cost.
    let width = literal[byte] === 1 ? 1 : 3;
    if (width === 1 && (byte === SPACE || byte === TAB) && lineEndsAfter(input, index)) width = 3;
    // Room for the character and, unless the line ends after it, a soft break's "=".
    if (column + width > qpLineMax - 1 && (column + width > qpLineMax || !lineEndsAfter(input, index))) {
      output[length++] = EQUALS;
      output[length++] = CR;
      output[length++] = LF;
      column = 0;
    }
    if (width === 1) {
      output[length++] = byte;
    } else {
      output[length++] = EQUALS;
      output[length++] = hexDigits[byte >> 4]!;
      output[length++] = hexDigits[byte & 0x0f]!;
    }
    column += width;
  }
  return output.subarray(0, length);
}

function lineEndsAfter(input: Buffer, index: number): boolean {
  const next = input[index + 1];
  return next === undefined || next === LF || (next === CR && input[index + 2] === LF);
}
