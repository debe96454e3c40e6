// `npm run bench`: the service against the ceilings of this machine (see docs/performance.md).
//
// Settings (environment): BENCH_DURATION seconds per measured run (default 10), BENCH_WARMUP
// seconds of discarded warm-up before each (default 3), BENCH_CONNECTIONS (default 50),
// BENCH_LIST_PER_PAGE (default 20), BENCH_SLICES (slices per side of the two target scenarios
// and their ceilings, measured interleaved: default 4), DATABASE_URL (an external PostgreSQL server: the bench
// creates and drops its own database there; default: the embedded PostgreSQL in a fresh
// DATA_DIR under /tmp), BENCH_KEEP=1 keeps that directory (and the external database), BENCH_STRICT=1 also fails on a
// missed target, BENCH_ONLY=get,retained,post,list,workers,startup runs only those groups
// (for development; workers and list need get). Exit status 0 when every request of every run got a 2xx answer.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { limits } from '../src/limits.js';
import { createDb, type Db } from '../src/storage/db.js';
import { bookingInput, callOk, createTenant, freshBookingIds, retainedPurchaseInput, samplePurchase, vaultTestCard, type Tenant } from './fixtures.js';
import { batchedPurchaseBookings } from './batched-purchase.js';
import { FreshPurchases, freshBookingsNeeded, inFlightBoundMs, mailDrainBoundMs } from './purchases.js';
import { interleavedSideSeconds, measure, measureInterleaved, type LoadOptions, type Measurement, type Scenario } from './load.js';
import { childPids, commandLine, residentBytes, type Child } from './processes.js';
import { openWorkspace, progress, root, secrets, startCeiling, startService, stopService, type Ceiling, type Service, type StackSettings, type Workspace } from './stack.js';
import { combine, compare, cpuBudget, floorAgainst, summary, target, writeResults, type Results, type ScenarioResult } from './report.js';

interface Settings extends LoadOptions, StackSettings {
  listPerPage: number;
  /** Slices per side of an interleaved measurement (load.ts `measureInterleaved`). */
  slices: number;
  strict: boolean;
  /** BENCH_ONLY=get,retained,post,list,workers,startup: run only these groups (development). */
  only: string[] | null;
}

function readSettings(): Settings {
  const number = (name: string, fallback: number) => {
    const value = Number(process.env[name] ?? fallback);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`);
    return value;
  };
  return {
    durationSeconds: number('BENCH_DURATION', 10),
    warmupSeconds: number('BENCH_WARMUP', 3),
    connections: number('BENCH_CONNECTIONS', 50),
    listPerPage: number('BENCH_LIST_PER_PAGE', 20),
    slices: Math.max(1, Math.round(number('BENCH_SLICES', 4))),
    externalUrl: process.env.DATABASE_URL || undefined,
    keep: process.env.BENCH_KEEP === '1',
    strict: process.env.BENCH_STRICT === '1',
    only: process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((group) => group.trim()) : null,
    nodeEnv: 'production',
    // Request logging off in the service as in the ceilings; warnings and errors still logged.
    logLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
  };
}

/** The ceilings' names, as results.json and the summary show them. */
const ceilingNames = { pk: 'bare PK select', tx: 'bare 3-statement tx', purchase: 'bare two-phase purchase', batched: 'bare batched purchase' } as const;

/** The name of a ceiling measured in slices interleaved with its scenario's (Runs.runInterleaved). */
function interleavedName(ceiling: string): string {
  return `${ceiling}, interleaved`;
}

/** Between two slices: the few requests autocannon left in flight answer within milliseconds. */
const settleMs = 200;

function bytes(text: string): number {
  return Buffer.byteLength(text);
}

export async function main(): Promise<number> {
  const settings = readSettings();
  const problems: string[] = [];
  const workspace = await openWorkspace(settings);
  const children: Child[] = [];
  let db: Db | null = null;
  try {
    const serviceSecrets = secrets();
    const service = await startService(settings, workspace, 1, 'workers-1', serviceSecrets);
    children.push(service.child);
    const idleSingleProcessRssBytes = residentBytes(service.child.pid);
    db = createDb(workspace.databaseUrl, 2);
    const postgres = `PostgreSQL ${(await db.one<{ server_version: string }>('SHOW server_version')).server_version}${settings.externalUrl ? '' : ' (embedded)'}`;
    const tenant = await createTenant(db, service.baseUrl);
    const ceiling = await startCeiling(workspace);
    children.push(ceiling.child);

    const runs = new Runs(settings, service, ceiling, tenant, db);
    const wanted = (group: string) => settings.only === null || settings.only.includes(group);
    if (wanted('get') || wanted('workers') || wanted('list')) await runs.getBooking();
    if (wanted('retained') || wanted('post')) await runs.retainedCeilings();
    if (wanted('post')) await runs.postBooking();
    if (wanted('retained')) await runs.retainedPurchase(problems);
    if (wanted('list')) await runs.transactionList();
    await stopService(service, problems, 'WORKERS=1');

    const workers = wanted('workers') ? await runs.twoWorkers(workspace, serviceSecrets, problems) : null;
    await ceiling.child.stop();
    await db.close();
    db = null;
    await workspace.stopEmbedded();
    const startup = wanted('startup') ? await measureStartup(settings, workspace, serviceSecrets, problems) : null;

    for (const measurement of [...runs.ceilings, ...runs.scenarios]) {
      if (measurement.errors + measurement.timeouts > 0 || measurement.non2xx > 0) {
        problems.push(`${measurement.name}: ${measurement.errors} errors, ${measurement.timeouts} timeouts, ${measurement.non2xx} non-2xx answers (${JSON.stringify(measurement.statusCodes)})`);
      }
    }
    const targets = [
      target(runs.scenario('POST retained_purchase'), interleavedName(ceilingNames.tx), 0.8, 50),
      target(runs.scenario('GET booking'), interleavedName(ceilingNames.pk), 0.8, null),
    ].filter((goal) => goal !== null);
    if (settings.strict) for (const goal of targets) if (!goal.met) problems.push(`target missed: ${goal.scenario}`);

    const results: Results = {
      date: new Date().toISOString(),
      ok: problems.length === 0,
      problems,
      machine: machine(postgres),
      settings: {
        durationSeconds: settings.durationSeconds,
        warmupSeconds: settings.warmupSeconds,
        connections: settings.connections,
        database: settings.externalUrl ? 'external (DATABASE_URL)' : 'embedded',
        nodeEnv: settings.nodeEnv,
        logLevel: settings.logLevel,
        workers: 1,
        poolSizePerProcess: limits.dbPoolSize,
        listPerPage: settings.listPerPage,
        slices: settings.slices,
      },
      ceilings: runs.ceilings,
      scenarios: runs.scenarios,
      targets,
      workers: workers && { getBookingOneWorkerRps: runs.scenario('GET booking')!.requestsPerSecond, getBookingTwoWorkersRps: workers.getBookingRps, speedup: workers.getBookingRps / runs.scenario('GET booking')!.requestsPerSecond },
      memory: workers && { idleWorkerRssBytes: workers.idleWorkerRssBytes, idlePrimaryRssBytes: workers.idlePrimaryRssBytes, idleSingleProcessRssBytes },
      startup,
      purchaseFloor: floorAgainst(runs.ceilingNamed(ceilingNames.purchase), runs.ceilingNamed(ceilingNames.tx)),
      purchaseBatched: runs.batchedPurchase(ceilingNames.batched, ceilingNames.tx),
      cpuBudgets: targets.map((goal) => cpuBudget(goal, runs.scenario(goal.scenario), runs.ceilingNamed(goal.ceiling))).filter((budget) => budget !== null),
    };
    writeResults(path.join(root, 'bench/results.json'), results);
    process.stdout.write(`\n${summary(results)}\n`);
    return results.ok ? 0 : 1;
  } finally {
    for (const child of children) await child.stop(5_000);
    await db?.close();
    await workspace.dispose();
  }
}

/** The measured runs, each group next to its ceilings so both see the same machine state. */
class Runs {
  readonly ceilings: Measurement[] = [];
  readonly scenarios: ScenarioResult[] = [];
  private getBookingPath = '';

  constructor(
    private readonly settings: Settings,
    private readonly service: Service,
    private readonly ceiling: Ceiling,
    private readonly tenant: Tenant,
    private readonly db: Db,
  ) {}

  scenario(name: string): ScenarioResult | undefined {
    return this.scenarios.find((scenario) => scenario.name === name);
  }

  /** A ceiling's measurement by name (`ceiling` is the ceiling server). */
  ceilingNamed(name: string): Measurement | undefined {
    return this.ceilings.find((ceiling) => ceiling.name === name);
  }

  /** `server` answers the requests; its process (and its cluster workers) is the server in the CPU figures. */
  private async run(scenario: Omit<Scenario, 'baseUrl'>, server: { baseUrl: string; child: Child }, afterWarmup?: () => Promise<void>): Promise<Measurement> {
    progress(`${scenario.name}: ${this.settings.warmupSeconds} s warm-up, ${this.settings.durationSeconds} s measured`);
    const measurement = await measure({ ...scenario, baseUrl: server.baseUrl }, { ...this.settings, serverPid: server.child.pid, ...(afterWarmup ? { afterWarmup } : {}) });
    progress(`${scenario.name}: ${measurement.requestsPerSecond.toFixed(0)} req/s, p99 ${measurement.latencyP99Ms.toFixed(1)} ms, ${measurement.non2xx} non-2xx, ${measurement.errors} errors`);
    return measurement;
  }

  // Ceilings get the service's `ANALYZE` after their warm-up too: the bare two-phase purchase's
  // tables are empty when an earlier group's `ANALYZE` runs, and a plan made for an empty table
  // scans it (726 req/s instead of 2,680 with this ANALYZE).
  private async runCeiling(scenario: Omit<Scenario, 'baseUrl'>): Promise<Measurement> {
    const measurement = await this.run(scenario, this.ceiling, this.analyze);
    this.ceilings.push(measurement);
    return measurement;
  }

  // The warm-up wrote thousands of rows into tables that were empty (transactions, ledger,
  // outbox): give the planner statistics, as autovacuum has in any running installation, so
  // the prepared statements' cached plans are those of a database with history, not of an
  // empty one (seq scans that grow with every row).
  private readonly analyze = async () => void (await this.db.query('ANALYZE'));

  private async runService(scenario: Omit<Scenario, 'baseUrl' | 'headers'>, ceilings: Measurement[]): Promise<ScenarioResult> {
    const measurement = await this.run({ ...scenario, headers: this.tenant.headers }, this.service, this.analyze);
    const result = compare(measurement, ceilings);
    this.scenarios.push(result);
    return result;
  }

  /**
   * A target scenario and its ceiling in interleaved slices (load.ts `measureInterleaved`), each
   * side then taken together; the scenario is compared with that ceiling and with `others`.
   * `settle` runs after each of the scenario's slices (default: a short pause).
   */
  private async runInterleaved(scenario: Omit<Scenario, 'baseUrl' | 'headers'>, ceilingScenario: Omit<Scenario, 'baseUrl'>, others: Measurement[], settle?: () => Promise<void>): Promise<ScenarioResult> {
    const { connections, warmupSeconds, durationSeconds, slices } = this.settings;
    progress(`${scenario.name} and ${ceilingScenario.name}: ${warmupSeconds} s warm-up each, then ${slices} slices of ${(durationSeconds / slices).toFixed(1)} s each, interleaved`);
    const pause = () => sleep(settleMs);
    const runs = await measureInterleaved(
      { scenario: { ...ceilingScenario, baseUrl: this.ceiling.baseUrl }, serverPid: this.ceiling.child.pid, afterWarmup: this.analyze, afterSlice: pause },
      { scenario: { ...scenario, headers: this.tenant.headers, baseUrl: this.service.baseUrl }, serverPid: this.service.child.pid, afterWarmup: this.analyze, afterSlice: settle ?? pause },
      { connections, warmupSeconds, durationSeconds, slices },
    );
    const ceilingName = interleavedName(ceilingScenario.name);
    const ceiling = combine(runs.ceiling, { name: ceilingName, description: `${ceilingScenario.description}; ${slices} slices interleaved with ${scenario.name}'s` });
    this.ceilings.push(ceiling);
    const result = compare(combine(runs.scenario, { name: scenario.name, description: `${scenario.description}; ${slices} slices interleaved with ${ceilingName}'s` }), [ceiling, ...others]);
    this.scenarios.push(result);
    for (const measurement of [ceiling, result]) {
      progress(`${measurement.name}: ${measurement.requestsPerSecond.toFixed(0)} req/s (slices ${measurement.slicesRequestsPerSecond!.map((rate) => rate.toFixed(0)).join(', ')}), p99 ${measurement.latencyP99Ms.toFixed(1)} ms, ${measurement.non2xx} non-2xx, ${measurement.errors} errors`);
    }
    return result;
  }

  private async bareJson(name: string, payloadName: string, method: 'GET' | 'POST', status: number, response: string, requestBody?: string): Promise<Measurement> {
    await this.ceiling.setPayload(payloadName, status, JSON.parse(response));
    return this.runCeiling({ name, description: 'bare Fastify route answering the same JSON', method, path: `/json/${payloadName}`, body: requestBody, requestBytes: requestBody ? bytes(requestBody) : 0, responseBytes: bytes(response) });
  }

  async getBooking(): Promise<void> {
    const created = await callOk(this.service.baseUrl, 'POST', `${this.tenant.apiPrefix}/bookings`, { headers: this.tenant.headers, body: bookingInput(this.tenant) });
    this.getBookingPath = `${this.tenant.apiPrefix}/bookings/${created.json.id}`;
    const answer = await callOk(this.service.baseUrl, 'GET', this.getBookingPath, { headers: this.tenant.headers });
    const json = await this.bareJson('bare JSON (GET booking)', 'get-booking', 'GET', 200, answer.text);
    const pkScenario = { name: ceilingNames.pk, description: 'bare Fastify route: one primary-key select, then the GET booking JSON', method: 'GET', path: `/pk/${created.json.id}`, requestBytes: 0, responseBytes: bytes(answer.text) } as const;
    await this.runInterleaved({ name: 'GET booking', description: 'GET bookings/{id}', method: 'GET', path: this.getBookingPath, requestBytes: 0, responseBytes: bytes(answer.text) }, pkScenario, [json]);
  }

  async postBooking(): Promise<void> {
    const body = JSON.stringify(bookingInput(this.tenant));
    const answer = await callOk(this.service.baseUrl, 'POST', `${this.tenant.apiPrefix}/bookings`, { headers: this.tenant.headers, body: JSON.parse(body) });
    const json = await this.bareJson('bare JSON (POST booking)', 'post-booking', 'POST', answer.status, answer.text, body);
    const tx = this.ceilings.filter((ceiling) => ceiling.name === ceilingNames.tx);
    await this.runService({ name: 'POST booking', description: 'POST bookings', method: 'POST', path: `${this.tenant.apiPrefix}/bookings`, body, requestBytes: bytes(body), responseBytes: bytes(answer.text) }, [...tx, json]);
  }

  private retained: { path: string; vaultTransactionId: number; sampleBody: string; sampleAnswer: string; ceilings: Measurement[]; txScenario: Omit<Scenario, 'baseUrl'> } | null = null;

  /** A sample retained purchase (its JSON feeds the ceilings), then the two ceilings. */
  async retainedCeilings(): Promise<void> {
    const path = `${this.tenant.apiPrefix}/transactions`;
    const vaultTransactionId = await vaultTestCard(this.service.baseUrl, this.tenant);
    const [sampleBooking] = await this.freshBookings(1);
    const sampleBody = JSON.stringify(retainedPurchaseInput(this.tenant, { bookingId: sampleBooking!, vaultTransactionId }));
    const sample = await samplePurchase(this.service.baseUrl, this.tenant, { body: sampleBody, keyPrefix: 'bench-sample-' });
    const json = await this.bareJson('bare JSON (POST retained_purchase)', 'post-retained-purchase', 'POST', sample.status, sample.text, sampleBody);
    const txScenario = { name: ceilingNames.tx, description: 'bare Fastify route: BEGIN; SELECT FOR UPDATE; INSERT; UPDATE; COMMIT', method: 'POST', path: '/tx', body: sampleBody, requestBytes: bytes(sampleBody), responseBytes: bytes(sample.text) } as const;
    const tx = await this.runCeiling(txScenario);
    // Not a target's ceiling: the least any implementation of the purchase's write set with the
    // processor discipline can cost here, to read the purchase's ratio against
    // (performance-history.md, "The floor of a purchase").
    const purchase = await this.runCeiling({ name: ceilingNames.purchase, description: 'bare Fastify route: the purchase write set on minimal tables, attempt and settlement one statement and one commit each', method: 'POST', path: '/purchase', body: sampleBody, requestBytes: bytes(sampleBody), responseBytes: bytes(sample.text) });
    // Not a target's ceiling either: the purchase's write set on trustfare's own tables, with
    // concurrent requests written in batches (performance-history.md, "Batching across requests").
    // Its bookings are paid in turn, so a few thousand serve a run of any length.
    await callOk(this.ceiling.baseUrl, 'PUT', '/batched-purchase/bookings', { body: { ids: await this.freshBookings(batchedPurchaseBookings) } });
    const batched = await this.runCeiling({ name: ceilingNames.batched, description: "bare Fastify route: the purchase write set on trustfare's tables, concurrent requests written in batches (attempt, processor record and settlement one statement each per batch)", method: 'POST', path: '/batched-purchase', headers: this.tenant.headers, body: sampleBody, requestBytes: bytes(sampleBody), responseBytes: bytes(sample.text) });
    const batches = (await callOk(this.ceiling.baseUrl, 'GET', '/batched-purchase/batches')).json as { batches: number; purchases: number };
    this.meanBatchSize = batches.purchases / Math.max(1, batches.batches);
    progress(`${batched.name}: ${this.meanBatchSize.toFixed(1)} requests per batch on average`);
    this.retained = { path, vaultTransactionId, sampleBody, sampleAnswer: sample.text, ceilings: [tx, purchase, batched, json], txScenario };
  }

  private meanBatchSize = 0;

  /** The bare batched purchase against `ceilingName`, when both ran. */
  batchedPurchase(batchedName: string, ceilingName: string): Results['purchaseBatched'] {
    const against = floorAgainst(this.ceilingNamed(batchedName), this.ceilingNamed(ceilingName));
    return against && { ...against, meanBatchSize: this.meanBatchSize };
  }

  /** Every request pays a booking of its own (left by POST booking), so the whole write path runs each time. */
  async retainedPurchase(problems: string[]): Promise<void> {
    if (!this.retained) await this.retainedCeilings();
    const { path, vaultTransactionId, sampleBody, sampleAnswer, ceilings, txScenario } = this.retained!;
    // POST booking is the lighter write, so its rate bounds the retained purchases' rate. The
    // purchases run for the warm-up, then each slice with its ramp (load.ts `measuredRun`).
    const bound = this.scenario('POST booking')?.requestsPerSecond ?? ceilings[0]!.requestsPerSecond;
    const bookings = await this.freshBookings(freshBookingsNeeded({ perSecondMax: bound, seconds: interleavedSideSeconds(this.settings), connections: this.settings.connections }));
    const purchases = new FreshPurchases(this.db, this.tenant, vaultTransactionId, `bench-${randomBytes(4).toString('hex')}-`);
    purchases.refill(bookings);
    // Requests abandoned by autocannon at the end of a slice still run to their end, and the
    // delivery job renders and sends the slice's mails in the background: wait for both before
    // the ceiling's slice, and before counting.
    await this.runInterleaved({ name: 'POST retained_purchase', description: 'POST transactions, retained_purchase of a fresh booking, Idempotency-Key', method: 'POST', path, body: purchases.body, requestBytes: bytes(sampleBody), responseBytes: bytes(sampleAnswer) }, txScenario, ceilings.slice(1), purchases.settle);
    if (purchases.reused > 0) problems.push(`POST retained_purchase: the bench ran out of fresh bookings (${purchases.reused} requests reused one)`);
    if (!purchases.quiet) problems.push(`POST retained_purchase: requests still in flight ${inFlightBoundMs / 1000} s after a slice`);
    if (!purchases.mailsDrained) problems.push(`POST retained_purchase: mails still waiting ${mailDrainBoundMs / 1000} s after a slice`);
    progress(`POST retained_purchase: the service rendered and sent the rest of the slices' mails in ${purchases.mailDrainSeconds.toFixed(1)} s after them`);
    // A 201 may still carry a declined or unfinished transaction: every one must be complete.
    const all = await this.countTransactions('transaction_types=retained_purchase');
    const complete = await this.countTransactions('transaction_types=retained_purchase&status=complete');
    if (all !== complete) {
      const others = await Promise.all(['failed', 'incomplete', 'pending', 'expired'].map(async (status) => `${status} ${await this.countTransactions(`transaction_types=retained_purchase&status=${status}`)}`));
      problems.push(`POST retained_purchase: ${all - complete} of ${all} retained purchases are not complete (${others.join(', ')})`);
    }
    progress(`POST retained_purchase: ${complete} of ${all} transactions complete`);
  }

  async transactionList(): Promise<void> {
    const path = `${this.tenant.apiPrefix}/transactions?per_page=${this.settings.listPerPage}`;
    const answer = await callOk(this.service.baseUrl, 'GET', path, { headers: this.tenant.headers });
    const json = await this.bareJson('bare JSON (GET transactions page)', 'get-transactions', 'GET', 200, answer.text);
    const pk = this.ceilingNamed(interleavedName(ceilingNames.pk))!;
    await this.runService({ name: 'GET transactions page', description: `GET transactions?per_page=${this.settings.listPerPage}`, method: 'GET', path, requestBytes: 0, responseBytes: bytes(answer.text) }, [pk, json]);
  }

  /** WORKERS=2: idle memory of a worker, then the GET booking scenario again. */
  async twoWorkers(workspace: Workspace, serviceSecrets: Record<string, string>, problems: string[]): Promise<{ getBookingRps: number; idleWorkerRssBytes: number; idlePrimaryRssBytes: number }> {
    const service = await startService(this.settings, workspace, 2, 'workers-2', serviceSecrets);
    try {
      const workerPids = childPids(service.child.pid).filter((pid) => !isPostgres(pid));
      if (workerPids.length !== 2) problems.push(`WORKERS=2: expected 2 worker processes, found ${workerPids.length}`);
      const idleWorkerRssBytes = Math.max(...workerPids.map(residentBytes));
      const idlePrimaryRssBytes = residentBytes(service.child.pid);
      const measurement = await this.run({ name: 'GET booking (WORKERS=2)', description: 'GET bookings/{id} with two workers', method: 'GET', path: this.getBookingPath, headers: this.tenant.headers, requestBytes: 0, responseBytes: this.scenario('GET booking')!.responseBytes }, service);
      this.scenarios.push(compare(measurement, this.ceilings.filter((ceiling) => ceiling.name === interleavedName(ceilingNames.pk))));
      return { getBookingRps: measurement.requestsPerSecond, idleWorkerRssBytes, idlePrimaryRssBytes };
    } finally {
      await stopService(service, problems, 'WORKERS=2');
    }
  }

  private async countTransactions(query: string): Promise<number> {
    const response = await fetch(`${this.service.baseUrl}${this.tenant.apiPrefix}/transactions?per_page=1&${query}`, { headers: this.tenant.headers });
    await response.arrayBuffer();
    const total = response.headers.get('x-site-total');
    if (response.status !== 200 || total === null) throw new Error(`counting transactions (${query}) answered ${response.status} without X-Site-Total`);
    return Number(total);
  }

  /** Unpaid bookings of the bench site (left by POST booking), topped up through the API. */
  private async freshBookings(count: number): Promise<number[]> {
    // Statistics for these rows come from the ANALYZE after the scenario's warm-up (runService).
    return freshBookingIds(this.db, this.service.baseUrl, this.tenant, {
      count,
      excludedId: Number(this.getBookingPath.split('/').pop()),
      connections: this.settings.connections,
      onCreate: (missing) => progress(`creating ${missing} bookings for the retained purchases`),
    });
  }
}

function isPostgres(pid: number): boolean {
  try {
    return /postgres/.test(commandLine(pid));
  } catch {
    return false;
  }
}

/** `npm start` (node dist/server.js) on the existing data directory: time to the first ready answer. */
async function measureStartup(settings: Settings, workspace: Workspace, serviceSecrets: Record<string, string>, problems: string[]): Promise<{ oneWorkerMsToReady: number; twoWorkersMsToReady: number }> {
  const timings: number[] = [];
  for (const workers of [1, 2]) {
    progress(`start-up with WORKERS=${workers}`);
    const service = await startService(settings, workspace, workers, `startup-${workers}`, serviceSecrets);
    timings.push(service.msToReady);
    await stopService(service, problems, `start-up WORKERS=${workers}`);
    if (!settings.externalUrl && existsSync(path.join(workspace.dataDir, 'pg', 'postmaster.pid'))) {
      problems.push(`start-up WORKERS=${workers}: the embedded PostgreSQL still runs after the service stopped`);
    }
  }
  return { oneWorkerMsToReady: timings[0]!, twoWorkersMsToReady: timings[1]! };
}

function machine(postgres: string): Results['machine'] {
  const cpus = os.cpus();
  return { cpus: os.availableParallelism(), cpuModel: cpus[0]?.model ?? 'unknown', memoryBytes: os.totalmem(), os: `${os.type()} ${os.release()}`, node: process.versions.node, postgres };
}
