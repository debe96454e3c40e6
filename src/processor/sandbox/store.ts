import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import type { Queryable } from '../../storage/db.js';
import type { ProcessorOutcome, ThreeDsResult } from '../connector.js';

/** One row of `sandbox_operations`: a call the sandbox received, by the caller's reference. */
export interface OperationRow {
  reference: string;
  processor_reference: string;
  kind: 'authorise' | 'capture' | 'void' | 'refund';
  parent_reference: string | null;
  mode: 'test' | 'live';
  amount: number;
  currency: string;
  capture: boolean;
  status: 'approved' | 'declined' | 'challenge';
  auth_code: string | null;
  code: string | null;
  message: string;
  card_brand: string | null;
  card_last_four: string | null;
  no_answer: boolean;
  three_ds: 'frictionless' | 'challenge' | null;
  challenge_id: string | null;
  /** Set for every authorisation that requested 3DS (the challenge page returns there). */
  return_url: string | null;
  merchant_name: string | null;
  after_challenge: { status: 'approved' | 'declined'; code: string | null; message: string } | null;
  challenge_result: 'authenticated' | 'failed' | null;
  captured_amount: number;
  refunded_amount: number;
  voided: boolean;
  created_at: Date;
}

export type NewOperation = Pick<OperationRow, 'reference' | 'kind' | 'mode' | 'amount' | 'currency' | 'capture' | 'status' | 'code' | 'message'> &
  Partial<Pick<OperationRow, 'parent_reference' | 'card_brand' | 'card_last_four' | 'no_answer' | 'three_ds' | 'return_url' | 'merchant_name' | 'after_challenge'>>;

export function newAuthCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

const findStatement = { name: 'sandbox_find_operation', text: 'SELECT * FROM sandbox_operations WHERE reference = $1' };

export async function findOperation(db: Queryable, reference: string): Promise<OperationRow | undefined> {
  return db.maybeOne<OperationRow & Record<string, unknown>>(findStatement, [reference]);
}

const insertStatement = {
  name: 'sandbox_insert_operation',
  text: `INSERT INTO sandbox_operations (reference, processor_reference, kind, parent_reference, mode, amount, currency, capture, status,
                                         auth_code, code, message, card_brand, card_last_four, no_answer, three_ds, challenge_id,
                                         return_url, merchant_name, after_challenge)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
         ON CONFLICT (reference) DO NOTHING RETURNING *`,
};

/**
 * Records an operation once per reference: when another process recorded the same reference
 * first, its row is returned instead (idempotency under concurrency).
 */
export async function insertOperation(db: Queryable, operation: NewOperation): Promise<OperationRow> {
  const challengeId = operation.status === 'challenge' ? randomBytes(24).toString('base64url') : null;
  const inserted = await db.maybeOne<OperationRow & Record<string, unknown>>(
    insertStatement,
    [
      operation.reference, `sbx_${randomUUID()}`, operation.kind, operation.parent_reference ?? null, operation.mode, operation.amount,
      operation.currency, operation.capture, operation.status, operation.status === 'approved' ? newAuthCode() : null, operation.code,
      operation.message, operation.card_brand ?? null, operation.card_last_four ?? null, operation.no_answer ?? false,
      operation.three_ds ?? null, challengeId, operation.return_url ?? null, operation.merchant_name ?? null,
      operation.after_challenge ? JSON.stringify(operation.after_challenge) : null,
    ],
  );
  return inserted ?? (await findOperation(db, operation.reference))!;
}

export function challengeUrl(baseUrl: string, challengeId: string): string {
  return `${baseUrl}/sandbox/3ds/${challengeId}`;
}

export function outcomeOf(row: OperationRow, baseUrl: string): ProcessorOutcome {
  const threeDs = threeDsResultOf(row);
  const reported = threeDs ? { threeDs } : {};
  switch (row.status) {
    case 'approved':
      return { kind: 'approved', processorReference: row.processor_reference, authCode: row.auth_code!, message: row.message, ...reported };
    case 'declined':
      return { kind: 'declined', processorReference: row.processor_reference, code: row.code!, message: row.message, ...reported };
    case 'challenge':
      return { kind: 'challenge', processorReference: row.processor_reference, challengeUrl: challengeUrl(baseUrl, row.challenge_id!), message: row.message };
  }
}

/**
 * What 3DS did, for an authorisation that requested it (undefined otherwise, and for follow-ups):
 * the path recorded in `three_ds`, the cardholder's answer to a challenge, or, for a request with
 * a return URL but no 3DS path, a card that is not enrolled.
 */
function threeDsResultOf(row: OperationRow): ThreeDsResult | undefined {
  if (row.three_ds === 'frictionless') return 'frictionless';
  if (row.three_ds === 'challenge') return row.challenge_result ?? undefined;
  return row.kind === 'authorise' && row.return_url !== null ? 'not_enrolled' : undefined;
}
