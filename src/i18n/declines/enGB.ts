import { serviceFailures } from '../../domain/transactions/failures.js';

// Decline reasons by gateway code, English (the reference language: every other file has exactly these keys).
// The texts are the sandbox's own messages (src/processor/sandbox/declines.ts), so English mails read as the gateway
// answered; `unknown` is the generic text for a code the catalogue does not know (docs/emails.md).
export const messages = {
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
  '800.100.100': 'declined (transaction declined for unknown reason)',
  '100.380.100': 'declined (3-D Secure authentication required by the issuer; retry with attempt_3ds)',
  '100.380.401': 'declined (3-D Secure authentication failed)',
  '700.100.100': 'declined (reference of the original payment does not exist)',
  '700.400.100': 'declined (cannot capture: amount exceeded, already captured or voided, or not an authorisation)',
  '700.400.200': 'declined (cannot refund: amount exceeds what was captured and not yet refunded)',
  '700.400.300': 'declined (cannot void: already captured or voided, or not the full authorised amount)',
  '700.400.700': 'declined (currency differs from the original payment)',
  unknown: 'declined by the payment processor',
  // Failures the service states itself (no processor code): the stored message is this text.
  noProcessorAnswer: serviceFailures.noProcessorAnswer,
  challengeNotPresented: serviceFailures.challengeNotPresented,
  // An operator's settlement without a code: the stored message, its reason as the operator wrote it (failures.ts).
  settledByOperator: 'Settled by the operator: {reason}',
} as const;
