import type { AppContext } from '../../context.js';
import { boundedCall } from './processor-call.js';
import { findTransactionByUuid } from './repository.js';
import { settleWithOutcome } from './settle.js';
import { followableUrl } from '../redirect-url.js';
import type { TransactionStatus } from './states.js';

export interface ThreeDsReturn {
  transactionId: number;
  status: TransactionStatus;
  /** The integrator's `redirect_url` with `transaction_id` and `status` appended, or null. */
  redirectTo: string | null;
  /** The transaction's language: the cardholder's, for the page shown without a redirect. */
  language: string;
}

/**
 * The cardholder's browser is back from the 3DS challenge page: ask the processor what
 * happened (the browser's word is never trusted), settle a pending transaction, and say where
 * to send the browser. Undefined for an unknown uuid.
 */
export async function completeThreeDsReturn(context: AppContext, uuid: string): Promise<ThreeDsReturn | undefined> {
  const record = await findTransactionByUuid(context.db, uuid);
  if (!record) return undefined;
  let status = record.status;
  if (status === 'pending') {
    const result = await boundedCall(context.config.processorTimeoutMs, uuid, () => context.connector.lookup(uuid));
    if (result.kind === 'approved' || result.kind === 'declined') status = await settleWithOutcome(context, record.id, result);
  }
  return { transactionId: record.id, status, redirectTo: record.redirectUrl ? appendOutcome(record.redirectUrl, record.id, status) : null, language: record.language };
}

/** Only followable targets (checked again here: the stored URL is never trusted blindly). */
export function appendOutcome(redirectUrl: string, transactionId: number, status: string): string | null {
  const url = followableUrl(redirectUrl);
  if (!url) return null;
  url.searchParams.set('transaction_id', String(transactionId));
  url.searchParams.set('status', status);
  return url.toString();
}
