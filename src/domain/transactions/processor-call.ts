import { ProcessorTimeoutError, type LookupOutcome, type ProcessorOutcome } from '../../processor/connector.js';

/**
 * What the processor said, reduced to what the status table needs. `unknown`: no answer in
 * time, or the call failed in transit; the row stays `incomplete` for reconciliation.
 */
export type CallResult = ProcessorOutcome | {
  kind: 'unknown';
  reason: string;
  /**
   * The processor answered that it has no record of the call: the one unknown that says no money
   * moved. Without it (no answer, a failure in transit) the money may have moved, and nothing may
   * be decided from it (jobs/payments.ts).
   */
  noRecord: boolean;
};

/**
 * Runs one processor call, bounded by `timeoutMs`. Never throws: a timeout or a failure in
 * transit is an unknown outcome, never a decline (the money may have moved).
 */
export async function boundedCall(timeoutMs: number, reference: string, call: () => Promise<ProcessorOutcome | LookupOutcome>): Promise<CallResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProcessorTimeoutError(reference)), timeoutMs);
  });
  try {
    const outcome = await Promise.race([call(), timeout]);
    return outcome.kind === 'unknown' ? { kind: 'unknown', reason: 'the processor has no record of the call', noRecord: true } : outcome;
  } catch (error) {
    const reason = error instanceof ProcessorTimeoutError ? 'the processor did not answer in time' : 'the processor call failed in transit';
    return { kind: 'unknown', reason, noRecord: false };
  } finally {
    clearTimeout(timer);
  }
}
