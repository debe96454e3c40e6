import { createHash, timingSafeEqual } from 'node:crypto';
import { limits } from '../../limits.js';

/**
 * The payment modal auth string (decisions.md): the integrator's server signs the payment with
 * the channel secret so the browser cannot change the amount, channel or any declared field.
 *
 *   values = fields sorted by key, arrays JSON-encoded, then the GMT timestamp `YmdHis`
 *   hash   = hex sha256( hex sha256(values.join('&')) + channel_secret )
 *   auth   = hash + timestamp (14 digits)
 */
export type SignedValue = string | number | boolean | readonly unknown[];

export function formatTimestampGmt(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}`;
}

/** The string that is hashed: the values in key order, then the timestamp, joined with `&`. */
export function authStringPayload(fields: Record<string, SignedValue>, timestamp: string): string {
  const keys = Object.keys(fields).sort();
  const values = keys.map((key) => {
    const value = fields[key]!;
    return Array.isArray(value) ? JSON.stringify(value) : String(value);
  });
  return [...values, timestamp].join('&');
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** What an integrator's server computes; exported for tests, docs examples and the CLI. */
export function signAuthString(fields: Record<string, SignedValue>, channelSecret: string, at: Date): string {
  const timestamp = formatTimestampGmt(at);
  return sha256Hex(sha256Hex(authStringPayload(fields, timestamp)) + channelSecret) + timestamp;
}

function parseTimestampGmt(text: string): Date | null {
  const match = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  // Reject calendar overflow such as month 13 or 31 February.
  return formatTimestampGmt(date) === text ? date : null;
}

export type AuthStringCheck = { ok: true; signedAt: Date } | { ok: false; reason: 'malformed' | 'no_secret' | 'expired' | 'future' | 'mismatch' };

/**
 * Verifies an auth string against the channel secret at `now`. A channel without a secret can
 * never open the modal: an empty secret would let anyone compute valid strings.
 */
export function verifyAuthString(options: { auth: string; fields: Record<string, SignedValue>; channelSecret: string; now: Date }): AuthStringCheck {
  const match = /^([0-9a-f]{64})(\d{14})$/.exec(options.auth);
  if (!match) return { ok: false, reason: 'malformed' };
  if (!options.channelSecret) return { ok: false, reason: 'no_secret' };
  const [, hash, timestamp] = match as unknown as [string, string, string];
  const signedAt = parseTimestampGmt(timestamp);
  if (!signedAt) return { ok: false, reason: 'malformed' };
  const ageMs = options.now.getTime() - signedAt.getTime();
  if (ageMs > limits.modalAuthLifetimeSeconds * 1000) return { ok: false, reason: 'expired' };
  // Clocks differ a little between the integrator's server and ours; a string from further in
  // the future would outlive the 15 minutes.
  if (-ageMs > limits.modalAuthClockSkewSeconds * 1000) return { ok: false, reason: 'future' };
  const expected = sha256Hex(sha256Hex(authStringPayload(options.fields, timestamp)) + options.channelSecret);
  const same = timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(hash, 'hex'));
  return same ? { ok: true, signedAt } : { ok: false, reason: 'mismatch' };
}
