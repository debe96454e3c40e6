import { describe, expect, it } from 'vitest';
import { replayKit, warmupLinesMax, type ReplayKitInput } from '../../bench/replay-kit.js';

// `npm run bench:serve` writes these files for another load generator (bench/replay/*.lua):
// every retained purchase line must pay a booking of its own under a key of its own.
const input = (overrides: Partial<ReplayKitInput> = {}): ReplayKitInput => ({
  serviceUrl: 'http://127.0.0.1:4000',
  ceilingUrl: 'http://127.0.0.1:4001',
  authorization: 'Bearer tfat_example',
  apiPrefix: '/bench/site-json/vendor/v2',
  getBookingId: 1,
  bookingBody: '{"firstname":"Ada"}',
  retainedPurchaseBodies: Array.from({ length: 30 }, (_, index) => JSON.stringify({ transaction_types: 'retained_purchase', bookings: [{ id: index + 10 }] })),
  runId: 'run1',
  directory: '/tmp/kit',
  scriptsDirectory: '/repo/bench/replay',
  listPerPage: 20,
  ...overrides,
});

const lines = (files: Record<string, string>) => files['retained-purchases.tsv']!.trimEnd().split('\n').map((line) => line.split('\t'));

describe('bench: replay kit', () => {
  it('writes one line per fresh booking, in order, each with its own Idempotency-Key', () => {
    const kit = input();
    const rows = lines(replayKit(kit));
    expect(rows.map(([, body]) => body)).toEqual(kit.retainedPurchaseBodies);
    const keys = rows.map(([key]) => key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.every((key) => key!.startsWith('replay-run1-'))).toBe(true);
  });

  it('never gives two kits the same key', () => {
    const first = lines(replayKit(input({ runId: 'aaaa' }))).map(([key]) => key);
    const second = lines(replayKit(input({ runId: 'bbbb' }))).map(([key]) => key);
    expect(first.filter((key) => second.includes(key))).toEqual([]);
  });

  it('leaves a 3 s warm-up at thousands of purchases a second lines of its own', () => {
    const bodies = Array.from({ length: 80_000 }, (_, index) => `{"b":${index}}`);
    const readme = replayKit(input({ retainedPurchaseBodies: bodies }))['README.txt']!;
    const firstLines = [...readme.matchAll(/retained-purchases\.tsv (\d+)/g)].map((match) => Number(match[1]));
    expect(firstLines).toEqual([1, warmupLinesMax + 1]);
    expect(warmupLinesMax).toBeGreaterThanOrEqual(3 * 6_000);
  });

  it('refuses a body the line format cannot carry', () => {
    expect(() => replayKit(input({ retainedPurchaseBodies: ['{"a":"tab\there"}'] }))).toThrow(/one line without tabs/);
    expect(() => replayKit(input({ retainedPurchaseBodies: ['{\n}'] }))).toThrow(/one line without tabs/);
  });

  it('starts the measured run after the lines the warm-up used, inside the file', () => {
    const readme = replayKit(input())['README.txt']!;
    const firstLines = [...readme.matchAll(/retained-purchases\.tsv (\d+)/g)].map((match) => Number(match[1]));
    expect(firstLines).toEqual([1, 8]);
    expect(readme).toContain('one of the 30 fresh bookings');
    expect(readme).toContain("-H 'Authorization: Bearer tfat_example' -s /repo/bench/replay/retained.lua http://127.0.0.1:4000/bench/site-json/vendor/v2/transactions");
    // The bare batched purchase authenticates with the tenant's token, as the service's requests do.
    expect(readme).toMatch(/REPLAY_BODY=\S+retained-purchase\.json wrk .* -H 'Authorization: Bearer tfat_example' -s \S+post\.lua \S+\/batched-purchase\n/);
  });
});
