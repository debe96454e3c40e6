/**
 * One email address: a local part, `@`, a dotted host name; the only real check is delivery, and
 * lengths are bounded separately. An address the service could never deliver to is refused where
 * it is given, not found out when a receipt is silently not sent (emails/mime.ts, sendableAddress):
 * - the local part is what a mail header carries unquoted (RFC 5322 atext and dots, ASCII): the
 *   service sends without SMTPUTF8;
 * - each label of the domain is letters, digits and inner hyphens. Letters of any script are
 *   taken (an internationalised domain is sent in its punycode form, and `xn--` labels are
 *   ASCII), with the combining marks some need; never a control, format or bidi character
 *   (`\u0007`, `\u200b`, `\u202e`), punctuation or a space, which no host name holds.
 * One pattern for every address the service takes: bookings (and the modal's), payee_email,
 * the channels' mail lists, card holders (card capture, the vaulting app) and users, and the
 * hosted pages' card form, which imports this module (no dependencies, so it bundles small) to
 * refuse at the field what the server would refuse after the card was typed.
 */
// A label is at most 63 characters (DNS): the lookahead stops at what ends one, a list's commas and
// spaces included, so an address inside a list is measured alone.
const emailDomainLabel = '(?![^.@,;\\s]{64})[\\p{L}\\p{Nd}](?:-*[\\p{L}\\p{M}\\p{Nd}])*';
// The local part is a dot-atom of at most 64 characters (RFC 5321): no leading, trailing or
// doubled dot (`.a..b.@x` was taken, and no server accepts it).
const emailAtom = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
export const emailPattern = `(?![^@,;\\s]{65})${emailAtom}(?:\\.${emailAtom})*@${emailDomainLabel}(?:\\.${emailDomainLabel})+`;

const emailAddressRegExp = new RegExp(`^${emailPattern}$`, 'u');

/** Whether `value` is one email address by emailPattern: for inputs no schema checks. */
export function isEmailAddress(value: string): boolean {
  return emailAddressRegExp.test(value);
}
