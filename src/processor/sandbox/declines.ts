/**
 * Gateway result codes the sandbox answers with. The forced declines are the spec's table
 * (Errors 6); the others follow the same acquirer code family and are listed in docs/sandbox.md.
 */
export const forcedDeclines: Readonly<Record<string, string>> = {
  '800.100.151': 'declined (invalid card)',
  '800.100.152': 'declined by authorization system',
  '800.100.153': 'declined (invalid CVV)',
  '800.100.154': 'declined (transaction marked as invalid)',
  '800.100.155': 'declined (amount exceeds credit)',
  '800.100.156': 'declined (format error)',
  '800.100.157': 'declined (wrong expiry date)',
  '800.100.158': 'declined (suspecting manipulation)',
  '800.100.159': 'declined (stolen card)',
  '800.100.160': 'declined (card blocked)',
  '800.100.161': 'declined (too many invalid tries)',
};

export const sandboxCodes = {
  /** The declined test cards. */
  declined: { code: '800.100.100', message: 'declined (transaction declined for unknown reason)' },
  /** The cardholder pressed "Fail" on the 3DS challenge page. */
  authenticationFailed: { code: '100.380.401', message: 'declined (3-D Secure authentication failed)' },
  /** A challenge card without 3DS requested: the issuer insists on authentication (soft decline). */
  authenticationRequired: { code: '100.380.100', message: 'declined (3-D Secure authentication required by the issuer; retry with attempt_3ds)' },
  unknownReference: { code: '700.100.100', message: 'declined (reference of the original payment does not exist)' },
  cannotCapture: { code: '700.400.100', message: 'declined (cannot capture: amount exceeded, already captured or voided, or not an authorisation)' },
  cannotRefund: { code: '700.400.200', message: 'declined (cannot refund: amount exceeds what was captured and not yet refunded)' },
  cannotVoid: { code: '700.400.300', message: 'declined (cannot void: already captured or voided, or not the full authorised amount)' },
  currencyMismatch: { code: '700.400.700', message: 'declined (currency differs from the original payment)' },
} as const;

/**
 * The gateway code of a `fail_code` / forcedDeclineCode, accepting the short form (`51`) and the
 * full form (`800.100.151`); null for anything that is not a forced decline.
 */
export function parseForcedDeclineCode(input: string): string | null {
  const trimmed = input.trim();
  const full = /^[0-9]{2}$/.test(trimmed) ? `800.100.1${trimmed}` : trimmed;
  // Own keys only: `constructor` or `toString` is no decline code.
  return Object.hasOwn(forcedDeclines, full) ? full : null;
}

/** The forced decline a test amount asks for (total ending in 51–61), or null. */
export function forcedDeclineForAmount(amount: number): string | null {
  const lastTwo = amount % 100;
  return lastTwo >= 51 && lastTwo <= 61 ? `800.100.1${lastTwo}` : null;
}
