import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { Secrets } from '../../config.js';
import { limits } from '../../limits.js';

/**
 * Card cryptography. Envelope encryption: each card has its own random 256-bit data key; the
 * PAN is sealed with AES-256-GCM under it, and the data key is sealed (wrapped) with
 * AES-256-GCM under a key-encrypting key (KEK) from CARD_KEYS. The additional authenticated
 * data binds the ciphertext to its site and card id (and the wrapped key also to its KEK id), so
 * a ciphertext copied to another row or site does not open.
 *
 * Sealed layout everywhere: iv (12 bytes) | ciphertext | tag (16 bytes).
 */

const algorithm = 'aes-256-gcm';
const ivBytes = 12;
const tagBytes = 16;
const keyBytes = 32;

export interface VaultKeys {
  /** Key-encrypting keys by id. */
  keys: Readonly<Record<string, Buffer>>;
  /** The id of the KEK that wraps new data keys. */
  activeKeyId: string;
  fingerprintKey: Buffer;
  /** Seals CVVs into capture tokens; derived from SIGNING_SECRET with HKDF. */
  captureTokenKey: Buffer;
}

/** Thrown when a ciphertext does not open: wrong key, tampered bytes, or a different row/site. */
export class CardDecryptionError extends Error {}

export function vaultKeysFromSecrets(secrets: Pick<Secrets, 'cardKeys' | 'activeCardKeyId' | 'cardFingerprintKey' | 'signingSecret'>): VaultKeys {
  const active = secrets.cardKeys[secrets.activeCardKeyId];
  if (!active || active.length !== keyBytes) throw new Error(`active card key ${secrets.activeCardKeyId} must be 32 bytes`);
  const captureTokenKey = Buffer.from(hkdfSync('sha256', secrets.signingSecret, Buffer.from('trustfare-capture-token'), Buffer.from('cvv-seal-v1'), keyBytes));
  return { keys: secrets.cardKeys, activeKeyId: secrets.activeCardKeyId, fingerprintKey: secrets.cardFingerprintKey, captureTokenKey };
}

export function seal(key: Buffer, plaintext: Buffer, aad: Buffer): Buffer {
  const iv = randomBytes(ivBytes);
  const cipher = createCipheriv(algorithm, key, iv, { authTagLength: tagBytes });
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

export function open(key: Buffer, sealed: Buffer, aad: Buffer): Buffer {
  if (sealed.length < ivBytes + tagBytes) throw new CardDecryptionError('ciphertext is too short');
  const iv = sealed.subarray(0, ivBytes);
  const tag = sealed.subarray(sealed.length - tagBytes);
  const body = sealed.subarray(ivBytes, sealed.length - tagBytes);
  try {
    const decipher = createDecipheriv(algorithm, key, iv, { authTagLength: tagBytes });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]);
  } catch {
    throw new CardDecryptionError('card data failed authentication');
  }
}

/** The random nonce (iv) of a sealed value; capture tokens use it as their single-use id. */
export function nonceOf(sealed: Buffer): Buffer {
  return sealed.subarray(0, ivBytes);
}

export interface CardBinding {
  siteId: number;
  cardId: number;
}

export interface SealedPan {
  keyId: string;
  wrappedKey: Buffer;
  panCiphertext: Buffer;
}

const panAad = (binding: CardBinding) => Buffer.from(`trustfare:pan:v1:site=${binding.siteId}:card=${binding.cardId}`);
const dataKeyAad = (binding: CardBinding, keyId: string) => Buffer.from(`trustfare:dek:v1:site=${binding.siteId}:card=${binding.cardId}:kek=${keyId}`);

function keyEncryptingKey(keys: VaultKeys, keyId: string): Buffer {
  const key = keys.keys[keyId];
  if (!key) throw new CardDecryptionError(`card key ${keyId} is not configured in CARD_KEYS`);
  return key;
}

export function sealPan(keys: VaultKeys, binding: CardBinding, pan: string): SealedPan {
  const dataKey = randomBytes(keyBytes);
  try {
    const panCiphertext = seal(dataKey, Buffer.from(pan, 'utf8'), panAad(binding));
    const wrappedKey = seal(keyEncryptingKey(keys, keys.activeKeyId), dataKey, dataKeyAad(binding, keys.activeKeyId));
    return { keyId: keys.activeKeyId, wrappedKey, panCiphertext };
  } finally {
    dataKey.fill(0);
  }
}

export function openPan(keys: VaultKeys, binding: CardBinding, sealed: SealedPan): string {
  const dataKey = open(keyEncryptingKey(keys, sealed.keyId), sealed.wrappedKey, dataKeyAad(binding, sealed.keyId));
  try {
    return open(dataKey, sealed.panCiphertext, panAad(binding)).toString('utf8');
  } finally {
    dataKey.fill(0);
  }
}

/** Re-wraps a data key under the active KEK; the PAN ciphertext is untouched. */
export function rewrapDataKey(keys: VaultKeys, binding: CardBinding, wrapped: { keyId: string; wrappedKey: Buffer }): { keyId: string; wrappedKey: Buffer } {
  const dataKey = open(keyEncryptingKey(keys, wrapped.keyId), wrapped.wrappedKey, dataKeyAad(binding, wrapped.keyId));
  try {
    return { keyId: keys.activeKeyId, wrappedKey: seal(keyEncryptingKey(keys, keys.activeKeyId), dataKey, dataKeyAad(binding, keys.activeKeyId)) };
  } finally {
    dataKey.fill(0);
  }
}

/**
 * Keyed fingerprint of a PAN within one site: equal for the same card, useless to anyone
 * without the key (a bare hash of a 16-digit PAN with known BIN and last four is brute-forced
 * in seconds), and different across sites so rows of two tenants cannot be correlated.
 */
export function fingerprintPan(keys: VaultKeys, siteId: number, pan: string): Buffer {
  return createHmac('sha256', keys.fingerprintKey).update(`site=${siteId}:pan=${pan}`).digest();
}

// ---- Capture tokens --------------------------------------------------------------------------

export const captureTokenPrefix = 'ct_';
const captureTokenVersion = 1;
const headerBytes = 1 + 8 + 8;

export interface CaptureTokenContents {
  cardId: number;
  cvv: string;
  expiresAt: Date;
  /** Random per token; identifies it for single use of the CVV. */
  nonce: Buffer;
}

const captureAad = (header: Buffer, siteId: number) => Buffer.concat([header, Buffer.from(`:site=${siteId}`)]);

/**
 * A capture token carries the CVV sealed under a server key, bound to the site, the card and
 * the expiry. The CVV therefore lives only in the caller's hands and in process memory during a
 * call: never in the database, and any server process can open it.
 */
export function sealCaptureToken(keys: VaultKeys, input: { siteId: number; cardId: number; cvv: string; expiresAt: Date }): string {
  const header = Buffer.alloc(headerBytes);
  header.writeUInt8(captureTokenVersion, 0);
  header.writeBigUInt64BE(BigInt(input.cardId), 1);
  header.writeBigUInt64BE(BigInt(Math.floor(input.expiresAt.getTime() / 1000)), 9);
  const sealed = seal(keys.captureTokenKey, Buffer.from(input.cvv, 'utf8'), captureAad(header, input.siteId));
  return captureTokenPrefix + Buffer.concat([header, sealed]).toString('base64url');
}

/** The contents of a valid, unexpired capture token of this site, or null. */
export function openCaptureToken(keys: VaultKeys, input: { siteId: number; token: string; now: Date }): CaptureTokenContents | null {
  if (!input.token.startsWith(captureTokenPrefix) || input.token.length > limits.captureTokenLengthMax) return null;
  const raw = Buffer.from(input.token.slice(captureTokenPrefix.length), 'base64url');
  if (raw.length < headerBytes + ivBytes + tagBytes || raw.readUInt8(0) !== captureTokenVersion) return null;
  const header = raw.subarray(0, headerBytes);
  const sealed = raw.subarray(headerBytes);
  let cvv: string;
  try {
    cvv = open(keys.captureTokenKey, sealed, captureAad(header, input.siteId)).toString('utf8');
  } catch {
    return null;
  }
  const expiresAt = new Date(Number(header.readBigUInt64BE(9)) * 1000);
  if (expiresAt.getTime() <= input.now.getTime()) return null;
  return { cardId: Number(header.readBigUInt64BE(1)), cvv, expiresAt, nonce: Buffer.from(nonceOf(sealed)) };
}
