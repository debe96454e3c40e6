// Drives one scenario with autocannon: a warm-up run (discarded), then the measured run.
import autocannon from 'autocannon';
import { cpuUse, readCpuSample, type CpuSample, type CpuUse } from './cpu.js';

export interface Scenario {
  name: string;
  /** What the figure is compared with, e.g. "ceiling-pk-select". */
  description: string;
  baseUrl: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** A fixed body, or one built per request (fresh booking, fresh Idempotency-Key). */
  body?: string | (() => { body: string; headers?: Record<string, string> });
  /** Bytes of the request and response bodies, printed with the figures. */
  requestBytes: number;
  responseBytes: number;
}

export interface LoadOptions {
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  /** Runs between the warm-up and the measured run (the service runs: ANALYZE, see main.ts). */
  afterWarmup?: () => Promise<void>;
  /** The process answering (the service's primary or the ceiling server): its CPU is the server's. */
  serverPid?: number;
}

export interface Measurement {
  name: string;
  description: string;
  method: string;
  path: string;
  connections: number;
  requestBytes: number;
  responseBytes: number;
  durationSeconds: number;
  requests: number;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** CPU per request of the measured run by role (bench/cpu.ts); null without /proc or a server pid. */
  cpu: CpuUse | null;
  /** Measured in slices (report.ts `combine`): each slice's rate, in the order run. */
  slicesRequestsPerSecond?: number[];
}

export async function measure(scenario: Scenario, options: LoadOptions): Promise<Measurement> {
  if (options.warmupSeconds > 0) await run(scenario, options.connections, options.warmupSeconds);
  await options.afterWarmup?.();
  return measuredRun(scenario, options.connections, options.durationSeconds, options.serverPid);
}

/** One side of an interleaved measurement: a scenario and the process answering it. */
export interface Side {
  scenario: Scenario;
  serverPid: number;
  /** Once, after this side's warm-up. */
  afterWarmup?: () => Promise<void>;
  /**
   * After this side's warm-up and each of its slices, before the other side runs: the requests
   * autocannon left in flight finish here, so their work is not counted in the other side's slice.
   */
  afterSlice?: () => Promise<void>;
}

export interface InterleavedOptions {
  connections: number;
  warmupSeconds: number;
  /** Measured seconds per side, split into `slices` runs. */
  durationSeconds: number;
  slices: number;
}

/** Seconds one side of `measureInterleaved` sends requests: its warm-up, then each slice with its ramp. */
export function interleavedSideSeconds(options: Pick<InterleavedOptions, 'warmupSeconds' | 'durationSeconds' | 'slices'>): number {
  return options.warmupSeconds + options.durationSeconds + options.slices * rampSeconds;
}

/**
 * A scenario and its ceiling measured in alternating slices, in the order C S S C C S S C ...,
 * after one warm-up each. This machine's speed drifts by a fifth or more within a minute; in
 * slices of a few seconds, in an order where each side's mean position is the same, a drift
 * slower than a slice falls on both sides alike (a steady one cancels exactly with an even
 * number of slices), so the ratio of the two is that of the work, not of the moment. Returns
 * each side's slices in order (report.ts `combine` takes them together).
 */
export async function measureInterleaved(ceiling: Side, scenario: Side, options: InterleavedOptions): Promise<{ ceiling: Measurement[]; scenario: Measurement[] }> {
  for (const side of [ceiling, scenario]) {
    if (options.warmupSeconds > 0) await run(side.scenario, options.connections, options.warmupSeconds);
    await side.afterSlice?.();
    await side.afterWarmup?.();
  }
  const sliceSeconds = options.durationSeconds / options.slices;
  const slices = { ceiling: [] as Measurement[], scenario: [] as Measurement[] };
  for (let index = 0; index < options.slices; index++) {
    const order = index % 2 === 0 ? (['ceiling', 'scenario'] as const) : (['scenario', 'ceiling'] as const);
    for (const name of order) {
      const side = name === 'ceiling' ? ceiling : scenario;
      slices[name].push(await measuredRun(side.scenario, options.connections, sliceSeconds, side.serverPid));
      await side.afterSlice?.();
    }
  }
  return slices;
}

/**
 * Seconds each measured run lets pass before it counts. autocannon opens its connections and
 * sends one request on each at the start, and abandons the ones in flight when it stops: a run
 * counted from its first second to its last misses up to one request per connection (2.6 % of a
 * 10 s run of retained purchases, 10 % of a 2.5 s slice). Counted over a window in steady state,
 * every response inside the window counts and none outside, so the rate has no such bias.
 */
export const rampSeconds = 1;

/**
 * One run of `rampSeconds` + `seconds`: requests, latencies and CPU (bench/cpu.ts) are those of
 * the last `seconds` (the window); status codes, errors and timeouts are those of the whole run,
 * so a failure during the ramp still fails the bench.
 */
async function measuredRun(scenario: Scenario, connections: number, seconds: number, serverPid: number | undefined): Promise<Measurement> {
  // Without a callback autocannon returns its instance, an EventEmitter that is also the promise
  // of the result (autocannon/lib/init.js); the types name only the promise.
  const instance = autocannon({ ...baseOptions(scenario, connections), duration: rampSeconds + seconds }) as unknown as autocannon.Instance & Promise<autocannon.Result>;
  const window = { open: false, startedAtMs: 0, latenciesMs: [] as number[], cpuBefore: null as CpuSample | null };
  const opener = setTimeout(() => {
    window.cpuBefore = serverPid === undefined ? null : readCpuSample(serverPid);
    window.startedAtMs = performance.now();
    window.open = true;
  }, rampSeconds * 1000);
  instance.on('response', (_client, _statusCode, _bytes, responseTimeMs) => {
    if (window.open) window.latenciesMs.push(responseTimeMs);
  });
  const result = await instance;
  clearTimeout(opener);
  const windowSeconds = window.open ? (performance.now() - window.startedAtMs) / 1000 : 0;
  const cpuAfter = window.cpuBefore && readCpuSample(serverPid!);
  const requests = window.latenciesMs.length;
  const latencies = window.latenciesMs.sort((a, b) => a - b);
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count ?? 0;
  return {
    name: scenario.name,
    description: scenario.description,
    method: scenario.method,
    path: scenario.path,
    connections,
    requestBytes: scenario.requestBytes,
    responseBytes: scenario.responseBytes,
    durationSeconds: windowSeconds,
    requests,
    requestsPerSecond: windowSeconds > 0 ? requests / windowSeconds : 0,
    latencyP50Ms: percentile(latencies, 0.5),
    latencyP99Ms: percentile(latencies, 0.99),
    latencyMaxMs: latencies.at(-1) ?? 0,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    cpu: window.cpuBefore && cpuAfter ? cpuUse(window.cpuBefore, cpuAfter, requests) : null,
  };
}

/** The nearest-rank percentile (`share` from 0 to 1) of ascending values; 0 for none. */
export function percentile(ascending: readonly number[], share: number): number {
  if (ascending.length === 0) return 0;
  return ascending[Math.min(ascending.length - 1, Math.max(0, Math.ceil(share * ascending.length) - 1))]!;
}

/** Sends exactly `amount` requests (used to create fixtures fast); throws on any failure. */
export async function sendMany(scenario: Scenario, connections: number, amount: number): Promise<void> {
  const result = await autocannon({ ...baseOptions(scenario, Math.min(connections, amount)), amount });
  if (result.errors > 0 || result.non2xx > 0) throw new Error(`${scenario.name}: ${result.errors} errors, ${result.non2xx} non-2xx answers while creating fixtures`);
}

function run(scenario: Scenario, connections: number, durationSeconds: number): Promise<autocannon.Result> {
  return autocannon({ ...baseOptions(scenario, connections), duration: durationSeconds });
}

function baseOptions(scenario: Scenario, connections: number): autocannon.Options {
  const headers = { ...(scenario.body !== undefined ? { 'content-type': 'application/json' } : {}), ...scenario.headers };
  const { body } = scenario;
  const request: autocannon.Request = { method: scenario.method, path: scenario.path, headers };
  if (typeof body === 'string') request.body = body;
  if (typeof body === 'function') {
    request.setupRequest = (prepared) => {
      const next = body();
      return { ...prepared, body: next.body, headers: { ...headers, ...next.headers } };
    };
  }
  return { url: scenario.baseUrl, connections, pipelining: 1, timeout: 10, requests: [request] };
}
