/**
 * Failures the service states itself, with no processor code: the reconcile job's give-up and a
 * 3DS challenge nobody was shown (src/jobs/payments.ts). A transaction stores the English text as
 * its message (the API shows it); mails give it in their language (declines catalogue, the keys
 * below), where they printed the English text in every language (session 29).
 */
export const serviceFailures = {
  noProcessorAnswer: 'No answer from the payment processor; no money was taken.',
  challengeNotPresented: 'The 3-D Secure challenge was never presented to the cardholder.',
} as const;

export type ServiceFailure = keyof typeof serviceFailures;

/** The service failure a stored message is, or undefined (a processor's own message). */
export function serviceFailureOf(message: string): ServiceFailure | undefined {
  return (Object.keys(serviceFailures) as ServiceFailure[]).find((key) => serviceFailures[key] === message);
}

/**
 * An operator's settlement (operator-settle.ts) keeps the operator's reason in `content` after this
 * English prefix (the API shows it); a failure notice gives the prefix in its language
 * (declines.settledByOperator) and the reason as the operator wrote it.
 */
const operatorSettlementPrefix = 'Settled by the operator: ';

export function operatorSettlementMessage(reason: string): string {
  return `${operatorSettlementPrefix}${reason.trim()}`;
}

/** The operator's reason of a stored settlement message, or undefined (another message). */
export function operatorSettlementReasonOf(message: string): string | undefined {
  return message.startsWith(operatorSettlementPrefix) ? message.slice(operatorSettlementPrefix.length) : undefined;
}
