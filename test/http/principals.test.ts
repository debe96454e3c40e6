// The process-local memory of principals (src/http/principals.ts): an API token's expiry is judged
// here, by this process's clock, without a statement; the database check (credential_epoch) is in
// test/security/remembered-principals.test.ts.
import { describe, expect, it } from 'vitest';
import { PrincipalMemory, type RememberedPrincipal } from '../../src/http/principals.js';

const liveUntilMs = Date.parse('2026-11-21T23:59:59Z');
const entry = (principal: string, until: number | null = liveUntilMs): RememberedPrincipal<string> => ({ principal, epoch: '7', liveUntilMs: until, touchedAtMs: 0 });

describe('PrincipalMemory', () => {
  it('recalls a principal through the last instant of its credential, and forgets it after', () => {
    const memory = new PrincipalMemory<string>(10);
    memory.remember('a', entry('alice'));
    expect(memory.recall('a', liveUntilMs)?.principal).toBe('alice');
    expect(memory.recall('a', liveUntilMs + 1)).toBeUndefined();
    // Forgotten, not only hidden: the clock going back does not bring it back.
    expect(memory.recall('a', liveUntilMs - 1_000)).toBeUndefined();
  });

  it('never recalls a principal whose last instant could not be read', () => {
    const memory = new PrincipalMemory<string>(10);
    memory.remember('a', entry('alice', Number.NaN));
    expect(memory.recall('a', 0)).toBeUndefined();
  });

  it('keeps a credential without expiry', () => {
    const memory = new PrincipalMemory<string>(10);
    memory.remember('a', entry('alice', null));
    expect(memory.recall('a', Number.MAX_SAFE_INTEGER)?.principal).toBe('alice');
  });

  it('holds at most its bound, forgetting the first remembered; replacing an entry makes no room', () => {
    const memory = new PrincipalMemory<string>(2);
    memory.remember('a', entry('alice'));
    memory.remember('b', entry('bob'));
    memory.remember('b', entry('bob again'));
    expect(memory.recall('a', 0)?.principal).toBe('alice');
    memory.remember('c', entry('carol'));
    expect(memory.recall('a', 0)).toBeUndefined();
    expect(memory.recall('b', 0)?.principal).toBe('bob again');
    expect(memory.recall('c', 0)?.principal).toBe('carol');
    memory.forget('c');
    expect(memory.recall('c', 0)).toBeUndefined();
  });
});
