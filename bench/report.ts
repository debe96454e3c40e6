// The summary table and bench/results.json.
import { writeFileSync } from 'node:fs';
import { combineCpuUse } from './cpu.js';
import type { Measurement } from './load.js';

export interface Comparison {
  /** Name of the ceiling measurement. */
  ceiling: string;
  ratio: number;
}

export interface ScenarioResult extends Measurement {
  comparisons: Comparison[];
}

export interface Target {
  scenario: string;
  ceiling: string;
  ratioMin: number;
  ratio: number;
  p99MaxMs: number | null;
  p99Ms: number;
  met: boolean;
}

export interface Results {
  date: string;
  ok: boolean;
  problems: string[];
  machine: { cpus: number; cpuModel: string; memoryBytes: number; os: string; node: string; postgres: string };
  settings: { durationSeconds: number; warmupSeconds: number; connections: number; database: string; nodeEnv: string; logLevel: string; workers: number; poolSizePerProcess: number; listPerPage: number; slices: number };
  ceilings: Measurement[];
  scenarios: ScenarioResult[];
  targets: Target[];
  workers: { getBookingOneWorkerRps: number; getBookingTwoWorkersRps: number; speedup: number } | null;
  memory: { idleWorkerRssBytes: number; idlePrimaryRssBytes: number; idleSingleProcessRssBytes: number } | null;
  startup: { oneWorkerMsToReady: number; twoWorkersMsToReady: number } | null;
  /**
   * The bare two-phase purchase against the purchase target's ceiling: what the target asks of any
   * implementation here (not a target). Both measurements are in `ceilings`, by these names.
   */
  purchaseFloor: { floor: string; ceiling: string; ratio: number } | null;
  /**
   * The bare batched purchase (trustfare's tables, concurrent requests written in batches) against
   * the same ceiling, with the mean batch size it ran with: what a service that batches its write
   * path could reach here (not a target).
   */
  purchaseBatched: { floor: string; ceiling: string; ratio: number; meanBatchSize: number } | null;
  /** Each target's machine CPU per request against its ceiling's (cpuBudget). */
  cpuBudgets: CpuBudget[];
}

/**
 * A target scenario's machine CPU per request against its ceiling's. On two cores a scenario's rate
 * ratio is about the inverse of its CPU multiple (docs/performance.md, sessions 22 and 23: every full run),
 * so their product, `relativeBusy`, is how busy the scenario kept the cores next to the ceiling (its
 * CpuUse.busyShare over the ceiling's), and `budgetUsPerRequest` the machine CPU per request at which
 * the target's ratio would be met with the cores that busy (today's CPU per request scaled by ratio
 * over target): what a change has to bring a request down to.
 */
export interface CpuBudget {
  scenario: string;
  ceiling: string;
  usPerRequest: number;
  ceilingUsPerRequest: number;
  cpuMultiple: number;
  relativeBusy: number;
  ratioMin: number;
  budgetUsPerRequest: number;
}

/** `goal`'s CPU budget, when its scenario and ceiling both have CPU figures. */
export function cpuBudget(goal: Target, scenario: Measurement | undefined, ceiling: Measurement | undefined): CpuBudget | null {
  const used = scenario?.cpu?.machineUsPerRequest;
  const ceilingUsed = ceiling?.cpu?.machineUsPerRequest;
  if (!used || !ceilingUsed) return null;
  const cpuMultiple = used / ceilingUsed;
  return {
    scenario: goal.scenario, ceiling: goal.ceiling, usPerRequest: used, ceilingUsPerRequest: ceilingUsed, cpuMultiple, relativeBusy: goal.ratio * cpuMultiple, ratioMin: goal.ratioMin,
    budgetUsPerRequest: (used * goal.ratio) / goal.ratioMin,
  };
}

/** `floor` read against `ceiling`, when both ran. */
export function floorAgainst(floor: Measurement | undefined, ceiling: Measurement | undefined): Results['purchaseFloor'] {
  if (!floor || !ceiling) return null;
  return { floor: floor.name, ceiling: ceiling.name, ratio: floor.requestsPerSecond / ceiling.requestsPerSecond };
}

export function compare(scenario: Measurement, ceilings: Measurement[]): ScenarioResult {
  return { ...scenario, comparisons: ceilings.map((ceiling) => ({ ceiling: ceiling.name, ratio: scenario.requestsPerSecond / ceiling.requestsPerSecond })) };
}

/**
 * Several runs of one scenario as one measurement: requests over the summed duration, the mean
 * p50 and the worst p99, with each run's rate kept in `slicesRequestsPerSecond`. Used for the
 * slices of an interleaved measurement (load.ts `measureInterleaved`).
 */
export function combine(runs: Measurement[], labels: { name: string; description: string }): Measurement {
  const total = (pick: (run: Measurement) => number) => runs.reduce((sum, run) => sum + pick(run), 0);
  const statusCodes: Record<string, number> = {};
  for (const run of runs) for (const [code, count] of Object.entries(run.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  const requests = total((run) => run.requests);
  const durationSeconds = total((run) => run.durationSeconds);
  return {
    ...runs[0]!,
    ...labels,
    durationSeconds,
    requests,
    requestsPerSecond: requests / durationSeconds,
    latencyP50Ms: total((run) => run.latencyP50Ms) / runs.length,
    latencyP99Ms: Math.max(...runs.map((run) => run.latencyP99Ms)),
    latencyMaxMs: Math.max(...runs.map((run) => run.latencyMaxMs)),
    errors: total((run) => run.errors),
    timeouts: total((run) => run.timeouts),
    non2xx: total((run) => run.non2xx),
    statusCodes,
    cpu: combineCpuUse(runs),
    slicesRequestsPerSecond: runs.map((run) => run.requestsPerSecond),
  };
}

/** The geometric mean of ratios (a ratio and its inverse cancel), with the lowest and highest. */
export function ratioSpread(ratios: readonly number[]): { geometricMean: number; lowest: number; highest: number } {
  if (ratios.length === 0 || ratios.some((ratio) => !(ratio > 0))) throw new Error('ratioSpread needs positive ratios');
  const logMean = ratios.reduce((sum, ratio) => sum + Math.log(ratio), 0) / ratios.length;
  return { geometricMean: Math.exp(logMean), lowest: Math.min(...ratios), highest: Math.max(...ratios) };
}

/**
 * bench:ab's closing lines: the rate of B over A per round, and, when every round measured it, the
 * machine CPU per request of B over A (below 1: B costs the cores less). On two cores the purchase
 * rate follows its machine CPU per request (docs/performance.md, session 22): the second line says
 * whether a change took CPU away or only moved waits, which leave the rate where it was.
 */
export function abSummary(scenario: string, launches: number, rates: readonly number[], machineCpu: readonly number[]): string {
  const rate = ratioSpread(rates);
  const lines = [`${scenario}: B/A geometric mean ${rate.geometricMean.toFixed(3)} over ${rates.length} rounds in ${launches} launches (rounds from ${rate.lowest.toFixed(3)} to ${rate.highest.toFixed(3)})`];
  if (machineCpu.length === rates.length) {
    const cpu = ratioSpread(machineCpu);
    lines.push(`${scenario}: machine CPU per request B/A geometric mean ${cpu.geometricMean.toFixed(3)} (rounds from ${cpu.lowest.toFixed(3)} to ${cpu.highest.toFixed(3)}; below 1, B costs less)`);
  }
  return lines.join('\n');
}

export function target(scenario: ScenarioResult | undefined, ceiling: string, ratioMin: number, p99MaxMs: number | null): Target | null {
  if (!scenario) return null;
  const ratio = scenario.comparisons.find((comparison) => comparison.ceiling === ceiling)?.ratio ?? 0;
  const met = ratio >= ratioMin && (p99MaxMs === null || scenario.latencyP99Ms < p99MaxMs);
  return { scenario: scenario.name, ceiling, ratioMin, ratio, p99MaxMs, p99Ms: scenario.latencyP99Ms, met };
}

export function writeResults(file: string, results: Results): void {
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
}

const fixed = (value: number, digits = 0) => value.toFixed(digits);

function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

function measurementRow(measurement: Measurement, extra: string): string[] {
  return [
    measurement.name,
    String(measurement.connections),
    String(measurement.requestBytes),
    String(measurement.responseBytes),
    fixed(measurement.requestsPerSecond),
    fixed(measurement.latencyP50Ms, 1),
    fixed(measurement.latencyP99Ms, 1),
    String(measurement.errors + measurement.timeouts),
    String(measurement.non2xx),
    cpuCell(measurement),
    extra,
  ];
}

/** Machine CPU µs per request, then the server's, PostgreSQL's and the load generator's shares. */
function cpuCell(measurement: Measurement): string {
  const cpu = measurement.cpu;
  if (!cpu) return '-';
  return `${fixed(cpu.machineUsPerRequest)} (${fixed(cpu.serverUsPerRequest)}/${fixed(cpu.postgresUsPerRequest)}/${fixed(cpu.loadGeneratorUsPerRequest)})`;
}

export function summary(results: Results): string {
  const header = ['scenario', 'conns', 'req B', 'resp B', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'CPU us/req (server/pg/load)', 'ratio to ceiling'];
  const rows = [
    ...results.ceilings.map((ceiling) => measurementRow(ceiling, '(ceiling)')),
    ...results.scenarios.map((scenario) => measurementRow(scenario, scenario.comparisons.map((comparison) => `${fixed(comparison.ratio, 2)} of ${comparison.ceiling}`).join('; '))),
  ];
  const lines = [
    `trustfare bench, ${results.date}: ${results.machine.cpus} cores (${results.machine.cpuModel}), ${fixed(results.machine.memoryBytes / 2 ** 30, 1)} GiB, Node ${results.machine.node}, ${results.machine.postgres}`,
    `${results.settings.connections} connections, ${results.settings.warmupSeconds} s warm-up + ${results.settings.durationSeconds} s per scenario (the two targets and their ceilings in ${results.settings.slices} interleaved slices each), database ${results.settings.database}, NODE_ENV=${results.settings.nodeEnv}, LOG_LEVEL=${results.settings.logLevel}, WORKERS=${results.settings.workers}, pool ${results.settings.poolSizePerProcess}/process`,
    '',
    table(header, rows),
    'CPU us/req: core time per request over the measured run, the whole machine (kernel included), then the server process(es), PostgreSQL and the load generator.',
    ...stealNote(results),
    '',
  ];
  for (const goal of results.targets) {
    const latency = goal.p99MaxMs === null ? '' : ` and p99 ${fixed(goal.p99Ms, 1)} ms < ${goal.p99MaxMs} ms`;
    lines.push(`target ${goal.met ? 'MET   ' : 'MISSED'} ${goal.scenario}: ${fixed(goal.ratio, 2)} of ${goal.ceiling} (>= ${goal.ratioMin})${latency}`);
  }
  for (const budget of results.cpuBudgets) {
    lines.push(`cpu: ${budget.scenario} ${fixed(budget.usPerRequest)} us of machine CPU per request, ${fixed(budget.cpuMultiple, 2)}x ${budget.ceiling}'s ${fixed(budget.ceilingUsPerRequest)}; rate ratio x CPU multiple ${fixed(budget.relativeBusy, 2)}, at which ${budget.ratioMin} needs <= ${fixed(budget.budgetUsPerRequest)} us per request`);
  }
  const floor = results.purchaseFloor;
  if (floor) lines.push(`floor: ${floor.floor} (the purchase's write set on minimal tables, not a target): ${fixed(floor.ratio, 2)} of ${floor.ceiling}`);
  const batched = results.purchaseBatched;
  if (batched) lines.push(`batched: ${batched.floor} (the purchase's write set on trustfare's tables, ${fixed(batched.meanBatchSize, 1)} requests per batch on average, not a target): ${fixed(batched.ratio, 2)} of ${batched.ceiling}`);
  if (results.workers) lines.push(`workers: GET booking ${fixed(results.workers.getBookingOneWorkerRps)} req/s with 1 worker, ${fixed(results.workers.getBookingTwoWorkersRps)} req/s with 2: speed-up ${fixed(results.workers.speedup, 2)}x`);
  if (results.memory) lines.push(`memory: idle worker ${mib(results.memory.idleWorkerRssBytes)} RSS (primary ${mib(results.memory.idlePrimaryRssBytes)}); idle single process (WORKERS=1) ${mib(results.memory.idleSingleProcessRssBytes)}`);
  if (results.startup) lines.push(`start-up: node dist/server.js to first /readyz 200 (existing data directory, database included): ${fixed(results.startup.oneWorkerMsToReady)} ms with WORKERS=1, ${fixed(results.startup.twoWorkersMsToReady)} ms with WORKERS=2`);
  lines.push(results.ok ? 'result: OK (no errors, no non-2xx answers)' : `result: FAILED\n  ${results.problems.join('\n  ')}`);
  return lines.join('\n');
}

/** The hypervisor's share, when it took a noticeable part of the cores during some run. */
function stealNote(results: Results): string[] {
  const steal = Math.max(0, ...[...results.ceilings, ...results.scenarios].map((measurement) => measurement.cpu?.stealShare ?? 0));
  return steal >= 0.01 ? [`steal: the hypervisor took up to ${fixed(steal * 100)} % of core time during a run (other guests): expect req/s to move between runs`] : [];
}

function mib(bytes: number): string {
  return `${fixed(bytes / 2 ** 20, 1)} MiB`;
}
