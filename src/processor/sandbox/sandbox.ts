import { setTimeout as sleep } from 'node:timers/promises';
import { allFulfilled, Batcher } from '../../batcher.js';
import type { Db } from '../../storage/db.js';
import { limits } from '../../limits.js';
import { ProcessorTimeoutError, type AuthoriseRequest, type Connector, type FollowUpRequest, type LookupOutcome, type ProcessorOutcome } from '../connector.js';
import { decideAuthorisation } from './decide.js';
import { judgeFollowUp, type FollowUpKind } from './follow-ups.js';
import { findOperation, insertOperation, insertOperations, outcomeOf, type NewOperation, type OperationRow } from './store.js';
import { testCardByPan } from './test-cards.js';

export interface SandboxOptions {
  /** Public origin serving the challenge pages. */
  baseUrl: string;
  /** Added before every answer (SANDBOX_LATENCY_MS). */
  latencyMs: number;
  /** How long the no-answer card hangs before the call fails with ProcessorTimeoutError. */
  noAnswerMs: number;
}

/**
 * The built-in payment processor: test cards, forced declines, 3DS2 frictionless and challenge,
 * a card that never answers, and capture/void/refund bookkeeping. All state is in PostgreSQL
 * (`sandbox_operations`), so every server process sees the same sandbox; every call is
 * idempotent by `reference`.
 */
export class SandboxConnector implements Connector {
  readonly name = 'sandbox';
  readonly movesMoney = false;
  /**
   * Concurrent authorisations are recorded together, one statement per batch (as the service
   * writes its payments; docs/performance.md). Two calls with one reference never share a batch.
   */
  private readonly authorisations: Batcher<NewOperation, OperationRow>;

  constructor(
    private readonly db: Db,
    private readonly options: SandboxOptions,
  ) {
    this.authorisations = new Batcher(async (operations) => allFulfilled(await insertOperations(this.db, operations)), {
      batchMax: limits.sandboxBatchMax, inFlightMax: limits.sandboxBatchesInFlightMax, conflictKeys: (operation) => [operation.reference],
    });
  }

  async authorise(request: AuthoriseRequest): Promise<ProcessorOutcome> {
    assertCall(request.reference, request.amount, request.currency);
    if (request.threeDs && !/^https?:\/\//.test(request.threeDs.returnUrl)) throw new Error('threeDs.returnUrl must be an http(s) URL');
    // One statement for a new reference: the insert returns the row, or the existing one on a repeat (issue 7).
    const row = await this.recordAuthorisation(request);
    assertSameCall(row, 'authorise', request);
    if (row.no_answer) return this.hang(request.reference);
    return this.answer(outcomeOf(row, this.options.baseUrl));
  }

  capture(request: FollowUpRequest): Promise<ProcessorOutcome> {
    return this.followUp('capture', request);
  }

  void(request: FollowUpRequest): Promise<ProcessorOutcome> {
    return this.followUp('void', request);
  }

  refund(request: FollowUpRequest): Promise<ProcessorOutcome> {
    return this.followUp('refund', request);
  }

  /** Closes the sandbox's own pool (createConnector); the API's pool is closed by its owner. */
  async close(): Promise<void> {
    await this.db.close();
  }

  async lookup(reference: string): Promise<LookupOutcome> {
    const row = await findOperation(this.db, reference);
    return this.answer(row ? outcomeOf(row, this.options.baseUrl) : { kind: 'unknown' });
  }

  private async recordAuthorisation(request: AuthoriseRequest): Promise<OperationRow> {
    const decision = decideAuthorisation(request);
    const pan = request.card.pan;
    return this.authorisations.add({
      reference: request.reference,
      kind: 'authorise',
      mode: request.mode,
      amount: request.amount,
      currency: request.currency,
      capture: request.capture,
      status: decision.answer.status,
      code: decision.answer.code,
      message: decision.answer.message,
      card_brand: testCardByPan(pan)?.brand ?? null,
      card_last_four: pan.slice(-4),
      no_answer: decision.noAnswer,
      // The column holds the path taken (frictionless or challenge); a not-enrolled card took none.
      // Every 3DS request records its return URL, which is how outcomeOf tells "not enrolled"
      // (3DS requested, no path) from "3DS not requested".
      three_ds: decision.threeDs === 'not_enrolled' ? null : decision.threeDs,
      return_url: request.threeDs?.returnUrl ?? null,
      merchant_name: request.threeDs?.merchantName ?? null,
      language: request.threeDs?.language ?? null,
      after_challenge: decision.afterChallenge,
    });
  }

  /** Capture, void and refund: the parent row is locked so concurrent follow-ups cannot overdraw it. */
  private async followUp(kind: FollowUpKind, request: FollowUpRequest): Promise<ProcessorOutcome> {
    assertCall(request.reference, request.amount, request.currency);
    const row = await this.db.transaction(async (tx) => {
      const parent = await tx.maybeOne<OperationRow & Record<string, unknown>>('SELECT * FROM sandbox_operations WHERE processor_reference = $1 FOR UPDATE', [request.processorReference]);
      const existing = await findOperation(tx, request.reference);
      if (existing) return existing;
      const verdict = judgeFollowUp(kind, parent ?? null, request);
      const inserted = await insertOperation(tx, {
        reference: request.reference,
        kind,
        mode: request.mode,
        amount: request.amount,
        currency: request.currency,
        capture: kind === 'capture',
        ...verdict,
        parent_reference: parent?.processor_reference ?? null,
      });
      if (inserted.status === 'approved' && parent) await tx.query(...parentUpdate(kind, parent.processor_reference, request.amount));
      return inserted;
    });
    assertSameCall(row, kind, request);
    return this.answer(outcomeOf(row, this.options.baseUrl));
  }

  private async answer<T>(outcome: T): Promise<T> {
    if (this.options.latencyMs > 0) await sleep(this.options.latencyMs);
    return outcome;
  }

  /** The no-answer card: the operation is recorded (lookup knows it), but the call never answers in time. */
  private async hang(reference: string): Promise<never> {
    await sleep(this.options.noAnswerMs);
    throw new ProcessorTimeoutError(reference);
  }
}

/** What an approved follow-up does to the operation it acts on. */
function parentUpdate(kind: FollowUpKind, processorReference: string, amount: number): [string, unknown[]] {
  switch (kind) {
    case 'capture':
      return ['UPDATE sandbox_operations SET captured_amount = captured_amount + $2, updated_at = now() WHERE processor_reference = $1', [processorReference, amount]];
    case 'refund':
      return ['UPDATE sandbox_operations SET refunded_amount = refunded_amount + $2, updated_at = now() WHERE processor_reference = $1', [processorReference, amount]];
    case 'void':
      return ['UPDATE sandbox_operations SET voided = true, updated_at = now() WHERE processor_reference = $1', [processorReference]];
  }
}

function assertCall(reference: string, amount: number, currency: string): void {
  if (!reference || reference.length > limits.processorReferenceLengthMax) throw new Error(`processor reference must be 1 to ${limits.processorReferenceLengthMax} characters`);
  if (!Number.isSafeInteger(amount) || amount < 0) throw new Error(`amount must be a non-negative integer of minor units, got ${amount}`);
  if (!/^[A-Z]{3}$/.test(currency)) throw new Error(`currency must be an ISO 4217 code, got ${currency}`);
}

/** A reference names one call: reusing it for a different call is a programming error. */
function assertSameCall(row: OperationRow, kind: OperationRow['kind'], request: { reference: string; amount: number; currency: string }): void {
  if (row.kind !== kind || row.amount !== request.amount || row.currency.trim() !== request.currency) {
    throw new Error(`reference ${request.reference} was already used for a different processor call`);
  }
}
