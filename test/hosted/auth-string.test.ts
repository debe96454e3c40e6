import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { authStringPayload, signAuthString, verifyAuthString } from '../../src/domain/hosted/auth-string.js';
import { limits } from '../../src/limits.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const at = new Date(Date.UTC(2026, 10, 21, 10, 0, 0));
const fields = { channels: 2, currencies: 'USD', total: 9999, reference: 'X' };

describe('payment modal auth string (decisions.md)', () => {
  it('hashes the values in key order with the YmdHis timestamp, as the published example', () => {
    expect(authStringPayload(fields, '20261121100000')).toBe('2&USD&X&9999&20261121100000');
    const auth = signAuthString(fields, 'secret', at);
    expect(auth).toBe(sha(sha('2&USD&X&9999&20261121100000') + 'secret') + '20261121100000');
    expect(authStringPayload({ b: [1, 'a'], a: true }, '20260101000000')).toBe('true&[1,"a"]&20260101000000');
  });

  it('accepts for 15 minutes and refuses after, in the future, tampered, or without a secret', () => {
    const auth = signAuthString(fields, 'secret', at);
    const check = (options: { now?: Date; fields?: Record<string, string | number>; secret?: string; auth?: string }) =>
      verifyAuthString({ auth: options.auth ?? auth, fields: options.fields ?? fields, channelSecret: options.secret ?? 'secret', now: options.now ?? at });
    expect(check({ now: new Date(at.getTime() + 15 * 60 * 1000) })).toEqual({ ok: true, signedAt: at });
    expect(check({ now: new Date(at.getTime() + 15 * 60 * 1000 + 1000) })).toEqual({ ok: false, reason: 'expired' });
    expect(check({ now: new Date(at.getTime() - 5 * 60 * 1000) })).toEqual({ ok: false, reason: 'future' });
    expect(check({ fields: { ...fields, total: 1 } })).toEqual({ ok: false, reason: 'mismatch' });
    expect(check({ secret: 'other' })).toEqual({ ok: false, reason: 'mismatch' });
    expect(check({ secret: '' })).toEqual({ ok: false, reason: 'no_secret' });
    expect(check({ auth: auth.slice(0, 64) + '20261321100000' })).toEqual({ ok: false, reason: 'malformed' });
    expect(check({ auth: 'x'.repeat(78) })).toEqual({ ok: false, reason: 'malformed' });
  });

  it('refuses a hash changed in any one digit, the last ones too', () => {
    const auth = signAuthString(fields, 'secret', at);
    for (let index = 0; index < 64; index++) {
      const digit = auth[index] === '0' ? '1' : '0';
      const altered = auth.slice(0, index) + digit + auth.slice(index + 1);
      expect(verifyAuthString({ auth: altered, fields, channelSecret: 'secret', now: at }), `digit ${index}`).toEqual({ ok: false, reason: 'mismatch' });
    }
  });

  it('allows our clock to be behind the signer\'s by modalAuthClockSkewSeconds, no more', () => {
    const auth = signAuthString(fields, 'secret', at);
    const checkAt = (offsetMs: number) => verifyAuthString({ auth, fields, channelSecret: 'secret', now: new Date(at.getTime() + offsetMs) });
    const skewMs = limits.modalAuthClockSkewSeconds * 1000;
    expect(checkAt(-skewMs)).toEqual({ ok: true, signedAt: at });
    expect(checkAt(-skewMs - 1000)).toEqual({ ok: false, reason: 'future' });
  });
});
