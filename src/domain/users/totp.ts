import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { limits } from '../../limits.js';

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226 HOTP): HMAC-SHA1, 30-second steps,
 * 6 digits, the format every authenticator app reads from an `otpauth://` URI.
 */

const digits = 6;
const base32Alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let output = '';
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      output += base32Alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) output += base32Alphabet[(value << (5 - bits)) & 31];
  return output;
}

export function base32Decode(text: string): Buffer {
  const clean = text.toUpperCase().replace(/=+$/, '').replace(/\s+/g, '');
  let bits = 0;
  let value = 0;
  const bytes: number[] = [];
  for (const char of clean) {
    const index = base32Alphabet.indexOf(char);
    if (index < 0) throw new Error('invalid base32 character');
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** A new 160-bit secret, base32-encoded (the size RFC 4226 recommends for HMAC-SHA1). */
export function generateTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

export function totpStep(at: Date): number {
  return Math.floor(at.getTime() / 1000 / limits.totpStepSeconds);
}

/** The HOTP value of one time step (RFC 4226 section 5.3, dynamic truncation). */
export function totpCode(secretBase32: string, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', base32Decode(secretBase32)).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(binary).padStart(digits, '0');
}

/**
 * The time step a code matches within the allowed drift, or null. Steps at or before
 * `lastUsedStep` are refused so an observed code cannot be replayed.
 */
export function matchTotp(secretBase32: string, code: string, at: Date, lastUsedStep: number | null): number | null {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const current = totpStep(at);
  for (let drift = -limits.totpDriftSteps; drift <= limits.totpDriftSteps; drift++) {
    const step = current + drift;
    if (lastUsedStep !== null && step <= lastUsedStep) continue;
    if (timingSafeEqual(Buffer.from(totpCode(secretBase32, step)), Buffer.from(code))) return step;
  }
  return null;
}

export function otpauthUri(options: { secret: string; username: string; issuer: string }): string {
  const label = encodeURIComponent(`${options.issuer}:${options.username}`);
  const query = new URLSearchParams({ secret: options.secret, issuer: options.issuer, algorithm: 'SHA1', digits: String(digits), period: String(limits.totpStepSeconds) });
  return `otpauth://totp/${label}?${query.toString()}`;
}

// The secret is stored encrypted (AES-256-GCM) under a key derived from the signing secret,
// bound to the user id, so a database dump alone does not yield working codes.
function secretKey(signingSecret: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', signingSecret, Buffer.alloc(0), 'trustfare totp secret v1', 32));
}

export function sealTotpSecret(signingSecret: Uint8Array, userId: number, secretBase32: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', secretKey(signingSecret), iv);
  cipher.setAAD(Buffer.from(`user:${userId}`));
  const sealed = Buffer.concat([cipher.update(secretBase32, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), sealed.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

export function openTotpSecret(signingSecret: Uint8Array, userId: number, stored: string): string {
  const [version, iv, sealed, tag] = stored.split('.');
  if (version !== 'v1' || !iv || !sealed || !tag) throw new Error('unreadable TOTP secret');
  const decipher = createDecipheriv('aes-256-gcm', secretKey(signingSecret), Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(`user:${userId}`));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
}
