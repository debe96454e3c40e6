import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  CardDecryptionError, fingerprintPan, openCaptureToken, openPan, rewrapDataKey, sealCaptureToken, sealPan, vaultKeysFromSecrets, type VaultKeys,
} from '../../../src/domain/vault/crypto.js';
import { cardTypeFromBin, issuerCountryFromBin, luhnValid } from '../../../src/domain/vault/card-types.js';
import { assertCardDetailsValid } from '../../../src/domain/vault/rules.js';
import { testCards } from '../../../src/processor/sandbox/test-cards.js';
import { ApiError } from '../../../src/http/errors.js';

function keys(active = 'k1', extra: Record<string, Buffer> = {}): VaultKeys {
  return vaultKeysFromSecrets({ cardKeys: { [active]: randomBytes(32), ...extra }, activeCardKeyId: active, cardFingerprintKey: randomBytes(32), signingSecret: randomBytes(32) });
}

const binding = { siteId: 7, cardId: 42 };
const pan = '4111111111111111';

describe('PAN envelope encryption', () => {
  it('round-trips and never contains the PAN', () => {
    const k = keys();
    const sealed = sealPan(k, binding, pan);
    expect(sealed.keyId).toBe('k1');
    expect(sealed.panCiphertext.toString('latin1')).not.toContain(pan);
    expect(openPan(k, binding, sealed)).toBe(pan);
  });

  it('round-trips any PAN and opens only under its own binding (property)', () => {
    const k = keys();
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{12,19}$/), fc.integer({ min: 1, max: 2 ** 40 }), fc.integer({ min: 1, max: 2 ** 40 }), (anyPan, siteId, cardId) => {
        const sealed = sealPan(k, { siteId, cardId }, anyPan);
        expect(openPan(k, { siteId, cardId }, sealed)).toBe(anyPan);
        expect(() => openPan(k, { siteId: siteId + 1, cardId }, sealed)).toThrow(CardDecryptionError);
      }),
      { numRuns: 50 },
    );
  });

  it('uses a fresh data key and iv per record', () => {
    const k = keys();
    const a = sealPan(k, binding, pan);
    const b = sealPan(k, binding, pan);
    expect(a.panCiphertext.equals(b.panCiphertext)).toBe(false);
    expect(a.wrappedKey.equals(b.wrappedKey)).toBe(false);
  });

  it('refuses tampered ciphertext, wrapped key, another site or another record', () => {
    const k = keys();
    const sealed = sealPan(k, binding, pan);
    const flipped = (buffer: Buffer, index: number) => {
      const copy = Buffer.from(buffer);
      copy[index] = copy[index]! ^ 1;
      return copy;
    };
    expect(() => openPan(k, binding, { ...sealed, panCiphertext: flipped(sealed.panCiphertext, 14) })).toThrow(CardDecryptionError);
    expect(() => openPan(k, binding, { ...sealed, panCiphertext: flipped(sealed.panCiphertext, sealed.panCiphertext.length - 1) })).toThrow(CardDecryptionError);
    expect(() => openPan(k, binding, { ...sealed, wrappedKey: flipped(sealed.wrappedKey, 20) })).toThrow(CardDecryptionError);
    expect(() => openPan(k, { ...binding, siteId: 8 }, sealed)).toThrow(CardDecryptionError);
    expect(() => openPan(k, { ...binding, cardId: 43 }, sealed)).toThrow(CardDecryptionError);
    expect(() => openPan(keys(), binding, { ...sealed, keyId: 'k1' })).toThrow(CardDecryptionError);
  });

  it('re-wraps under a new active key and then opens with the new key alone', () => {
    const oldKey = randomBytes(32);
    const before = vaultKeysFromSecrets({ cardKeys: { old: oldKey }, activeCardKeyId: 'old', cardFingerprintKey: randomBytes(32), signingSecret: randomBytes(32) });
    const sealed = sealPan(before, binding, pan);
    const newKey = randomBytes(32);
    const during = { ...before, keys: { fresh: newKey, old: oldKey }, activeKeyId: 'fresh' };
    const rewrapped = rewrapDataKey(during, binding, sealed);
    expect(rewrapped.keyId).toBe('fresh');
    const after = { ...before, keys: { fresh: newKey }, activeKeyId: 'fresh' };
    expect(openPan(after, binding, { ...sealed, ...rewrapped })).toBe(pan);
    expect(() => openPan(after, binding, sealed)).toThrow(/old is not configured/);
  });

  it('fingerprints the same card equally within a site and differently across sites', () => {
    const k = keys();
    expect(fingerprintPan(k, 1, pan).equals(fingerprintPan(k, 1, pan))).toBe(true);
    expect(fingerprintPan(k, 1, pan).equals(fingerprintPan(k, 2, pan))).toBe(false);
    expect(fingerprintPan(k, 1, pan).equals(fingerprintPan(k, 1, '5555555555554444'))).toBe(false);
  });
});

describe('capture tokens', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  const expiresAt = new Date(now.getTime() + 15 * 60_000);

  it('carry the CVV sealed: opened only for the same site and before expiry', () => {
    const k = keys();
    const token = sealCaptureToken(k, { siteId: 7, cardId: 42, cvv: '987', expiresAt });
    expect(token.startsWith('ct_')).toBe(true);
    expect(token).not.toContain('987');
    const opened = openCaptureToken(k, { siteId: 7, token, now });
    expect(opened).toMatchObject({ cardId: 42, cvv: '987' });
    expect(openCaptureToken(k, { siteId: 8, token, now })).toBeNull();
    expect(openCaptureToken(k, { siteId: 7, token, now: expiresAt })).toBeNull();
    expect(openCaptureToken(keys(), { siteId: 7, token, now })).toBeNull();
  });

  it('refuses any altered byte (card id, expiry, ciphertext)', () => {
    const k = keys();
    const token = sealCaptureToken(k, { siteId: 7, cardId: 42, cvv: '987', expiresAt });
    const raw = Buffer.from(token.slice(3), 'base64url');
    for (let index = 0; index < raw.length; index++) {
      const copy = Buffer.from(raw);
      copy[index] = copy[index]! ^ 0x10;
      expect(openCaptureToken(k, { siteId: 7, token: `ct_${copy.toString('base64url')}`, now })).toBeNull();
    }
    expect(openCaptureToken(k, { siteId: 7, token: 'ct_garbage', now })).toBeNull();
  });
});

describe('card numbers', () => {
  it('knows brand and issuer country of every test card, and they pass Luhn', () => {
    const expected: Record<string, [string, string]> = {
      tok_visa: ['visa', 'US'], tok_visa_declined: ['visa', 'US'], tok_mastercard: ['master', 'US'], tok_mastercard_declined: ['master', 'US'],
      tok_amex: ['amex', 'US'], tok_visa_3ds_frictionless: ['visa', 'US'], tok_visa_3ds_challenge: ['visa', 'GB'],
      tok_mastercard_3ds_frictionless: ['master', 'DE'], tok_mastercard_3ds_challenge: ['master', 'DE'], tok_visa_no_answer: ['visa', 'US'],
    };
    expect(testCards).toHaveLength(10);
    for (const card of testCards) {
      expect(luhnValid(card.pan), card.pan).toBe(true);
      expect([cardTypeFromBin(card.pan.slice(0, 6)), issuerCountryFromBin(card.pan.slice(0, 6))], card.sandboxToken).toEqual(expected[card.sandboxToken]);
      expect(card.brand).toBe(expected[card.sandboxToken]![0]);
    }
  });

  it('maps other scheme ranges', () => {
    expect(cardTypeFromBin('222100')).toBe('master');
    expect(cardTypeFromBin('353011')).toBe('jcb');
    expect(issuerCountryFromBin('353011')).toBe('JP');
    expect(cardTypeFromBin('305693')).toBe('diners');
    expect(cardTypeFromBin('601100')).toBe('discover');
    expect(cardTypeFromBin('650000')).toBe('discover');
    expect(cardTypeFromBin('900000')).toBe('other');
    expect(issuerCountryFromBin('900000')).toBeNull();
  });

  it('Luhn accepts valid numbers and rejects any single-digit change', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 1, max: 9 }), (position, delta) => {
        const digits = pan.split('').map(Number);
        digits[position] = (digits[position]! + delta) % 10;
        return !luhnValid(digits.join(''));
      }),
    );
    expect(luhnValid('4111 1111 1111 1111')).toBe(false);
    expect(luhnValid('41111111111')).toBe(false);
  });

  it('validates expiry and CVV length per brand, reporting every problem', () => {
    const now = new Date('2030-06-15T00:00:00Z');
    const problems = (input: { pan: string; expiryMonth: number; expiryYear: number; cvv: string }, brand: 'visa' | 'amex') => {
      try {
        assertCardDetailsValid(input, brand, now);
        return {};
      } catch (error) {
        return ((error as ApiError).data.params ?? {}) as Record<string, string>;
      }
    };
    expect(problems({ pan, expiryMonth: 6, expiryYear: 2030, cvv: '123' }, 'visa')).toEqual({});
    expect(Object.keys(problems({ pan, expiryMonth: 5, expiryYear: 2030, cvv: '123' }, 'visa'))).toEqual(['expiry_year']);
    expect(Object.keys(problems({ pan, expiryMonth: 13, expiryYear: 2031, cvv: '123' }, 'visa'))).toEqual(['expiry_month']);
    expect(Object.keys(problems({ pan, expiryMonth: 1, expiryYear: 2060, cvv: '123' }, 'visa'))).toEqual(['expiry_year']);
    expect(Object.keys(problems({ pan, expiryMonth: 1, expiryYear: 2031, cvv: '1234' }, 'visa'))).toEqual(['cvv']);
    expect(Object.keys(problems({ pan: '378282246310005', expiryMonth: 1, expiryYear: 2031, cvv: '123' }, 'amex'))).toEqual(['cvv']);
    expect(Object.keys(problems({ pan: '4111111111111112', expiryMonth: 1, expiryYear: 2020, cvv: '12' }, 'visa')).sort()).toEqual(['card_number', 'cvv', 'expiry_year']);
  });
});
