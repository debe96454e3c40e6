// Drives one scenario with autocannon: a warm-up run (discarded), then the measured run.
import autocannon from 'autocannon';
import { cpuUse, readCpuSample, type CpuUse } from './cpu.js';

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
}

export async function measure(scenario: Scenario, options: LoadOptions): Promise<Measurement> {
  if (options.warmupSeconds > 0) await run(scenario, options.connections, options.warmupSeconds);
  await options.afterWarmup?.();
  const before = options.serverPid === undefined ? null : readCpuSample(options.serverPid);
  const result = await run(scenario, options.connections, options.durationSeconds);
  const after = before && readCpuSample(options.serverPid!);
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count ?? 0;
  return {
    name: scenario.name,
    description: scenario.description,
    method: scenario.method,
    path: scenario.path,
    connections: options.connections,
    requestBytes: scenario.requestBytes,
    responseBytes: scenario.responseBytes,
    durationSeconds: result.duration,
    requests: result.requests.total,
    requestsPerSecond: result.requests.total / result.duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMaxMs: result.latency.max,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    cpu: before && after ? cpuUse(before, after, result.requests.total) : null,
  };
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
