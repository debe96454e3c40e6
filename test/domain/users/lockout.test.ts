// The lock-out's count of login attempts (src/domain/users/lockout.ts): each attempt is numbered
// before its password is checked, so guesses arriving at once are bounded by the count itself,
// not by whichever check happens to finish and lock the name first. Here every attempt is counted
// and none has been checked yet: the moment a burst of parallel guesses creates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countLoginAttempt, lockedForSeconds } from '../../../src/domain/users/lockout.js';
import { limits } from '../../../src/limits.js';
import { createTestContext, type TestContext } from '../../support/context.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => {
  await t?.close();
});

describe('countLoginAttempt', () => {
  it('numbers loginFailuresMax attempts whose checks are still running, then locks the name unchecked', async () => {
    const now = new Date();
    const name = `burst-${now.getTime()}`;
    const numbers: (number | 'locked')[] = [];
    for (let i = 0; i < limits.loginFailuresMax + 2; i++) numbers.push(await countLoginAttempt(t.db, name, now));
    expect(numbers).toEqual([...Array.from({ length: limits.loginFailuresMax }, (_, i) => i + 1), 'locked', 'locked']);
    expect(await lockedForSeconds(t.db, name, now)).toBe(limits.loginLockoutMinutes * 60);
    // Whatever case the name is typed in.
    expect(await countLoginAttempt(t.db, name.toUpperCase(), now)).toBe('locked');
  });
});
