import { allFulfilled, Batcher, retriedAlone } from '../../batcher.js';
import type { AppContext } from '../../context.js';
import { storeAnswers, type StoredAnswer } from '../../http/idempotency.js';
import { limits } from '../../limits.js';
import type { Queryable } from '../../storage/db.js';
import { openCard } from '../vault/index.js';
import { receiptLabelOf } from '../channels.js';
import { attemptPayment } from './attempts.js';
import { recordChargeback } from './chargebacks.js';
import type { PaymentPlan } from './prepare.js';
import { boundedCall, type CallResult } from './processor-call.js';
import { failRow, lockRow, lockRows, planSettlement } from './settle.js';
import { writeSettlements, type SettlementWrite } from './repository.js';
import { capturesAtOnce, isAdminType, isFollowUpType, isRetainedType, type Actor, type AdminTransactionType, type TransactionInput, type TransactionRecord } from './types.js';
import { loadTransactionViews, viewsOfRows, type TransactionJson } from './view.js';

/**
 * Creates a transaction of any type and returns it as the API shows it. Used by the REST route,
 * the hosted pages (vault app, modal, payment request) and the CLI alike.
 *
 * Processing discipline (docs/payments.md): (1) validate and (2) insert the row `incomplete`,
 * reserving from the linked transaction, in one database transaction, and commit; (3) call the
 * processor outside any database transaction, bounded by PROCESSOR_TIMEOUT_MS; (4) settle the
 * outcome in one database transaction. No answer leaves the row `incomplete` for the
 * reconciliation job.
 */
export async function createTransaction(context: AppContext, actor: Actor, input: TransactionInput): Promise<TransactionJson> {
  if (isAdminType(input.type)) {
    const id = await recordChargeback(context, actor, input as TransactionInput & { type: AdminTransactionType });
    return loadView(context.db, context, actor.siteId, id);
  }
  // Validation and the attempt in one short database transaction (with concurrent requests'),
  // committed before the call.
  const { plan, record } = await attemptPayment(context, { actor, input });
  actor.idempotency?.onClaimed();
  actor.onAttemptRecorded?.(record.id);
  const result = await callProcessor(context, plan, record);
  const settlement: Settlement = {
    record, result, bookingIds: plan.shares.map((share) => share.bookingId), ...(actor.idempotency?.answer ? { answer: actor.idempotency.answer } : {}),
  };
  // Follow-ups lock their linked transaction and allocations other channels' rows while they
  // settle, in the order of their own statements: in a batch, two batches could take such rows
  // in opposite orders. They settle on their own; payments and vaults, which lock only their
  // row and bookings (in one statement, in id order), settle in batches.
  if (isFollowUpType(record.type) || plan.extras.allocations.length > 0) return (await settleTogether(context, [settlement]))[0]!;
  return settlementsOf(context).add(settlement);
}

/** A processor outcome to record, and what the answer needs. */
interface Settlement {
  record: TransactionRecord;
  result: CallResult;
  /** The bookings the row pays: two settlements naming one booking never share a batch. */
  bookingIds: number[];
  answer?: (transaction: TransactionJson) => StoredAnswer | Promise<StoredAnswer>;
}

// One batcher per process (per context), made on first use.
const settlementBatchers = new WeakMap<AppContext, Batcher<Settlement, TransactionJson>>();

function settlementsOf(context: AppContext): Batcher<Settlement, TransactionJson> {
  let batcher = settlementBatchers.get(context);
  if (!batcher) {
    batcher = new Batcher((settlements) => settleBatch(context, settlements), {
      batchMax: limits.settlementBatchMax, inFlightMax: limits.settlementBatchesInFlightMax, conflictKeys: (settlement) => settlement.bookingIds,
    });
    settlementBatchers.set(context, batcher);
  }
  return batcher;
}

/** Settles a batch in one database transaction, or each settlement alone if that fails (retriedAlone). */
function settleBatch(context: AppContext, settlements: Settlement[]): Promise<PromiseSettledResult<TransactionJson>[]> {
  return retriedAlone(settlements, async (batch) => allFulfilled(await settleTogether(context, batch)), async (settlement) => (await settleTogether(context, [settlement]))[0]!);
}

/**
 * Records each outcome and reads the answers back in one database transaction, a statement for
 * each step whatever the number of settlements (issue 7): the rows (and their bookings) locked,
 * each row moved through the status table in JavaScript and all of them written together by a
 * statement that also answers with their views, and the answers stored for the requests'
 * Idempotency-Keys.
 */
async function settleTogether(context: AppContext, settlements: Settlement[]): Promise<TransactionJson[]> {
  return context.db.transaction(async (tx) => {
    const at = context.now();
    const rows = await lockRows(tx, settlements.map((settlement) => settlement.record.id));
    const writes: SettlementWrite[] = [];
    for (const { record, result } of settlements) {
      const row = rows.get(record.id);
      if (!row) throw new Error(`transaction ${record.id} vanished`);
      if (result.kind === 'unknown') {
        // No answer: say so on the row; the reconciliation job asks the processor later (docs/payments.md).
        if (row.status === 'incomplete') writes.push({ id: row.id, update: { status: row.status, content: `Awaiting the processor: ${result.reason}.`, at } });
        continue;
      }
      const { write } = await planSettlement(tx, row, result, at);
      if (write) writes.push(write);
    }
    const views = await viewsOfRows(tx, context.config, await writeSettlements(tx, writes, { views: true }));
    await addUnwrittenViews(tx, context, settlements, views);
    const answers: StoredAnswer[] = [];
    for (const settlement of settlements) if (settlement.answer) answers.push(await settlement.answer(views.get(settlement.record.id)!));
    // The last statement: nothing after it can roll the settlements back, so COMMIT goes with it.
    await storeAnswers(tx.withCommit(), answers);
    return settlements.map((settlement) => views.get(settlement.record.id)!);
  }, { genericPlans: true });
}

/** The views of the settlements that wrote nothing (the write answered with the others'), by site. */
async function addUnwrittenViews(db: Queryable, context: AppContext, settlements: Settlement[], views: Map<number, TransactionJson>): Promise<void> {
  const idsBySite = new Map<number, number[]>();
  for (const { record } of settlements) {
    if (views.has(record.id)) continue;
    const ids = idsBySite.get(record.siteId);
    if (ids) ids.push(record.id);
    else idsBySite.set(record.siteId, [record.id]);
  }
  for (const [siteId, ids] of idsBySite) for (const view of await loadTransactionViews(db, context.config, siteId, ids)) views.set(view.id, view);
  for (const { record } of settlements) if (!views.has(record.id)) throw new Error(`transaction ${record.id} vanished`);
}

async function loadView(db: Queryable, context: AppContext, siteId: number, id: number): Promise<TransactionJson> {
  const [view] = await loadTransactionViews(db, context.config, siteId, [id]);
  if (!view) throw new Error(`transaction ${id} vanished`);
  return view;
}

/** The path of the 3DS return route for a transaction (the processor sends the browser there). */
export function threeDsReturnUrl(context: AppContext, uuid: string): string {
  return `${context.config.baseUrl}/3ds/return/${uuid}`;
}

async function callProcessor(context: AppContext, plan: PaymentPlan, record: TransactionRecord): Promise<CallResult> {
  const mode = plan.mode;
  const timeoutMs = context.config.processorTimeoutMs;
  const type = record.type;
  if (isFollowUpType(type)) {
    const request = { reference: record.uuid, processorReference: plan.linked!.processorReference!, amount: record.total, currency: record.currency, mode } as const;
    const connector = context.connector;
    const call = type === 'capture' ? () => connector.capture(request) : type === 'void' ? () => connector.void(request) : () => connector.refund(request);
    return boundedCall(timeoutMs, record.uuid, call);
  }
  let card;
  try {
    // The PAN and CVV live in this local only for the one call below.
    card = await openCard(context.db, context.vault, plan.card!, plan.cvv, plan.sealedPan);
  } catch {
    await context.db.transaction(async (tx) => failRow(tx, await lockRow(tx, record.id), { code: null, message: 'The vaulted card could not be read; vault the card again.' }, context.now()));
    return { kind: 'unknown', reason: 'card unreadable (recorded as failed)', noRecord: false };
  }
  return boundedCall(timeoutMs, record.uuid, () =>
    context.connector.authorise({
      reference: record.uuid,
      amount: record.total,
      currency: record.currency,
      card,
      capture: capturesAtOnce(type),
      mode,
      merchantInitiated: isRetainedType(type),
      threeDs: record.attempt3ds ? { returnUrl: threeDsReturnUrl(context, record.uuid), merchantName: plan.channel.descriptor ?? receiptLabelOf(plan.channel), language: record.language } : null,
      ...(plan.input.forcedDeclineCode !== undefined ? { forcedDeclineCode: plan.input.forcedDeclineCode } : {}),
    }),
  );
}
