import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { limits } from '../../limits.js';
import { canonicalText } from '../text.js';

/** Argon2id with the cost of limits; verification reads the cost stored in each hash. */
// `Algorithm` is a const enum erased at build time (esbuild), so the value is spelled out: 2 = Argon2id.
const argon2id = 2 as Algorithm;
const hashOptions = {
  algorithm: argon2id,
  memoryCost: limits.passwordHashMemoryKib,
  timeCost: limits.passwordHashPasses,
  parallelism: 1,
};

/**
 * A password is hashed in Unicode NFC: `ü` is one code point (U+00FC) on most keyboards and two
 * (`u` + U+0308, NFD) on others, so the same password typed on two machines was two passwords.
 */
export async function hashPassword(password: string): Promise<string> {
  return hash(canonicalText(password), hashOptions);
}

/** A problem with a proposed password, or null when it is acceptable. Lengths are of the NFC form, the one hashed. */
export function passwordProblem(password: string): string | null {
  const length = canonicalText(password).length;
  if (length < limits.passwordLengthMin) return `must be at least ${limits.passwordLengthMin} characters`;
  if (length > limits.passwordLengthMax) return `must be at most ${limits.passwordLengthMax} characters`;
  return null;
}

/**
 * The forms a password is tried in, NFC first: hashes made before passwords were normalised are of
 * the password as it was sent, NFD from some machines, so the form sent and the NFD one are tried
 * after. A password without letters that compose (any ASCII one) has one form: one verification.
 */
function passwordForms(password: string): string[] {
  return [...new Set([canonicalText(password), password, password.normalize('NFD')])];
}

// Verified when the username is unknown, as many times as a wrong password of a known user, so
// response time does not reveal whether an account exists.
let dummyHash: Promise<string> | null = null;

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (passwordHash === null) {
    dummyHash ??= hashPassword('trustfare-no-such-user');
    for (const form of passwordForms(password)) await verify(await dummyHash, form).catch(() => false);
    return false;
  }
  for (const form of passwordForms(password)) {
    // A malformed stored hash never authenticates.
    if (await verify(passwordHash, form).catch(() => false)) return true;
  }
  return false;
}
