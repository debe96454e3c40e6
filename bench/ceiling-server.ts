// The ceilings the service is measured against: bare Fastify routes on plain `pg`, no auth (but
// /purchase reads a token row), no validation, no logging, in their own process, on the same
// machine and PostgreSQL server.
//
//   GET|POST /json/:name   answers the recorded JSON of a scenario (the same payload the service sends)
//   GET      /pk/:id       one primary-key select (named statement) on bookings, then the GET booking JSON
//   POST     /tx           BEGIN; SELECT ... FOR UPDATE; INSERT; UPDATE; COMMIT on a fresh row each time,
//                          then the retained_purchase JSON
//   POST     /purchase     the write set issue 7 lists for a purchase on minimal tables, in two statements
//                          with a commit each (the attempt, then the settlement), then the retained_purchase JSON
//   POST     /batched-purchase  trustfare's purchase write set on its own tables, concurrent requests written
//                          in batches (batched-purchase.ts), then the retained_purchase JSON; the bearer
//                          token and linked_id of the request are used, the bookings are the ones sent to
//   PUT      /batched-purchase/bookings  (paid in turn), and GET /batched-purchase/batches reports the batch sizes
//   PUT      /payloads/:name  records a payload (the bench sends them before measuring)
//
// Environment: PORT, DATABASE_URL (the bench database), POOL_SIZE (the service's pool size).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import pg from 'pg';
import { hashToken } from '../src/domain/credentials.js';
import { limits } from '../src/limits.js';
import { withAsynchronousCommit } from '../src/processor/index.js';
import { purchaseBatcher } from './batched-purchase.js';

const port = Number(process.env.PORT);
const poolSize = Number(process.env.POOL_SIZE);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: poolSize });
pool.on('error', () => undefined);
// As the service's sandbox processor: its own small pool, committing asynchronously.
const processorPool = new pg.Pool({ connectionString: withAsynchronousCommit(process.env.DATABASE_URL!), max: limits.sandboxDbPoolSize });
processorPool.on('error', () => undefined);

const payloads = new Map<string, { status: number; body: unknown }>();

const selectBooking = { name: 'ceiling_pk', text: 'SELECT * FROM bookings WHERE id = $1' };
const lockAccount = { name: 'ceiling_lock', text: 'SELECT balance FROM bench_ceiling.accounts WHERE id = $1 FOR UPDATE' };
const insertEntry = { name: 'ceiling_insert', text: 'INSERT INTO bench_ceiling.entries (account_id, amount) VALUES ($1, $2) RETURNING id' };
const updateAccount = { name: 'ceiling_update', text: 'UPDATE bench_ceiling.accounts SET balance = balance + $2, modified_at = now() WHERE id = $1' };

// The purchase's API token, as bench/ceiling-schema.sql stores it; hashed once, as the service
// hashes a token once per process.
const purchaseTokenHash = createHash('sha256').update('bench-ceiling').digest('hex');

// The attempt: authenticate, lock the booking, insert the transaction `incomplete`, claim the
// Idempotency-Key; committed before the processor would be called (docs/payments.md, "Processing
// discipline"). bench/pgbench/purchase-two-phases.sql runs the same two statements.
const attemptPurchase = {
  name: 'ceiling_purchase_attempt',
  text: `WITH auth AS (SELECT site_id FROM bench_ceiling.purchase_tokens WHERE hash = $1),
    booking AS (SELECT b.id, b.site_id FROM bench_ceiling.purchase_bookings b JOIN auth ON auth.site_id = b.site_id WHERE b.id = $2 FOR UPDATE OF b),
    inserted AS (INSERT INTO bench_ceiling.purchase_transactions (site_id, booking_id, amount, status) SELECT site_id, id, $3, 'incomplete' FROM booking RETURNING id, site_id),
    claimed AS (INSERT INTO bench_ceiling.purchase_idempotency_keys (site_id, key, transaction_id) SELECT site_id, $4, id FROM inserted)
  SELECT id FROM inserted`,
};
// The settlement: the status, two ledger entries, the booking's money and status, the outbox row,
// the answer stored for the key.
const settlePurchase = {
  name: 'ceiling_purchase_settle',
  text: `WITH settled AS (UPDATE bench_ceiling.purchase_transactions SET status = 'complete' WHERE id = $1 AND status = 'incomplete' RETURNING id, site_id, booking_id, amount),
    entries AS (INSERT INTO bench_ceiling.purchase_ledger_entries (transaction_id, account, amount) SELECT s.id, e.account, e.sign * s.amount FROM settled s CROSS JOIN (VALUES ('card', 1), ('booking', -1)) e (account, sign)),
    paid AS (UPDATE bench_ceiling.purchase_bookings b SET paid = b.paid + s.amount, status = CASE WHEN b.paid + s.amount >= b.total THEN 'paid' ELSE 'part-paid' END, modified_at = now() FROM settled s WHERE b.id = s.booking_id),
    queued AS (INSERT INTO bench_ceiling.purchase_outbox (transaction_id, kind) SELECT id, 'receipt' FROM settled),
    answered AS (UPDATE bench_ceiling.purchase_idempotency_keys k SET answer = $3 FROM settled s WHERE k.site_id = s.site_id AND k.key = $2)
  SELECT id FROM settled`,
};

/** Recreates bench/ceiling-schema.sql's tables; returns how many rows the routes cycle through. */
async function createCeilingTables(): Promise<{ accounts: number; bookings: number }> {
  await pool.query(readFileSync(new URL('./ceiling-schema.sql', import.meta.url), 'utf8'));
  const counts = await pool.query<{ accounts: string; bookings: string }>('SELECT (SELECT count(*) FROM bench_ceiling.accounts) AS accounts, (SELECT count(*) FROM bench_ceiling.purchase_bookings) AS bookings');
  return { accounts: Number(counts.rows[0]!.accounts), bookings: Number(counts.rows[0]!.bookings) };
}

function payload(name: string): { status: number; body: unknown } {
  const found = payloads.get(name);
  if (!found) throw new Error(`no payload ${name}`);
  return found;
}

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });

app.get('/ready', async () => ({ ok: true }));

app.put<{ Params: { name: string }; Body: { status: number; body: unknown } }>('/payloads/:name', async (request) => {
  payloads.set(request.params.name, request.body);
  return { ok: true };
});

const answerJson = async (request: { params: unknown }, reply: { code(status: number): unknown }) => {
  const { status, body } = payload((request.params as { name: string }).name);
  reply.code(status);
  return body;
};
app.get('/json/:name', answerJson);
app.post('/json/:name', answerJson);

app.get<{ Params: { id: string } }>('/pk/:id', async (request, reply) => {
  const result = await pool.query({ ...selectBooking, values: [Number(request.params.id)] });
  if (result.rowCount !== 1) return reply.code(404).send({ code: 'not_found' });
  return payload('get-booking').body;
});

const rows = await createCeilingTables();

let nextAccount = 0;
app.post('/tx', async (_request, reply) => {
  nextAccount = (nextAccount % rows.accounts) + 1;
  const accountId = nextAccount;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query({ ...lockAccount, values: [accountId] });
    await client.query({ ...insertEntry, values: [accountId, 125_000] });
    await client.query({ ...updateAccount, values: [accountId, 125_000] });
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
  const { status, body } = payload('post-retained-purchase');
  reply.code(status);
  return body;
});

let nextBooking = 0;
let nextKey = 0;
app.post('/purchase', async (_request, reply) => {
  nextBooking = (nextBooking % rows.bookings) + 1;
  nextKey += 1;
  const key = `ceiling-${nextKey}`;
  const { status, body } = payload('post-retained-purchase');
  const attempted = await pool.query<{ id: string }>({ ...attemptPurchase, values: [purchaseTokenHash, nextBooking, 125_000, key] });
  if (attempted.rowCount !== 1) throw new Error(`the purchase attempt wrote ${attempted.rowCount} rows`);
  // The processor call would be here, between the two commits. The answer is serialised once: it
  // is both stored for the key and sent.
  const answer = JSON.stringify(body);
  const settled = await pool.query({ ...settlePurchase, values: [attempted.rows[0]!.id, key, answer] });
  if (settled.rowCount !== 1) throw new Error(`the purchase settlement wrote ${settled.rowCount} rows`);
  reply.code(status).type('application/json; charset=utf-8');
  return answer;
});

// Up to 3 batches in flight (each holds one connection at a time), of at most 25 purchases: in
// session 12's trials on this machine, batches of about 10 formed under 50 connections.
const batchSizes: number[] = [];
const batcher = purchaseBatcher(pool, processorPool, {
  batchMax: 25, inFlightMax: 3, answer: () => JSON.stringify(payload('post-retained-purchase').body), onBatch: (size) => batchSizes.push(size),
});
let batchedBookings: number[] = [];
let nextBatchedBooking = 0;
let nextBatchedKey = 0;
const tokenHashes = new Map<string, string>();
app.put<{ Body: { ids: number[] } }>('/batched-purchase/bookings', async (request) => {
  batchedBookings = request.body.ids;
  nextBatchedBooking = 0;
  return { ok: true };
});
app.get('/batched-purchase/batches', async () => {
  const sizes = batchSizes.splice(0);
  return { batches: sizes.length, purchases: sizes.reduce((sum, size) => sum + size, 0) };
});
app.post<{ Body: { linked_id?: number } }>('/batched-purchase', async (request, reply) => {
  if (batchedBookings.length === 0) throw new Error('no bookings: PUT /batched-purchase/bookings first');
  // The service hashes a token once per process too (a bounded cache).
  const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
  let tokenHash = tokenHashes.get(token);
  if (tokenHash === undefined) tokenHashes.set(token, (tokenHash = hashToken(token)));
  const bookingId = batchedBookings[nextBatchedBooking++ % batchedBookings.length]!;
  await batcher.add({ tokenHash, linkedId: Number(request.body.linked_id), bookingId, key: `batched-${++nextBatchedKey}` });
  const { status, body } = payload('post-retained-purchase');
  reply.code(status);
  return body;
});

await app.listen({ host: '127.0.0.1', port });
const stop = async () => {
  await app.close();
  await pool.end();
  await processorPool.end();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
