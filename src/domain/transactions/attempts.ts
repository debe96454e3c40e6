import { Batcher, retriedAlone } from '../../batcher.js';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { limits } from '../../limits.js';
import { captureTokenPrefix } from '../vault/index.js';
import { insertAttempts } from './attempt.js';
import { lookUp, preparePayment, type PaymentPlan } from './prepare.js';
import { isFollowUpType, StalePrincipalError, type Actor, type TransactionInput, type TransactionRecord } from './types.js';

/**
 * Steps one and two of the processing discipline (docs/payments.md) for concurrent requests
 * together (docs/performance-history.md, "Batching across requests"): the requests' validation and
 * their attempts are written in one short database transaction per batch, committed before any
 * processor call. Each step is one statement for the whole batch: the look-up, the insert (rows,
 * shares, Idempotency-Keys, the bookings locked in id order) and the bookings' attempt lists with
 * the over-funding sums. A lone request is a batch of one and waits for nothing.
 *
 * What a member's own checks refuse (a 400 of `preparePayment`), a key another request holds and
 * a remembered principal the look-up finds stale (Actor.principalEpoch) are answered for that
 * member alone: its batch-mates are written. A refusal found under locks (over-funding) or any
 * error rolls the batch back; its members are then attempted again one at a time, so each gets
 * its own outcome.
 */

export interface AttemptRequest {
  actor: Actor;
  input: TransactionInput;
}

export interface Attempt {
  plan: PaymentPlan;
  record: TransactionRecord;
}

/** Validates the request and records its attempt `incomplete` (committed when this resolves). */
export function attemptPayment(context: AppContext, request: AttemptRequest): Promise<Attempt> {
  // Follow-ups lock the transaction they adjust in a statement of their own (reserveOnParent):
  // in a batch, two batches could lock such rows in opposite orders. They are attempted alone.
  if (isFollowUpType(request.input.type)) return attemptAlone(context, request);
  return attemptsOf(context).add(request);
}

// One batcher per process (per context), made on first use.
const attemptBatchers = new WeakMap<AppContext, Batcher<AttemptRequest, Attempt>>();

function attemptsOf(context: AppContext): Batcher<AttemptRequest, Attempt> {
  let batcher = attemptBatchers.get(context);
  if (!batcher) {
    batcher = new Batcher((requests) => attemptBatch(context, requests), {
      batchMax: limits.attemptBatchMax, inFlightMax: limits.attemptBatchesInFlightMax, conflictKeys,
    });
    attemptBatchers.set(context, batcher);
  }
  return batcher;
}

/**
 * Requests naming one booking never share a batch (recordAttempts updates each booking once, and
 * the over-funding sum of the second must see the first), nor do two with one Idempotency-Key,
 * nor two naming one capture token (only one may redeem it: the other is refused alone, not by
 * rolling its batch back).
 */
function conflictKeys({ actor, input }: AttemptRequest): (string | number)[] {
  const keys: (string | number)[] = (input.bookings ?? []).map((item) => item.id);
  if (actor.idempotency) keys.push(`key ${actor.siteId} ${actor.idempotency.key}`);
  if (input.token?.startsWith(captureTokenPrefix)) keys.push(`token ${input.token}`);
  return keys;
}

function attemptBatch(context: AppContext, requests: AttemptRequest[]): Promise<PromiseSettledResult<Attempt>[]> {
  return retriedAlone(requests, (batch) => attemptTogether(context, batch), (request) => attemptAlone(context, request));
}

async function attemptAlone(context: AppContext, request: AttemptRequest): Promise<Attempt> {
  const [result] = await attemptTogether(context, [request]);
  if (result!.status === 'rejected') throw result!.reason;
  return result!.value;
}

/**
 * One database transaction: every request's look-up (one statement), its checks, then the
 * attempts of those that passed. Throws only for what concerns the whole batch.
 */
async function attemptTogether(context: AppContext, requests: AttemptRequest[]): Promise<PromiseSettledResult<Attempt>[]> {
  // Remembered principals the look-up found current are confirmed once the batch has committed:
  // a batch rolled back is retried member by member (retriedAlone), and a member confirmed in it
  // was no longer pending at its retry, so a credential revoked in between went unchecked and the
  // payment was made (session 29). Still pending, the retry's look-up finds the change.
  const confirmations: (() => void)[] = [];
  const results = await context.db.transaction(async (tx) => {
    const found = await lookUp(tx, requests);
    const results: PromiseSettledResult<Attempt>[] = new Array(requests.length);
    const accepted: { index: number; actor: Actor; plan: PaymentPlan }[] = [];
    for (const [index, { actor, input }] of requests.entries()) {
      if (actor.principalEpoch) {
        if (actor.principalEpoch.epoch !== found[index]!.credentialEpoch) {
          results[index] = { status: 'rejected', reason: new StalePrincipalError() };
          continue;
        }
        confirmations.push(actor.principalEpoch.confirmed);
      }
      try {
        accepted.push({ index, actor, plan: await preparePayment(context, tx, actor, input, found[index]!) });
      } catch (error) {
        // A refusal is the member's answer; anything else (a database error) is the batch's.
        if (!(error instanceof ApiError)) throw error;
        results[index] = { status: 'rejected', reason: error };
      }
    }
    const records = accepted.length === 0 ? [] : await insertAttempts(context, tx, accepted);
    for (const [position, { index, plan }] of accepted.entries()) {
      const record = records[position]!;
      results[index] = record instanceof Error ? { status: 'rejected', reason: record } : { status: 'fulfilled', value: { plan, record } };
    }
    return results;
  }, { genericPlans: true });
  for (const confirmed of confirmations) confirmed();
  return results;
}
