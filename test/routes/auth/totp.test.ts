import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { base32Decode, base32Encode, matchTotp, otpauthUri, totpCode } from '../../../src/domain/users/totp.js';

// RFC 6238 appendix B: the SHA-1 secret is ASCII "12345678901234567890"; 8-digit values there,
// whose last 6 digits are the 6-digit codes.
const rfcSecret = base32Encode(Buffer.from('12345678901234567890'));
const rfcVectors: [number, string][] = [
  [59, '287082'],
  [1111111109, '081804'],
  [1111111111, '050471'],
  [1234567890, '005924'],
  [2000000000, '279037'],
  [20000000000, '353130'],
];

describe('TOTP (RFC 6238)', () => {
  it.each(rfcVectors)('matches the RFC test vector at t=%i', (seconds, code) => {
    expect(totpCode(rfcSecret, Math.floor(seconds / 30))).toBe(code);
  });

  it('round-trips base32', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      expect([...base32Decode(base32Encode(bytes))]).toEqual([...bytes]);
    }));
  });

  it('refuses codes of used steps and malformed codes', () => {
    const at = new Date(1111111111 * 1000);
    const step = Math.floor(1111111111 / 30);
    expect(matchTotp(rfcSecret, '050471', at, null)).toBe(step);
    expect(matchTotp(rfcSecret, '050471', at, step)).toBeNull();
    expect(matchTotp(rfcSecret, '50471', at, null)).toBeNull();
    expect(matchTotp(rfcSecret, '05047a', at, null)).toBeNull();
  });

  it('builds an otpauth URI authenticator apps read', () => {
    expect(otpauthUri({ secret: 'JBSWY3DPEHPK3PXP', username: 'ana', issuer: 'trustfare' })).toBe(
      'otpauth://totp/trustfare%3Aana?secret=JBSWY3DPEHPK3PXP&issuer=trustfare&algorithm=SHA1&digits=6&period=30',
    );
  });
});
