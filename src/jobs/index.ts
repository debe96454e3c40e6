import { limits } from '../limits.js';
import { expirePendingTransactions, purgeExpiredIdempotencyKeys, reconcileIncompleteTransactions } from './payments.js';
import type { Job } from './runner.js';
import { deliverPendingMails, pruneMailBodies } from './mail-delivery.js';

export { startJobRunner, type Job, type JobRunner, type JobLogger } from './runner.js';

/** Every background job the server runs (server.ts starts them; add yours here). */
export const backgroundJobs: Job[] = [
  { name: 'expire-pending-3ds', intervalMs: limits.jobIntervalMs, run: (context) => expirePendingTransactions(context) },
  { name: 'reconcile-incomplete', intervalMs: limits.jobIntervalMs, run: (context) => reconcileIncompleteTransactions(context) },
  { name: 'purge-idempotency-keys', intervalMs: limits.jobIntervalMs * 6, run: (context) => purgeExpiredIdempotencyKeys(context) },
  { name: 'mail-delivery', intervalMs: limits.mailDeliveryIntervalMs, run: (context) => deliverPendingMails(context, { batchSizeMax: limits.mailBatchSizeDefault }) },
  { name: 'prune-mail-bodies', intervalMs: limits.jobIntervalMs * 6, run: (context) => pruneMailBodies(context) },
];
