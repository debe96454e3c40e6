// Failure drills under load (docs/scaling.md "Failure drills"): the built server (`node
// scripts/build.mjs`) on its own DATA_DIR and embedded PostgreSQL, 40 retained purchases and 20
// refunds in flight at once with Idempotency-Keys, then one thing broken:
//   sigterm  the server stopped gracefully, then started again
//   sigkill  the server killed, then started again
//   worker   WORKERS=2 and one worker killed (the primary replaces it)
//   pgkill   the embedded PostgreSQL's postmaster killed (the server starts it again)
//   smtp     SMTP_URL on a closed port, then a relay there
// Every request is then sent again with its key until it gets an answer that is not "try again",
// as an integrator would, and the drill checks: one transaction per key, no processor operation
// without its row nor a row whose outcome differs from the processor's (after reconciliation),
// booking totals, `trustfare ledger verify` and `totals verify`, each mail sent once.
//   npx tsx bench/drills.ts <drill> [port]   (DRILL_LATENCY_MS, DRILL_KILL_AFTER_MS, DRILL_LOG_LEVEL, DRILL_WORKERS)
// Data under /tmp/chaos/<drill>, kept for a look afterwards. Not part of `npm run bench`.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { childPids, commandLine } from './processes.js';

const drill = process.argv[2] ?? 'sigterm';
const port = Number(process.argv[3] ?? 4410);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dataDir = `/tmp/chaos/${drill}`;
const base = `http://127.0.0.1:${port}`;
const purchases = Number(process.env.DRILL_PURCHASES ?? 40);
const refunds = Number(process.env.DRILL_REFUNDS ?? 20);
const log = (m: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 23)}] ${m}\n`);

interface Server { child: ChildProcess; exited: Promise<{ code: number | null; signal: string | null }>; logFile: string }

function startServer(extra: Record<string, string> = {}, label = 'a'): Server {
  const logFile = path.join(dataDir, `server-${label}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [path.join(root, 'dist/server.js')], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'development', LOG_LEVEL: process.env.DRILL_LOG_LEVEL ?? 'warn', RATE_LIMIT_PER_MINUTE: '10000000', PROCESSOR_TIMEOUT_MS: '3000', SANDBOX_LATENCY_MS: process.env.DRILL_LATENCY_MS ?? '400', ...extra },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, exited, logFile };
}

async function ready(timeoutMs = 60_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    try {
      const r = await fetch(`${base}/readyz`);
      await r.arrayBuffer();
      if (r.status === 200) return Date.now() - started;
    } catch {}
    await sleep(100);
  }
  throw new Error('not ready');
}

interface Answer { status: number; json: any; text: string; headers: Headers }
async function call(method: string, p: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 90_000): Promise<Answer> {
  const r = await fetch(base + p, { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), authorization: `Bearer ${token}`, ...headers }, body: body ? JSON.stringify(body) : undefined, signal: AbortSignal.timeout(timeoutMs) });
  const text = await r.text();
  let json: any = null;
  try { json = JSON.parse(text); } catch {}
  return { status: r.status, json, text, headers: r.headers };
}

let token = '';
const api = '/demo/site-json/vendor/v2';

async function db(): Promise<pg.Client> {
  const lines = readFileSync(path.join(dataDir, 'pg/postmaster.pid'), 'utf8').split('\n');
  const password = readFileSync(path.join(dataDir, 'pg-password'), 'utf8').trim();
  const client = new pg.Client({ connectionString: `postgres://postgres:${password}@127.0.0.1:${lines[3]}/trustfare` });
  await client.connect();
  return client;
}

interface Req { key: string; kind: 'purchase' | 'refund'; bookingId: number; body: any; first?: { status?: number; code?: string; error?: string; ms: number }; last?: Answer; tries: number }

function classify(a: Answer): string { return `${a.status}${a.json?.code ? ' ' + a.json.code : ''}${a.json?.status ? ' ' + a.json.status : ''}`; }

async function fire(reqs: Req[]): Promise<void> {
  await Promise.all(reqs.map(async (r) => {
    const t = Date.now();
    try {
      const a = await call('POST', `${api}/transactions`, r.body, { 'idempotency-key': r.key });
      r.first = { status: a.status, code: a.json?.code ?? a.json?.status, ms: Date.now() - t };
      if (a.status >= 400) log(`  ${r.key} first answer ${a.status} ${a.text.slice(0, 300)} ${JSON.stringify(Object.fromEntries(a.headers))}`);
      r.last = a;
    } catch (e: any) {
      r.first = { error: `${e.name}: ${e.cause?.code ?? e.message}`, ms: Date.now() - t };
    }
  }));
}

/** Retries each request with its key until it gets an answer that is not "try again". */
async function converge(reqs: Req[], deadlineMs = 150_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  let open = reqs;
  while (open.length && Date.now() < until) {
    await Promise.all(open.map(async (r) => {
      r.tries += 1;
      try { r.last = await call('POST', `${api}/transactions`, r.body, { 'idempotency-key': r.key }); } catch (e: any) { r.last = undefined; }
    }));
    open = reqs.filter((r) => !r.last || r.last.status >= 500 || r.last.status === 409 || r.last.status === 429);
    if (open.length) { log(`  ${open.length} still to retry: ${[...new Set(open.map((r) => (r.last ? classify(r.last) : 'no answer')))].join(', ')}`); await sleep(2000); }
  }
}

function summary(reqs: Req[], which: 'first' | 'last'): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of reqs) {
    const k = which === 'first' ? (r.first?.error ?? `${r.first?.status} ${r.first?.code ?? ''}`) : (r.last ? classify(r.last) : 'no answer');
    out[`${r.kind} ${k}`] = (out[`${r.kind} ${k}`] ?? 0) + 1;
  }
  return out;
}

async function cli(...args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [path.join(root, 'bin/trustfare.mjs'), ...args], { cwd: root, env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), NODE_ENV: 'development', LOG_LEVEL: 'silent' } });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (out += d));
    c.on('exit', (code) => resolve(`exit ${code}: ${out.trim().slice(0, 600)}`));
  });
}

async function checks(reqs: Req[], waitReconcile = true): Promise<string[]> {
  const problems: string[] = [];
  const client = await db();
  try {
    if (waitReconcile) {
      for (let i = 0; i < 60; i++) {
        const { rows } = await client.query("SELECT count(*)::int AS n FROM transactions WHERE status IN ('incomplete','pending')");
        if (rows[0].n === 0) break;
        if (i % 5 === 0) log(`  ${rows[0].n} incomplete/pending rows, waiting for reconciliation`);
        await sleep(3000);
      }
    }
    const { rows: left } = await client.query("SELECT id, type, status, content FROM transactions WHERE status IN ('incomplete','pending')");
    if (left.length) problems.push(`unsettled rows: ${JSON.stringify(left)}`);
    for (const r of reqs) {
      const rows = r.kind === 'purchase'
        ? (await client.query("SELECT t.id, t.status FROM transactions t JOIN transaction_bookings tb ON tb.transaction_id = t.id WHERE tb.booking_id = $1 AND t.type = 'retained_purchase'", [r.bookingId])).rows
        : (await client.query("SELECT id, status FROM transactions WHERE linked_id = $1 AND type = 'refund'", [r.body.linked_id])).rows;
      if (rows.length !== 1) problems.push(`${r.key}: ${rows.length} transactions ${JSON.stringify(rows)}`);
      else if (r.last?.status === 201 && Number(r.last.json?.id) !== Number(rows[0].id)) problems.push(`${r.key}: answered id ${r.last.json?.id}, row ${rows[0].id}`);
      else if (r.last && r.last.json?.status && r.last.json.status !== rows[0].status) problems.push(`${r.key}: last answer said ${r.last.json.status}, row is ${rows[0].status} (answer was before reconciliation)`);
    }
    const orphans = (await client.query("SELECT s.reference, s.kind, s.status, s.amount FROM sandbox_operations s LEFT JOIN transactions t ON t.uuid::text = s.reference WHERE t.id IS NULL")).rows;
    if (orphans.length) problems.push(`processor operations with no transaction: ${JSON.stringify(orphans.slice(0, 5))} (${orphans.length})`);
    const mismatch = (await client.query("SELECT t.id, t.type, t.status, s.status AS processor FROM transactions t JOIN sandbox_operations s ON s.reference = t.uuid::text WHERE (s.status = 'approved') <> (t.status = 'complete')")).rows;
    if (mismatch.length) problems.push(`processor outcome differs from the row: ${JSON.stringify(mismatch.slice(0, 5))} (${mismatch.length})`);
    const paid = (await client.query(`SELECT b.id, b.total_paid, b.status, coalesce(sum(CASE WHEN t.type = 'refund' THEN -tb.total ELSE tb.total END) FILTER (WHERE t.status = 'complete'), 0)::bigint AS sum
      FROM bookings b LEFT JOIN transaction_bookings tb ON tb.booking_id = b.id LEFT JOIN transactions t ON t.id = tb.transaction_id GROUP BY b.id HAVING b.total_paid <> coalesce(sum(CASE WHEN t.type = 'refund' THEN -tb.total ELSE tb.total END) FILTER (WHERE t.status = 'complete'), 0)`)).rows;
    if (paid.length) problems.push(`bookings whose total_paid differs from their complete transactions: ${JSON.stringify(paid.slice(0, 5))}`);
    const keys = (await client.query("SELECT status, count(*)::int AS n FROM idempotency_keys GROUP BY status")).rows;
    log(`  idempotency keys: ${JSON.stringify(keys)}`);
    const tx = (await client.query("SELECT type, status, count(*)::int AS n FROM transactions GROUP BY 1,2 ORDER BY 1,2")).rows;
    log(`  transactions: ${JSON.stringify(tx)}`);
  } finally {
    await client.end();
  }
  const ledger = await cli('ledger', 'verify');
  log(`  ledger verify: ${ledger.replace(/\s+/g, ' ').slice(0, 200)}`);
  if (!ledger.startsWith('exit 0')) problems.push(`ledger verify: ${ledger}`);
  const totals = await cli('totals', 'verify');
  log(`  totals verify: ${totals.replace(/\s+/g, ' ').slice(0, 200)}`);
  if (!totals.startsWith('exit 0')) problems.push(`totals verify: ${totals}`);
  return problems;
}

async function setUp(server: Server): Promise<{ reqs: Req[] }> {
  await ready();
  for (let i = 0; i < 50 && !token; i++) {
    const m = /API token\s+(tfat_\S+)/.exec(readFileSync(server.logFile, 'utf8'));
    if (m) token = m[1]!; else await sleep(100);
  }
  if (!token) throw new Error('no token in the banner');
  const vault = await call('POST', `${api}/transactions`, { transaction_types: 'vault', channels: 1, currencies: 'USD', total: 0, token: 'tok_visa' });
  const vaultId = vault.json.id;
  const booking = async () => (await call('POST', `${api}/bookings`, { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2027-06-30', total: 125000, currencies: 'USD', countries: 'GB', channels: 1 })).json.id as number;
  const purchaseBody = (bookingId: number) => ({ transaction_types: 'retained_purchase', channels: 1, currencies: 'USD', total: 125000, linked_id: vaultId, bookings: [{ id: bookingId, currencies: 'USD', total: 125000 }] });
  const reqs: Req[] = [];
  for (let i = 0; i < refunds; i++) {
    const id = await booking();
    const paid = await call('POST', `${api}/transactions`, purchaseBody(id), { 'idempotency-key': `pre-${i}` });
    if (paid.json?.status !== 'complete') throw new Error(`pre-payment ${paid.text}`);
    reqs.push({ key: `refund-${i}`, kind: 'refund', bookingId: id, tries: 0, body: { transaction_types: 'refund', channels: 1, currencies: 'USD', total: 50000, linked_id: paid.json.id, bookings: [{ id, currencies: 'USD', total: 50000 }] } });
  }
  for (let i = 0; i < purchases; i++) {
    const id = await booking();
    reqs.push({ key: `purchase-${i}`, kind: 'purchase', bookingId: id, tries: 0, body: purchaseBody(id) });
  }
  return { reqs };
}

/** The primary's children are its workers and the embedded postmaster. */
function workerPids(primaryPid: number): number[] {
  return childPids(primaryPid).filter((pid) => commandLine(pid).includes('server.js'));
}

async function main(): Promise<void> {
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const extra: Record<string, string> = {};
  if (drill === 'worker') extra.WORKERS = '2';
  if (process.env.DRILL_WORKERS) extra.WORKERS = process.env.DRILL_WORKERS;
  if (drill === 'smtp') extra.SMTP_URL = `smtp://127.0.0.1:${port + 1}`;
  let server = startServer(extra);
  const { reqs } = await setUp(server);
  log(`${drill}: ${purchases} purchases + ${refunds} refunds set up; firing`);
  const started = Date.now();
  const firing = fire(reqs);
  await sleep(Number(process.env.DRILL_KILL_AFTER_MS ?? 200));
  let problems: string[] = [];
  if (drill === 'sigterm' || drill === 'sigkill') {
    const signal = drill === 'sigterm' ? 'SIGTERM' : 'SIGKILL';
    server.child.kill(signal);
    log(`sent ${signal} at ${Date.now() - started} ms`);
    const exit = await server.exited;
    log(`server exited ${JSON.stringify(exit)} at ${Date.now() - started} ms`);
    await firing;
    log(`first answers: ${JSON.stringify(summary(reqs, 'first'))}`);
    const slow = reqs.filter((r) => r.first!.ms > 20_000);
    if (slow.length) problems.push(`${slow.length} requests took over 20 s`);
    server = startServer(extra, 'b');
    log(`restarted; ready in ${await ready()} ms`);
    const c = await db();
    log(`  before retries: keys ${JSON.stringify((await c.query('SELECT status, transaction_id IS NOT NULL AS has_tx, count(*)::int AS n FROM idempotency_keys GROUP BY 1, 2')).rows)}, transactions ${JSON.stringify((await c.query('SELECT type, status, count(*)::int AS n FROM transactions GROUP BY 1, 2')).rows)}, processor ops ${JSON.stringify((await c.query('SELECT kind, status, count(*)::int AS n FROM sandbox_operations GROUP BY 1, 2')).rows)}`);
    await c.end();
  } else if (drill === 'worker') {
    const workers = workerPids(server.child.pid!);
    log(`workers ${workers.join(',')}; killing ${workers[0]} with SIGKILL`);
    process.kill(workers[0]!, 'SIGKILL');
    await firing;
    log(`first answers: ${JSON.stringify(summary(reqs, 'first'))}`);
    // the other worker keeps serving meanwhile
    const probe = await Promise.all(Array.from({ length: 20 }, () => call('GET', `${api}/bookings/${reqs[0]!.bookingId}`).then((a) => a.status).catch((e) => String(e.cause?.code ?? e))));
    log(`20 GETs right after: ${JSON.stringify(probe.reduce((o: any, s) => ((o[s] = (o[s] ?? 0) + 1), o), {}))}`);
    await sleep(3000);
    log(`workers now ${workerPids(server.child.pid!).join(',')}`);
  } else if (drill === 'pgkill') {
    const pgPid = Number(readFileSync(path.join(dataDir, 'pg/postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pgPid, 'SIGKILL');
    log(`killed postmaster ${pgPid} at ${Date.now() - started} ms`);
    // keep the load going during the outage: new requests too
    const during: Answer[] = [];
    const errs: string[] = [];
    const t0 = Date.now();
    while (Date.now() - t0 < 4000) {
      try { during.push(await call('GET', `${api}/bookings/${reqs[0]!.bookingId}`, undefined, {}, 20_000)); } catch (e: any) { errs.push(String(e.cause?.code ?? e.name)); }
      await sleep(100);
    }
    await firing;
    log(`first answers: ${JSON.stringify(summary(reqs, 'first'))}`);
    log(`GETs during the outage: ${JSON.stringify(during.map(classify).reduce((o: any, s) => ((o[s] = (o[s] ?? 0) + 1), o), {}))} errors ${errs.length}`);
    const badShape = [...reqs.map((r) => r.last).filter(Boolean), ...during].filter((a) => a!.status >= 400 && !(a!.json && 'code' in a!.json && 'message' in a!.json && 'data' in a!.json));
    if (badShape.length) problems.push(`answers outside the error shape: ${badShape.slice(0, 3).map((a) => `${a!.status} ${a!.text.slice(0, 200)}`).join(' | ')}`);
    const slow = reqs.filter((r) => r.first!.ms > 35_000);
    if (slow.length) problems.push(`${slow.length} requests took over 35 s`);
    log(`ready again in ${await ready()} ms`);
  } else if (drill === 'smtp') {
    await firing;
    log(`first answers: ${JSON.stringify(summary(reqs, 'first'))}`);
  }
  await converge(reqs);
  log(`after retries: ${JSON.stringify(summary(reqs, 'last'))}; tries ${reqs.reduce((n, r) => n + r.tries, 0)}`);
  const unanswered = reqs.filter((r) => !r.last || r.last.status >= 500 || r.last.status === 409);
  if (unanswered.length) problems.push(`${unanswered.length} never converged: ${unanswered.slice(0, 3).map((r) => `${r.key} ${r.last ? r.last.text.slice(0, 200) : 'no answer'}`).join(' | ')}`);
  problems.push(...(await checks(reqs)));
  if (drill === 'smtp') problems.push(...(await smtpDrill()));
  log(problems.length ? `PROBLEMS:\n  ${problems.join('\n  ')}` : 'no problems found');
  server.child.kill('SIGTERM');
  log(`final stop: ${JSON.stringify(await server.exited)}`);
}

/** SMTP drill, second half: a relay on port+1 comes up; every mail arrives once. */
async function smtpDrill(): Promise<string[]> {
  const problems: string[] = [];
  const received: string[] = [];
  const relay = net.createServer((socket) => {
    let data = false;
    let buffer = '';
    let message = '';
    socket.write('220 drill ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      let i: number;
      while ((i = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        if (data) {
          if (line === '.') { data = false; received.push(message); message = ''; socket.write('250 queued\r\n'); } else message += line + '\n';
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO') socket.write('250-drill\r\n250 8BITMIME\r\n');
        else if (verb === 'HELO' || verb === 'MAIL' || verb === 'RCPT' || verb === 'RSET' || verb === 'NOOP') socket.write('250 ok\r\n');
        else if (verb === 'DATA') { data = true; socket.write('354 go\r\n'); }
        else if (verb === 'QUIT') { socket.write('221 bye\r\n'); socket.end(); }
        else socket.write('502 no\r\n');
      }
    });
  });
  const client = await db();
  try {
    const before = (await client.query('SELECT status, count(*)::int AS n FROM email_outbox GROUP BY 1')).rows;
    log(`  outbox with the relay down: ${JSON.stringify(before)}`);
    await new Promise<void>((resolve) => relay.listen(port + 1, '127.0.0.1', resolve));
    log('  relay up');
    for (let i = 0; i < 60; i++) {
      const { rows } = await client.query("SELECT count(*)::int AS n FROM email_outbox WHERE status NOT IN ('sent', 'failed')");
      if (rows[0].n === 0) break;
      if (i % 5 === 0) log(`  ${rows[0].n} mails waiting`);
      await sleep(3000);
    }
    const after = (await client.query('SELECT status, count(*)::int AS n FROM email_outbox GROUP BY 1')).rows;
    log(`  outbox after: ${JSON.stringify(after)}; relay received ${received.length}`);
    const ids = received.map((m) => /^Message-ID:\s*(.+)$/im.exec(m)?.[1] ?? '?');
    const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (dup.length) problems.push(`mails received twice: ${dup.slice(0, 5).join(', ')}`);
    const sent = (await client.query("SELECT count(*)::int AS n FROM email_outbox WHERE status = 'sent'")).rows[0].n;
    if (sent !== received.length) problems.push(`outbox says ${sent} sent, relay received ${received.length}`);
    const notSent = (await client.query("SELECT id, status, attempts, last_error FROM email_outbox WHERE status <> 'sent' LIMIT 5")).rows;
    if (notSent.length) problems.push(`mails not sent: ${JSON.stringify(notSent)}`);
  } finally {
    await client.end();
    relay.close();
  }
  return problems;
}

main().then(() => process.exit(0), (error) => { console.error(error); process.exit(1); });
