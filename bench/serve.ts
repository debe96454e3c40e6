// `npm run bench:serve`: the bench's service and ceiling server with its tenant and data, left
// running so another load generator can replay the scenarios (docs/performance.md "Replaying
// with another load generator"). Writes the replay kit (replay-kit.ts) and prints where.
//
// Settings (environment): DATABASE_URL (as `npm run bench`), WORKERS (default 1),
// BENCH_REPLAY_PURCHASES fresh bookings for POST retained_purchase (default 80000: a warm-up's
// 20,000 and 10 s runs at a few thousand a second),
// BENCH_REPLAY_HISTORY purchases made before ANALYZE (default 2000; see below),
// BENCH_REPLAY_DIR (default $TMPDIR/trustfare-replay), BENCH_KEEP=1, BENCH_LOG_LEVEL,
// BENCH_PG_STATS=1 (the embedded server loads pg_stat_statements; the kit says how to read it).
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb, type Db } from '../src/storage/db.js';
import { bookingInput, callOk, createTenant, freshBookingIds, retainedPurchaseInput, samplePurchase, vaultTestCard } from './fixtures.js';
import { batchedPurchaseBookings } from './batched-purchase.js';
import { sendMany } from './load.js';
import type { Child } from './processes.js';
import { replayKit } from './replay-kit.js';
import { openWorkspace, postgresLogFile, progress, root, secrets, startCeiling, startService, type StackSettings } from './stack.js';

const purchasesMax = 1_000_000;
// About 3 s of GET booking at this machine's rate: what `npm run bench` warms up with.
const readWarmupRequests = 20_000;

export async function main(): Promise<number> {
  const settings: StackSettings = { externalUrl: process.env.DATABASE_URL || undefined, keep: process.env.BENCH_KEEP === '1', nodeEnv: 'production', logLevel: process.env.BENCH_LOG_LEVEL ?? 'warn', statementStats: process.env.BENCH_PG_STATS === '1' };
  if (settings.statementStats && settings.externalUrl) throw new Error('BENCH_PG_STATS=1 needs the embedded server: load pg_stat_statements into your own server instead');
  const purchases = Number(process.env.BENCH_REPLAY_PURCHASES ?? 80_000);
  if (!Number.isSafeInteger(purchases) || purchases < 1 || purchases > purchasesMax) throw new Error(`BENCH_REPLAY_PURCHASES must be an integer from 1 to ${purchasesMax}`);
  const history = Number(process.env.BENCH_REPLAY_HISTORY ?? 2_000);
  if (!Number.isSafeInteger(history) || history < 0 || history > purchasesMax) throw new Error(`BENCH_REPLAY_HISTORY must be an integer from 0 to ${purchasesMax}`);
  const workers = Number(process.env.WORKERS ?? 1);
  const directory = path.resolve(process.env.BENCH_REPLAY_DIR ?? path.join(os.tmpdir(), 'trustfare-replay'));
  const workspace = await openWorkspace(settings);
  const children: Child[] = [];
  let db: Db | null = null;
  try {
    const service = await startService(settings, workspace, workers, 'serve', secrets());
    children.push(service.child);
    db = createDb(workspace.databaseUrl, 2);
    const tenant = await createTenant(db, service.baseUrl);
    const ceiling = await startCeiling(workspace);
    children.push(ceiling.child);

    const bookingBody = JSON.stringify(bookingInput(tenant));
    const getBooking = await callOk(service.baseUrl, 'POST', `${tenant.apiPrefix}/bookings`, { headers: tenant.headers, body: JSON.parse(bookingBody) });
    const getBookingId = Number(getBooking.json.id);
    const getAnswer = await callOk(service.baseUrl, 'GET', `${tenant.apiPrefix}/bookings/${getBookingId}`, { headers: tenant.headers });
    await ceiling.setPayload('get-booking', 200, getAnswer.json);

    const vaultTransactionId = await vaultTestCard(service.baseUrl, tenant);
    const allBookingIds = await freshBookingIds(db, service.baseUrl, tenant, {
      count: history + purchases + 1 + batchedPurchaseBookings, excludedId: getBookingId, connections: 50, onCreate: (missing) => progress(`creating ${missing} bookings`),
    });
    // The bare batched purchase pays its own bookings in turn, as in `npm run bench`.
    await callOk(ceiling.baseUrl, 'PUT', '/batched-purchase/bookings', { body: { ids: allBookingIds.slice(-batchedPurchaseBookings) } });
    const bookingIds = allBookingIds.slice(0, -batchedPurchaseBookings);
    const bodies = bookingIds.map((bookingId) => JSON.stringify(retainedPurchaseInput(tenant, { bookingId, vaultTransactionId })));
    // One purchase now: its answer is what the ceiling's /tx sends back.
    const sample = await samplePurchase(service.baseUrl, tenant, { body: bodies[0]!, keyPrefix: 'replay-sample-' });
    await ceiling.setPayload('post-retained-purchase', sample.status, sample.json);
    // A database with history, as `npm run bench` has after its warm-ups and any installation has
    // once autovacuum ran: some purchases, then ANALYZE. Without it the prepared statements keep
    // plans made for empty tables (docs/performance-history.md, session 2, finding 1).
    let next = 1;
    if (history > 0) {
      progress(`making ${history} purchases of history`);
      const path = `${tenant.apiPrefix}/transactions`;
      const body = () => ({ body: bodies[next]!, headers: { 'idempotency-key': `replay-history-${randomBytes(6).toString('hex')}-${next++}` } });
      await sendMany({ name: 'history', description: '', baseUrl: service.baseUrl, method: 'POST', path, headers: tenant.headers, body, requestBytes: 0, responseBytes: 0 }, 50, history);
      // The same for the ceiling's bare two-phase purchase, whose tables start empty too.
      await sendMany({ name: 'ceiling history', description: '', baseUrl: ceiling.baseUrl, method: 'POST', path: '/purchase', body: bodies[0]!, headers: {}, requestBytes: 0, responseBytes: 0 }, 50, history);
    }
    await db.query('ANALYZE');
    // Warm both servers' read paths as `npm run bench` does before measuring: a fresh Node process
    // serves its first seconds unoptimised, and wrk runs started on it read low (session 5:
    // 0.71 and 0.75 of the ceiling for the first two GET booking runs, 0.79–0.81 after).
    progress(`warming the read paths (${readWarmupRequests} requests each)`);
    const read = (name: string, baseUrl: string, path: string, headers: Record<string, string>) =>
      sendMany({ name, description: '', baseUrl, method: 'GET', path, headers, requestBytes: 0, responseBytes: 0 }, 50, readWarmupRequests);
    await read('warm-up GET booking', service.baseUrl, `${tenant.apiPrefix}/bookings/${getBookingId}`, tenant.headers);
    await read('warm-up PK select', ceiling.baseUrl, `/pk/${getBookingId}`, {});
    await read('warm-up transactions page', service.baseUrl, `${tenant.apiPrefix}/transactions?per_page=20`, tenant.headers);

    const files = replayKit({
      serviceUrl: service.baseUrl, ceilingUrl: ceiling.baseUrl, authorization: tenant.headers.authorization, apiPrefix: tenant.apiPrefix, getBookingId, bookingBody,
      // Bodies from `next` on: none of them was sent (the history took those before).
      retainedPurchaseBodies: bodies.slice(next), runId: randomBytes(4).toString('hex'), directory, scriptsDirectory: path.join(root, 'bench/replay'), listPerPage: 20,
    });
    rmSync(directory, { recursive: true, force: true });
    mkdirSync(directory, { recursive: true });
    for (const [name, content] of Object.entries(files)) writeFileSync(path.join(directory, name), content);
    process.stdout.write(`${files['README.txt']}\nReplay kit: ${directory}\n`);
    if (settings.statementStats) process.stdout.write(`${statementStatsHelp(workspace.databaseUrl, workspace.dataDir)}\n`);
    await stopped(children);
    return 0;
  } finally {
    for (const child of children) await child.stop(5_000);
    await db?.close();
    await workspace.dispose();
  }
}

/** Until SIGINT or SIGTERM, or until the service or the ceiling server exits on its own. */
function stopped(children: Child[]): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const done = (reason: string) => {
      if (stopping) return;
      stopping = true;
      progress(`stopping (${reason})`);
      resolve();
    };
    process.once('SIGINT', () => done('SIGINT'));
    process.once('SIGTERM', () => done('SIGTERM'));
    for (const child of children) void child.exited.then((code) => done(`${child.logFile}: exited with ${code}`));
  });
}

/** How to read what the database did during a replay (BENCH_PG_STATS=1). */
function statementStatsHelp(databaseUrl: string, dataDir: string): string {
  return [
    'pg_stat_statements is loaded. Reset it after the warm-up, replay, then read it:',
    `  psql '${databaseUrl}' -c 'SELECT pg_stat_statements_reset()'`,
    `  psql '${databaseUrl}' -c "SELECT calls, round(total_exec_time) AS ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25"`,
    `The plans of slow statements, with their timings, go to the server's log, ${postgresLogFile(dataDir)}, after:`,
    `  psql '${databaseUrl}' -c "ALTER SYSTEM SET session_preload_libraries = 'auto_explain'" -c "ALTER SYSTEM SET auto_explain.log_min_duration = '5ms'" -c 'ALTER SYSTEM SET auto_explain.log_analyze = on' -c 'ALTER SYSTEM SET auto_explain.log_nested_statements = on' -c 'SELECT pg_reload_conf()'`,
    '  (new connections only: the pools replace theirs after 10 s idle; ALTER SYSTEM RESET ALL and a reload undo it)',
  ].join('\n');
}
