import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { paymentRequestExpiry, paymentRequestUrl, signPaymentRequestToken, verifyPaymentRequestToken } from '../../src/domain/payment-request-link.js';

const secret = randomBytes(32);

describe('payment request links', () => {
  it('expire at 23:59:59 GMT on the day after the end date, and never less than a week after they are issued', () => {
    expect(paymentRequestExpiry('2026-12-31', new Date('2026-11-21T10:00:00Z')).toISOString()).toBe('2027-01-01T23:59:59.000Z');
    // Asked for after travel, to collect a balance: a week from now, not already expired.
    expect(paymentRequestExpiry('2026-11-01', new Date('2026-11-21T10:00:00.500Z')).toISOString()).toBe('2026-11-28T10:00:00.000Z');
    expect(paymentRequestExpiry('2026-11-22', new Date('2026-11-21T10:00:00Z')).toISOString()).toBe('2026-11-28T10:00:00.000Z');
  });

  it('verify until expiry and not after', () => {
    const token = signPaymentRequestToken(secret, { siteId: 3, bookingId: 42, expiresAt: paymentRequestExpiry('2026-12-31', new Date('2026-11-21T10:00:00Z')) });
    expect(verifyPaymentRequestToken(secret, token, new Date('2027-01-01T23:59:59Z'))).toEqual({ siteId: 3, bookingId: 42, expiresAt: new Date('2027-01-01T23:59:59Z') });
    expect(verifyPaymentRequestToken(secret, token, new Date('2027-01-02T00:00:00Z'))).toBeNull();
  });

  it('refuse tampered tokens, other keys and junk', () => {
    const token = signPaymentRequestToken(secret, { siteId: 3, bookingId: 42, expiresAt: new Date('2030-01-01T00:00:00Z') });
    const now = new Date('2026-01-01T00:00:00Z');
    const [site, booking, expires, signature] = token.split('.');
    expect(verifyPaymentRequestToken(secret, [site, '43', expires, signature].join('.'), now)).toBeNull();
    expect(verifyPaymentRequestToken(secret, [site, booking, String(Number(expires) + 86400), signature].join('.'), now)).toBeNull();
    expect(verifyPaymentRequestToken(randomBytes(32), token, now)).toBeNull();
    expect(verifyPaymentRequestToken(secret, '', now)).toBeNull();
    expect(verifyPaymentRequestToken(secret, token + 'x', now)).toBeNull();
  });

  it('build absolute URLs under /pay/', () => {
    const url = paymentRequestUrl({ baseUrl: 'https://pay.example', secret, siteId: 1, bookingId: 2, dateEnd: '2026-05-01', issuedAt: new Date('2026-04-01T00:00:00Z') });
    expect(url).toMatch(/^https:\/\/pay\.example\/pay\/1\.2\.\d+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyPaymentRequestToken(secret, url.split('/pay/')[1]!, new Date('2026-05-01T12:00:00Z'))?.bookingId).toBe(2);
  });
});
