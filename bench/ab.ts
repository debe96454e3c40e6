// `npm run bench:ab`: two builds of the service compared on this machine (docs/performance.md,
// "Comparing two builds").
//
// BENCH_AB_A and BENCH_AB_B name two checkouts, each built (`npm run build` there) with the same
// migrations; default A is this checkout. BENCH_AB_A_NODE_ARGS and BENCH_AB_B_NODE_ARGS add Node
// options to one side's service (a runtime flag compared on one build: BENCH_AB_B=.). Each launch
// starts both services on one database and measures the scenario on both in interleaved slices
// (load.ts `measureInterleaved`) for BENCH_AB_ROUNDS rounds (default 2); launches alternate which
// build starts first and goes first.
// It prints each round's rate of B over A and their geometric mean with the lowest and highest,
// and the same for the machine's CPU per request (what a purchase-path change should lower).
// Why launches: one Node process's speed differs by up to ±10 % from one launch to the next (JIT
// decisions, where the scheduler places it), so one launch measures the launch, not the build.
//
// Settings: BENCH_AB_LAUNCHES (default 6), BENCH_AB_SCENARIO (`get-booking`, default,
// `post-booking` or `retained-purchase`), BENCH_DURATION seconds measured per side and round
// (default 12), BENCH_SLICES (default 6), BENCH_WARMUP (default 2), BENCH_CONNECTIONS (default
// 50), BENCH_AB_PURCHASES_PER_SECOND_MAX (retained-purchase: the rate fresh bookings are first
// made for, default 600; topped up between slices from the rate seen), DATABASE_URL, BENCH_KEEP.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createDb, type Db } from '../src/storage/db.js';
import { bookingInput, callOk, createTenant, freshBookingIds, retainedPurchaseInput, samplePurchase, vaultTestCard, type Tenant } from './fixtures.js';
import { FreshPurchases, freshBookingsNeeded } from './purchases.js';
import { interleavedSideSeconds, measureInterleaved, type Scenario } from './load.js';
import { abSummary, combine } from './report.js';
import { openWorkspace, progress, root, secrets, startService, stopService, words, type Service, type StackSettings } from './stack.js';

const launchesMax = 100;

interface Settings {
  checkouts: { A: string; B: string };
  /** Node options of each side's service (BENCH_AB_A_NODE_ARGS, BENCH_AB_B_NODE_ARGS). */
  nodeArgs: { A: string[]; B: string[] };
  launches: number;
  rounds: number;
  scenario: (typeof scenarioNames)[number];
  durationSeconds: number;
  slices: number;
  warmupSeconds: number;
  connections: number;
  purchasesPerSecondMax: number;
}

const scenarioNames = ['get-booking', 'post-booking', 'retained-purchase'] as const;

function readSettings(): Settings {
  const integer = (name: string, fallback: number, max: number) => {
    const value = Number(process.env[name] ?? fallback);
    if (!Number.isSafeInteger(value) || value < 1 || value > max) throw new Error(`${name} must be an integer from 1 to ${max}`);
    return value;
  };
  const scenario = scenarioNames.find((name) => name === (process.env.BENCH_AB_SCENARIO ?? 'get-booking'));
  if (!scenario) throw new Error(`BENCH_AB_SCENARIO must be one of ${scenarioNames.join(', ')}`);
  if (!process.env.BENCH_AB_B) throw new Error('BENCH_AB_B must name the other built checkout (and BENCH_AB_A, default this one)');
  return {
    checkouts: { A: path.resolve(process.env.BENCH_AB_A ?? root), B: path.resolve(process.env.BENCH_AB_B) },
    nodeArgs: { A: words(process.env.BENCH_AB_A_NODE_ARGS), B: words(process.env.BENCH_AB_B_NODE_ARGS) },
    launches: integer('BENCH_AB_LAUNCHES', 6, launchesMax),
    rounds: integer('BENCH_AB_ROUNDS', 2, 20),
    scenario,
    durationSeconds: integer('BENCH_DURATION', 12, 600),
    slices: integer('BENCH_SLICES', 6, 100),
    warmupSeconds: integer('BENCH_WARMUP', 2, 600),
    connections: integer('BENCH_CONNECTIONS', 50, 1000),
    purchasesPerSecondMax: integer('BENCH_AB_PURCHASES_PER_SECOND_MAX', 600, 100_000),
  };
}

export async function main(): Promise<number> {
  const settings = readSettings();
  const stack: StackSettings = { externalUrl: process.env.DATABASE_URL || undefined, keep: process.env.BENCH_KEEP === '1', nodeEnv: 'production', logLevel: 'warn' };
  const workspace = await openWorkspace(stack);
  const serviceSecrets = secrets();
  let db: Db | null = null;
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  try {
    db = createDb(workspace.databaseUrl, 2);
    let scenario: AbScenario | null = null;
    for (let launch = 0; launch < settings.launches; launch++) {
      const order = launch % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const);
      const services: Partial<Record<'A' | 'B', Service>> = {};
      const problems: string[] = [];
      try {
        for (const name of order) services[name] = await startService(stack, workspace, 1, `ab-${name}-${launch}`, serviceSecrets, settings.checkouts[name], settings.nodeArgs[name]);
        scenario ??= await prepareScenario(settings, db, services[order[0]]!.baseUrl);
        await scenario.beforeLaunch?.(services[order[0]]!.baseUrl);
        for (let round = 0; round < settings.rounds; round++) {
          const side = (name: 'A' | 'B') => ({ ...scenario!.hooks, scenario: { ...scenario!.request, baseUrl: services[name]!.baseUrl }, serverPid: services[name]!.child.pid });
          const runs = await measureInterleaved(side(order[0]), side(order[1]), settings);
          // An error answers fast: a rate with failures in it would compare nothing.
          for (const slice of [...runs.ceiling, ...runs.scenario]) {
            if (slice.errors + slice.timeouts + slice.non2xx > 0) problems.push(`launch ${launch + 1}, round ${round + 1}: ${slice.errors} errors, ${slice.timeouts} timeouts, ${slice.non2xx} non-2xx answers (${JSON.stringify(slice.statusCodes)})`);
          }
          const first = combine(runs.ceiling, { name: order[0], description: '' });
          const second = combine(runs.scenario, { name: order[1], description: '' });
          const [a, b] = order[0] === 'A' ? [first, second] : [second, first];
          const rate = b.requestsPerSecond / a.requestsPerSecond;
          ratios.push(rate);
          const [aCpu, bCpu] = [a.cpu?.machineUsPerRequest, b.cpu?.machineUsPerRequest];
          let cpu = '';
          if (aCpu && bCpu) {
            cpuRatios.push(bCpu / aCpu);
            cpu = `; machine CPU per request A ${aCpu.toFixed(0)} µs, B ${bCpu.toFixed(0)} µs, B/A ${(bCpu / aCpu).toFixed(3)}`;
          }
          progress(`launch ${launch + 1} (${order.join(' then ')}), round ${round + 1}: A ${a.requestsPerSecond.toFixed(0)} req/s, B ${b.requestsPerSecond.toFixed(0)} req/s, B/A ${rate.toFixed(3)}${cpu}`);
        }
      } finally {
        for (const name of order) if (services[name]) await stopService(services[name]!, problems, `service ${name}`);
      }
      problems.push(...((await scenario?.problems?.()) ?? []));
      if (problems.length > 0) throw new Error(problems.join('\n'));
    }
    process.stdout.write(`\n${abSummary(settings.scenario, settings.launches, ratios, cpuRatios)}\nA: ${settings.checkouts.A}\nB: ${settings.checkouts.B}\n`);
    return 0;
  } finally {
    await db?.close();
    await workspace.dispose();
  }
}

/** What one scenario sends, and what it does around the measured runs. */
interface AbScenario {
  request: Omit<Scenario, 'baseUrl'>;
  /** Per side (load.ts `Side`). */
  hooks?: { afterWarmup?: () => Promise<void>; afterSlice?: () => Promise<void> };
  /** Before each launch's rounds, through one of its services. */
  beforeLaunch?: (baseUrl: string) => Promise<void>;
  /** After each launch: what makes its figures wrong. */
  problems?: () => Promise<string[]>;
}

/** The tenant and the request both builds answer (created once, through the first service started). */
async function prepareScenario(settings: Settings, db: Db, baseUrl: string): Promise<AbScenario> {
  const name = settings.scenario;
  const tenant: Tenant = await createTenant(db, baseUrl);
  const body = JSON.stringify(bookingInput(tenant));
  const created = await callOk(baseUrl, 'POST', `${tenant.apiPrefix}/bookings`, { headers: tenant.headers, body: JSON.parse(body) });
  if (name === 'post-booking') {
    return { request: { name, description: 'POST bookings', method: 'POST', path: `${tenant.apiPrefix}/bookings`, headers: tenant.headers, body, requestBytes: Buffer.byteLength(body), responseBytes: created.text.length } };
  }
  if (name === 'retained-purchase') return retainedPurchaseScenario(settings, db, baseUrl, tenant, Number(created.json.id));
  const path = `${tenant.apiPrefix}/bookings/${created.json.id}`;
  const answer = await callOk(baseUrl, 'GET', path, { headers: tenant.headers });
  return { request: { name, description: 'GET bookings/{id}', method: 'GET', path, headers: tenant.headers, requestBytes: 0, responseBytes: answer.text.length } };
}

/**
 * POST retained_purchase of a fresh booking, as `npm run bench` sends it: the whole write path
 * each time. Fresh bookings for a launch are made before it, for BENCH_AB_PURCHASES_PER_SECOND_MAX;
 * a launch that runs out of them fails (a paid booking answers 400 quickly and would flatter the
 * build that got it). Between slices both sides wait for the requests autocannon abandoned, and
 * every purchase must end `complete`.
 */
async function retainedPurchaseScenario(settings: Settings, db: Db, baseUrl: string, tenant: Tenant, excludedId: number): Promise<AbScenario> {
  const vaultTransactionId = await vaultTestCard(baseUrl, tenant);
  const keyPrefix = `ab-${randomBytes(4).toString('hex')}-`;
  const first = JSON.stringify(retainedPurchaseInput(tenant, { bookingId: (await freshBookingIds(db, baseUrl, tenant, { count: 1, excludedId, connections: 1 }))[0]!, vaultTransactionId }));
  const sample = await samplePurchase(baseUrl, tenant, { body: first, keyPrefix });
  // Each round runs both sides, each for its warm-up and slices.
  const perLaunch = freshBookingsNeeded({ perSecondMax: settings.purchasesPerSecondMax, seconds: settings.rounds * 2 * interleavedSideSeconds(settings), connections: settings.connections });
  const purchases = new FreshPurchases(db, tenant, vaultTransactionId, keyPrefix);
  return {
    request: {
      name: settings.scenario,
      description: 'POST transactions, retained_purchase of a fresh booking, Idempotency-Key',
      method: 'POST',
      path: `${tenant.apiPrefix}/transactions`,
      headers: tenant.headers,
      body: purchases.body,
      requestBytes: Buffer.byteLength(first),
      responseBytes: sample.text.length,
    },
    hooks: {
      // Plans for a database with history, as npm run bench makes them (bench/main.ts `analyze`).
      afterWarmup: async () => void (await db.query('ANALYZE')),
      afterSlice: purchases.settle,
    },
    beforeLaunch: async (launchUrl) => {
      progress(`making fresh bookings for up to ${perLaunch} purchases`);
      const more = (count: number) => freshBookingIds(db, launchUrl, tenant, { count, excludedId, connections: settings.connections });
      purchases.refill(await more(perLaunch), more);
    },
    problems: async () => {
      const found: string[] = [];
      if (purchases.reused > 0) found.push(`retained-purchase: ran out of fresh bookings within a slice (${purchases.reused} requests reused one); raise BENCH_AB_PURCHASES_PER_SECOND_MAX`);
      if (!purchases.quiet) found.push('retained-purchase: requests still in flight after a slice');
      if (!purchases.mailsDrained) found.push('retained-purchase: mails still waiting after a slice');
      const { unfinished } = await db.one<{ unfinished: number }>("SELECT count(*)::int AS unfinished FROM transactions WHERE site_id = $1 AND type = 'retained_purchase' AND status <> 'complete'", [tenant.siteId]);
      if (unfinished > 0) found.push(`retained-purchase: ${unfinished} purchases did not end complete`);
      return found;
    },
  };
}
