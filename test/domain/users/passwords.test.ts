import { describe, expect, it, vi } from 'vitest';

// Counts the Argon2id verifications a check makes: their number is what its time depends on.
const verifications = vi.hoisted(() => ({ count: 0 }));
vi.mock('@node-rs/argon2', async (importOriginal) => {
  const argon2 = await importOriginal<typeof import('@node-rs/argon2')>();
  return { ...argon2, verify: (...args: Parameters<typeof argon2.verify>) => (verifications.count++, argon2.verify(...args)) };
});
const { hashPassword, passwordProblem, verifyPassword } = await import('../../../src/domain/users/passwords.js');

async function counted(check: () => Promise<boolean>): Promise<[boolean, number]> {
  verifications.count = 0;
  const result = await check();
  return [result, verifications.count];
}

describe('passwords in either Unicode form', () => {
  const composed = 'Grüße-aus-Köln';
  const decomposed = composed.normalize('NFD');

  it('a wrong password costs as many verifications for an unknown user as for a known one, whatever its form', async () => {
    const stored = await hashPassword(composed);
    for (const wrong of ['plain-ascii-wrong', 'Grüsse-aus-Köln', 'Grüsse-aus-Köln'.normalize('NFD')]) {
      const [knownOk, known] = await counted(() => verifyPassword(stored, wrong));
      const [unknownOk, unknown] = await counted(() => verifyPassword(null, wrong));
      expect([knownOk, unknownOk]).toEqual([false, false]);
      expect(unknown).toBe(known);
    }
    // An ASCII password, the usual one, is verified once.
    expect((await counted(() => verifyPassword(stored, 'plain-ascii-wrong')))[1]).toBe(1);
  });

  it('measures the length of the form it hashes (NFC)', () => {
    // Four letters, eight code units decomposed.
    expect(passwordProblem('üöäë'.normalize('NFD'))).toBe('must be at least 8 characters');
    expect(passwordProblem(decomposed)).toBeNull();
  });
});
