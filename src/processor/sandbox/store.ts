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
  /** The cardholder's language for the challenge page (ThreeDsRequest.language). */
  language: string | null;
  after_challenge: { status: 'approved' | 'declined'; code: string | null; message: string } | null;
  challenge_result: 'authenticated' | 'failed' | null;
  captured_amount: number;
  refunded_amount: number;
  voided: boolean;
  created_at: Date;
}

export type NewOperation = Pick<OperationRow, 'reference' | 'kind' | 'mode' | 'amount' | 'currency' | 'capture' | 'status' | 'code' | 'message'> &
  Partial<Pick<OperationRow, 'parent_reference' | 'card_brand' | 'card_last_four' | 'no_answer' | 'three_ds' | 'return_url' | 'merchant_name' | 'language' | 'after_challenge'>>;

export function newAuthCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

const findStatement = { name: 'sandbox_find_operation', text: 'SELECT * FROM sandbox_operations WHERE reference = $1' };

export async function findOperation(db: Queryable, reference: string): Promise<OperationRow | undefined> {
  return db.maybeOne<OperationRow & Record<string, unknown>>(findStatement, [reference]);
}

const operationColumns = `reference, processor_reference, kind, parent_reference, mode, amount, currency, capture, status, auth_code, code, message, card_brand,
  card_last_four, no_answer, three_ds, challenge_id, return_url, merchant_name, language, after_challenge`;

/**
 * Records operations, any number in one statement (the sandbox writes concurrent calls together,
 * as the service writes its payments: docs/performance.md), once per reference: a reference
 * recorded before keeps its row, which the statement returns instead when its snapshot sees it.
 */
const insertStatement = {
  name: 'sandbox_insert_operations',
  text: `WITH input AS (SELECT ${operationColumns} FROM json_populate_recordset(null::sandbox_operations, $1::json)),
              inserted AS (INSERT INTO sandbox_operations (${operationColumns}) SELECT * FROM input ON CONFLICT (reference) DO NOTHING RETURNING *)
         SELECT * FROM inserted
         UNION ALL
         SELECT o.* FROM sandbox_operations o JOIN input i USING (reference) WHERE NOT EXISTS (SELECT 1 FROM inserted WHERE inserted.reference = i.reference)`,
};

/**
 * Records each operation once per reference, in order: when another call recorded the same
 * reference first (another process, say), its row is returned instead (idempotency under
 * concurrency). References must differ within one call.
 */
export async function insertOperations(db: Queryable, operations: readonly NewOperation[]): Promise<OperationRow[]> {
  const rows = operations.map((operation) => ({
    reference: operation.reference,
    processor_reference: `sbx_${randomUUID()}`,
    kind: operation.kind,
    parent_reference: operation.parent_reference ?? null,
    mode: operation.mode,
    amount: operation.amount,
    currency: operation.currency,
    capture: operation.capture,
    status: operation.status,
    auth_code: operation.status === 'approved' ? newAuthCode() : null,
    code: operation.code,
    message: operation.message,
    card_brand: operation.card_brand ?? null,
    card_last_four: operation.card_last_four ?? null,
    no_answer: operation.no_answer ?? false,
    three_ds: operation.three_ds ?? null,
    challenge_id: operation.status === 'challenge' ? randomBytes(24).toString('base64url') : null,
    return_url: operation.return_url ?? null,
    merchant_name: operation.merchant_name ?? null,
    language: operation.language ?? null,
    after_challenge: operation.after_challenge ?? null,
  }));
  const found = new Map((await db.query<OperationRow & Record<string, unknown>>(insertStatement, [JSON.stringify(rows)])).map((row) => [row.reference, row]));
  // A row committed by another call while this statement ran is outside its snapshot: read it now.
  return Promise.all(operations.map(async (operation) => found.get(operation.reference) ?? (await findOperation(db, operation.reference))!));
}

export async function insertOperation(db: Queryable, operation: NewOperation): Promise<OperationRow> {
  return (await insertOperations(db, [operation]))[0]!;
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
