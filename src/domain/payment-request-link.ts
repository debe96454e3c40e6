import { createHmac, timingSafeEqual } from 'node:crypto';
import { limits } from '../limits.js';

/**
 * Signed, expiring links to the hosted payment request page of a booking:
 * `${baseUrl}/pay/<token>`, token `<siteId>.<bookingId>.<expiresUnixSeconds>.<signature>`, the
 * signature being base64url HMAC-SHA256(signingSecret, "payment-request|site|booking|expires").
 * Nothing is stored: the page verifies the token and then loads the booking of that site.
 */

export interface PaymentRequestClaims {
  siteId: number;
  bookingId: number;
  expiresAt: Date;
}

const purpose = 'payment-request';
const tokenPattern = /^([1-9][0-9]{0,15})\.([1-9][0-9]{0,15})\.([1-9][0-9]{0,11})\.([A-Za-z0-9_-]{43})$/;

function signature(secret: Buffer, siteId: number, bookingId: number, expiresUnix: number): string {
  return createHmac('sha256', secret).update(`${purpose}|${siteId}|${bookingId}|${expiresUnix}`).digest('base64url');
}

export function signPaymentRequestToken(secret: Buffer, claims: PaymentRequestClaims): string {
  const expiresUnix = Math.floor(claims.expiresAt.getTime() / 1000);
  return `${claims.siteId}.${claims.bookingId}.${expiresUnix}.${signature(secret, claims.siteId, claims.bookingId, expiresUnix)}`;
}

/**
 * The claims of a token this service signed, expired or not; null for anything else (never
 * throws). Only the expired page's words use an expired one (the booking's language, who to ask).
 */
export function authenticPaymentRequestToken(secret: Buffer, token: string): PaymentRequestClaims | null {
  const match = tokenPattern.exec(token);
  if (!match) return null;
  const siteId = Number(match[1]);
  const bookingId = Number(match[2]);
  const expiresUnix = Number(match[3]);
  if (!Number.isSafeInteger(siteId) || !Number.isSafeInteger(bookingId)) return null;
  const expected = Buffer.from(signature(secret, siteId, bookingId, expiresUnix));
  const given = Buffer.from(match[4]!);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  return { siteId, bookingId, expiresAt: new Date(expiresUnix * 1000) };
}

/** The claims of an authentic, unexpired token; null for anything else (never throws). */
export function verifyPaymentRequestToken(secret: Buffer, token: string, now: Date): PaymentRequestClaims | null {
  const claims = authenticPaymentRequestToken(secret, token);
  return claims && now.getTime() <= claims.expiresAt.getTime() ? claims : null;
}

/**
 * Links stay valid until 23:59:59 GMT on the day after the booking's end date (`YYYY-MM-DD`), and
 * at least `limits.paymentRequestLifetimeMinSeconds` after they are issued.
 */
export function paymentRequestExpiry(dateEnd: string, issuedAt: Date): Date {
  const [year, month, day] = dateEnd.split('-').map(Number) as [number, number, number];
  const afterEndDate = Date.UTC(year, month - 1, day + 1, 23, 59, 59);
  const leastLifetime = Math.floor(issuedAt.getTime() / 1000) * 1000 + limits.paymentRequestLifetimeMinSeconds * 1000;
  return new Date(Math.max(afterEndDate, leastLifetime));
}

export function paymentRequestUrl(options: { baseUrl: string; secret: Buffer; siteId: number; bookingId: number; dateEnd: string; issuedAt: Date }): string {
  const token = signPaymentRequestToken(options.secret, { siteId: options.siteId, bookingId: options.bookingId, expiresAt: paymentRequestExpiry(options.dateEnd, options.issuedAt) });
  return `${options.baseUrl}/pay/${token}`;
}
