// The ceilings the service is measured against: bare Fastify routes on plain `pg`, no auth, no
// validation, no logging, in their own process, on the same machine and PostgreSQL server.
//
//   GET|POST /json/:name   answers the recorded JSON of a scenario (the same payload the service sends)
//   GET      /pk/:id       one primary-key select (named statement) on bookings, then the GET booking JSON
//   POST     /tx           BEGIN; SELECT ... FOR UPDATE; INSERT; UPDATE; COMMIT on a fresh row each time,
//                          then the retained_purchase JSON
//   PUT      /payloads/:name  records a payload (the bench sends them before measuring)
//
// Environment: PORT, DATABASE_URL (the bench database), POOL_SIZE (the service's pool size).
import Fastify from 'fastify';
import pg from 'pg';

const port = Number(process.env.PORT);
const poolSize = Number(process.env.POOL_SIZE);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: poolSize });
pool.on('error', () => undefined);

const accountsCount = 200_000;
const payloads = new Map<string, { status: number; body: unknown }>();

const selectBooking = { name: 'ceiling_pk', text: 'SELECT * FROM bookings WHERE id = $1' };
const lockAccount = { name: 'ceiling_lock', text: 'SELECT balance FROM bench_ceiling.accounts WHERE id = $1 FOR UPDATE' };
const insertEntry = { name: 'ceiling_insert', text: 'INSERT INTO bench_ceiling.entries (account_id, amount) VALUES ($1, $2) RETURNING id' };
const updateAccount = { name: 'ceiling_update', text: 'UPDATE bench_ceiling.accounts SET balance = balance + $2, modified_at = now() WHERE id = $1' };

async function createCeilingTables(): Promise<void> {
  await pool.query(`
    CREATE SCHEMA IF NOT EXISTS bench_ceiling;
    DROP TABLE IF EXISTS bench_ceiling.entries, bench_ceiling.accounts;
    CREATE TABLE bench_ceiling.accounts (id bigint PRIMARY KEY, balance bigint NOT NULL DEFAULT 0, modified_at timestamptz NOT NULL DEFAULT now());
    CREATE TABLE bench_ceiling.entries (id bigserial PRIMARY KEY, account_id bigint NOT NULL REFERENCES bench_ceiling.accounts(id), amount bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
    INSERT INTO bench_ceiling.accounts (id) SELECT generate_series(1, ${accountsCount});
    ANALYZE bench_ceiling.accounts;`);
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

let nextAccount = 0;
app.post('/tx', async (_request, reply) => {
  nextAccount = (nextAccount % accountsCount) + 1;
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

await createCeilingTables();
await app.listen({ host: '127.0.0.1', port });
const stop = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
