import { describe, expect, it } from 'vitest';
import { percentile, type Measurement } from '../../bench/load.js';
import { abSummary, combine, cpuBudget, floorAgainst, ratioSpread, summary, type Results, type Target } from '../../bench/report.js';
import type { CpuUse } from '../../bench/cpu.js';

// How the bench turns runs into figures (bench/load.ts, bench/report.ts).

const slice = (requestsPerSecond: number, overrides: Partial<Measurement> = {}): Measurement => ({
  name: 'slice', description: 'd', method: 'GET', path: '/p', connections: 50, requestBytes: 0, responseBytes: 10,
  durationSeconds: 2, requests: requestsPerSecond * 2, requestsPerSecond, latencyP50Ms: 5, latencyP99Ms: 10, latencyMaxMs: 12,
  errors: 0, timeouts: 0, non2xx: 0, statusCodes: { 200: requestsPerSecond * 2 }, cpu: null, ...overrides,
});

describe('bench: measurements', () => {
  it('takes percentiles by nearest rank', () => {
    const values = Array.from({ length: 200 }, (_, index) => index + 1);
    expect(percentile(values, 0.5)).toBe(100);
    expect(percentile(values, 0.99)).toBe(198);
    expect(percentile(values, 1)).toBe(200);
    expect(percentile([7], 0.99)).toBe(7);
    expect(percentile([], 0.5)).toBe(0);
  });

  it('takes slices together: all their requests over all their time, the worst p99, every status and each slice\'s rate', () => {
    const together = combine([slice(1000), slice(3000, { latencyP99Ms: 30, non2xx: 1, statusCodes: { 200: 5999, 400: 1 } })], { name: 'both', description: 'two slices' });
    expect(together).toMatchObject({ name: 'both', description: 'two slices', requests: 8000, durationSeconds: 4, requestsPerSecond: 2000, latencyP99Ms: 30, non2xx: 1 });
    expect(together.statusCodes).toEqual({ 200: 7999, 400: 1 });
    expect(together.slicesRequestsPerSecond).toEqual([1000, 3000]);
  });

  it('reads the bare purchase against the 3-statement ceiling, and reports nothing when either did not run', () => {
    const floor = slice(2400, { name: 'bare two-phase purchase' });
    expect(floorAgainst(floor, slice(3000, { name: 'bare 3-statement tx' }))).toEqual({ floor: 'bare two-phase purchase', ceiling: 'bare 3-statement tx', ratio: 0.8 });
    expect(floorAgainst(undefined, slice(3000))).toBeNull();
    expect(floorAgainst(floor, undefined)).toBeNull();
  });

  it('averages ratios of two builds so that a ratio and its inverse cancel', () => {
    expect(ratioSpread([1.25, 0.8]).geometricMean).toBeCloseTo(1);
    expect(ratioSpread([1.1, 1.1, 1.1])).toEqual({ geometricMean: expect.closeTo(1.1, 10), lowest: 1.1, highest: 1.1 });
    expect(ratioSpread([0.9, 1.2])).toMatchObject({ lowest: 0.9, highest: 1.2 });
    expect(() => ratioSpread([])).toThrow();
    expect(() => ratioSpread([1, 0])).toThrow();
  });

  it('closes bench:ab with the rate of B over A and, when every round measured it, the machine CPU per request of B over A', () => {
    const [rate, cpu] = abSummary('retained-purchase', 2, [1.25, 0.8, 1.1, 0.9], [0.8, 0.8, 0.9, 1]).split('\n');
    expect(rate).toBe('retained-purchase: B/A geometric mean 0.997 over 4 rounds in 2 launches (rounds from 0.800 to 1.250)');
    expect(cpu).toBe('retained-purchase: machine CPU per request B/A geometric mean 0.871 (rounds from 0.800 to 1.000; below 1, B costs less)');
    // A round without CPU figures (no /proc, say) leaves the CPU line out rather than averaging fewer rounds.
    expect(abSummary('get-booking', 1, [1, 1], [0.9])).toBe('get-booking: B/A geometric mean 1.000 over 2 rounds in 1 launches (rounds from 1.000 to 1.000)');
  });

  it('reads a target\'s CPU per request against its ceiling\'s: the multiple, how busy it kept the cores next to the ceiling and the CPU per request that would meet the ratio', () => {
    const cpu = (machineUsPerRequest: number): CpuUse => ({ machineUsPerRequest, serverUsPerRequest: 0, postgresUsPerRequest: 0, loadGeneratorUsPerRequest: 0, busyShare: 0.8, stealShare: 0 });
    const goal: Target = { scenario: 'POST retained_purchase', ceiling: 'bare 3-statement tx, interleaved', ratioMin: 0.8, ratio: 0.4, p99MaxMs: 50, p99Ms: 80, met: false };
    const purchase = slice(1200, { name: goal.scenario, cpu: cpu(1250) });
    const ceiling = slice(3000, { name: goal.ceiling, cpu: cpu(500) });
    const budget = cpuBudget(goal, purchase, ceiling)!;
    // 2.5 times the ceiling's CPU at 0.4 of its rate: the cores as busy as the ceiling kept them,
    // so 0.8 of the rate needs 500 / 0.8 µs per request.
    expect(budget).toMatchObject({ usPerRequest: 1250, ceilingUsPerRequest: 500, cpuMultiple: 2.5, ratioMin: 0.8 });
    expect(budget.relativeBusy).toBeCloseTo(1);
    expect(budget.budgetUsPerRequest).toBeCloseTo(625);
    // Less busy than the ceiling (waits), the budget shrinks with it.
    expect(cpuBudget({ ...goal, ratio: 0.3 }, purchase, ceiling)!.budgetUsPerRequest).toBeCloseTo(468.75);
    expect(cpuBudget(goal, slice(1200), ceiling)).toBeNull();
    expect(cpuBudget(goal, purchase, undefined)).toBeNull();
    const results = { date: 'd', ok: true, problems: [], machine: { cpus: 2, cpuModel: 'm', memoryBytes: 2 ** 30, os: 'o', node: 'n', postgres: 'p' },
      settings: { durationSeconds: 10, warmupSeconds: 3, connections: 50, database: 'embedded', nodeEnv: 'production', logLevel: 'warn', workers: 1, poolSizePerProcess: 10, listPerPage: 20, slices: 4 },
      ceilings: [], scenarios: [], targets: [goal], workers: null, memory: null, startup: null, purchaseFloor: null, purchaseBatched: null, cpuBudgets: [budget] } satisfies Results;
    expect(summary(results)).toContain("cpu: POST retained_purchase 1250 us of machine CPU per request, 2.50x bare 3-statement tx, interleaved's 500; rate ratio x CPU multiple 1.00, at which 0.8 needs <= 625 us per request");
  });
});
