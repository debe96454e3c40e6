import { describe, expect, it } from 'vitest';
import type { Tenant } from '../../bench/fixtures.js';
import { FreshPurchases, freshBookingsNeeded } from '../../bench/purchases.js';
import { interleavedSideSeconds } from '../../bench/load.js';
import type { Db } from '../../src/storage/db.js';

// What the bench and bench:ab send as retained purchases (bench/purchases.ts): one fresh booking
// per request and one Idempotency-Key per request, for the whole run.
const tenant: Tenant = { siteId: 1, path: 'bench', apiPrefix: '/bench/site-json/vendor/v2', headers: { authorization: 'Bearer t' }, channelId: 3, currency: 'USD' };
const sent = (purchases: FreshPurchases, count: number) =>
  Array.from({ length: count }, () => {
    const request = purchases.body();
    return { booking: (JSON.parse(request.body) as { bookings: { id: number }[] }).bookings[0]!.id, key: request.headers['idempotency-key'] };
  });

describe('bench: fresh purchases', () => {
  it('pays each booking once, in order, and counts the requests sent after they ran out', () => {
    const purchases = new FreshPurchases(null as unknown as Db, tenant, 9, 'run-');
    purchases.refill([11, 12]);
    expect(sent(purchases, 3).map((request) => request.booking)).toEqual([11, 12, 12]);
    expect(purchases.reused).toBe(1);
  });

  it('never sends a key twice, across refills (bench:ab refills before every launch)', () => {
    const purchases = new FreshPurchases(null as unknown as Db, tenant, 9, 'run-');
    purchases.refill([11, 12]);
    const first = sent(purchases, 2);
    purchases.refill([13, 14]);
    const second = sent(purchases, 2);
    expect(second.map((request) => request.booking)).toEqual([13, 14]);
    expect(new Set([...first, ...second].map((request) => request.key)).size).toBe(4);
    expect(first[0]!.key).toMatch(/^run-/);
    expect(purchases.reused).toBe(0);
  });

  it('tops the bookings up between runs to half again the largest run, so a fast machine does not run out', async () => {
    const purchases = new FreshPurchases(null as unknown as Db, tenant, 9, 'run-');
    // The database's unpaid bookings, oldest first; a sent booking is paid by the time topUp runs.
    const unpaid = [11, 12, 13, 14];
    const pay = (requests: { booking: number }[]) => requests.forEach(({ booking }) => unpaid.splice(unpaid.indexOf(booking), 1));
    const asked: number[] = [];
    // As fixtures.ts freshBookingIds: makes bookings until `count` are unpaid, returns them.
    const more = async (count: number) => {
      asked.push(count);
      while (unpaid.length < count) unpaid.push(100 + unpaid.length + asked.length * 10);
      return unpaid.slice(0, count);
    };
    purchases.refill(await more(4), more);
    const first = sent(purchases, 2);
    pay(first);
    await purchases.topUp();
    // The largest run, 2, left 2 of the 3 wanted for the next run.
    expect(asked).toEqual([4, 3]);
    const second = sent(purchases, 3);
    expect(second.map((request) => request.booking)).toEqual([13, 14, unpaid[2]]);
    pay(second);
    await purchases.topUp();
    // The largest run is now 3: 5 wanted, none left.
    expect(asked).toEqual([4, 3, 5]);
    const third = sent(purchases, 5);
    expect(new Set([...first, ...second, ...third].map((request) => request.booking)).size).toBe(10);
    expect(purchases.reused).toBe(0);
  });

  it('does not top up while enough are left, nor without a way to make more', async () => {
    const asked: number[] = [];
    const withMore = new FreshPurchases(null as unknown as Db, tenant, 9, 'run-');
    withMore.refill([1, 2, 3, 4, 5, 6], async (count) => (asked.push(count), []));
    sent(withMore, 2);
    await withMore.topUp();
    expect(asked).toEqual([]);
    const without = new FreshPurchases(null as unknown as Db, tenant, 9, 'run-');
    without.refill([1, 2]);
    sent(without, 2);
    await without.topUp();
    expect(sent(without, 1).map((request) => request.booking)).toEqual([2]);
    expect(without.reused).toBe(1);
  });

  it('makes enough fresh bookings for a bench:ab launch with its defaults (the 57,650 it prints)', () => {
    // 2 rounds, both sides each: 2 s warm-up + 12 s in 6 slices with a 1 s ramp each, at 600 a second.
    const seconds = 2 * 2 * interleavedSideSeconds({ warmupSeconds: 2, durationSeconds: 12, slices: 6 });
    expect(seconds).toBe(80);
    expect(freshBookingsNeeded({ perSecondMax: 600, seconds, connections: 50 })).toBe(57_650);
  });
});
