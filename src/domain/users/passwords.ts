import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { limits } from '../../limits.js';

/** Argon2id with the cost of limits; verification reads the cost stored in each hash. */
// `Algorithm` is a const enum erased at build time (esbuild), so the value is spelled out: 2 = Argon2id.
const argon2id = 2 as Algorithm;
const hashOptions = {
  algorithm: argon2id,
  memoryCost: limits.passwordHashMemoryKib,
  timeCost: limits.passwordHashPasses,
  parallelism: 1,
};

export async function hashPassword(password: string): Promise<string> {
  return hash(password, hashOptions);
}

/** A problem with a proposed password, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < limits.passwordLengthMin) return `must be at least ${limits.passwordLengthMin} characters`;
  if (password.length > limits.passwordLengthMax) return `must be at most ${limits.passwordLengthMax} characters`;
  return null;
}

// Verified when the username is unknown, so both answers cost one Argon2id verification and
// response time does not reveal whether an account exists.
let dummyHash: Promise<string> | null = null;

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (passwordHash === null) {
    dummyHash ??= hashPassword('trustfare-no-such-user');
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  try {
    return await verify(passwordHash, password);
  } catch {
    // A malformed stored hash never authenticates.
    return false;
  }
}
