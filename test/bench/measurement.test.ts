import { describe, expect, it } from 'vitest';
import { percentile, type Measurement } from '../../bench/load.js';
import { abSummary, combine, floorAgainst, ratioSpread } from '../../bench/report.js';

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
});
