import type { FollowUpRequest } from '../connector.js';
import { forcedDeclineForAmount, forcedDeclines, sandboxCodes } from './declines.js';
import type { OperationRow } from './store.js';

export type FollowUpKind = 'capture' | 'void' | 'refund';

interface Verdict {
  status: 'approved' | 'declined';
  code: string | null;
  message: string;
}

const decline = (answer: { code: string; message: string }): Verdict => ({ status: 'declined', ...answer });

/**
 * Whether a capture, void or refund may act on `parent` (locked by the caller). Rules: capture
 * once, up to the authorised amount, of an uncaptured, unvoided authorisation; void the full
 * amount of an uncaptured authorisation; refund up to what a purchase or capture moved, less
 * earlier refunds. Forced declines by amount apply to captures and refunds in test mode.
 */
export function judgeFollowUp(kind: FollowUpKind, parent: OperationRow | null, request: FollowUpRequest): Verdict {
  if (!parent || parent.mode !== request.mode || parent.status !== 'approved') return decline(sandboxCodes.unknownReference);
  if (parent.currency.trim() !== request.currency) return decline(sandboxCodes.currencyMismatch);
  const isAuthorisation = parent.kind === 'authorise' && !parent.capture && parent.amount > 0;
  if (kind === 'void') {
    const ok = isAuthorisation && !parent.voided && parent.captured_amount === 0 && request.amount === parent.amount;
    return ok ? approved('Voided (sandbox)') : decline(sandboxCodes.cannotVoid);
  }
  const forced = request.mode === 'test' ? forcedDeclineForAmount(request.amount) : null;
  if (kind === 'capture') {
    const ok = isAuthorisation && !parent.voided && parent.captured_amount === 0 && request.amount > 0 && request.amount <= parent.amount;
    if (!ok) return decline(sandboxCodes.cannotCapture);
    return forced ? { status: 'declined', code: forced, message: forcedDeclines[forced]! } : approved('Captured (sandbox)');
  }
  const refundable = (parent.kind === 'authorise' && parent.capture) || parent.kind === 'capture' ? parent.amount - parent.refunded_amount : 0;
  if (request.amount <= 0 || request.amount > refundable) return decline(sandboxCodes.cannotRefund);
  return forced ? { status: 'declined', code: forced, message: forcedDeclines[forced]! } : approved('Refunded (sandbox)');
}

function approved(message: string): Verdict {
  return { status: 'approved', code: null, message };
}
