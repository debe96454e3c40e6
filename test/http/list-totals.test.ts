import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { cli } from '../cli/helpers.js';
import { createBooking, createShop, get, post, purchaseBody, vaultedShopContext, type Shop } from '../payments/support.js';

// The totals of unfiltered bookings and transactions lists (`X-Site-Total`) are kept by the
// database per site (migration 024) instead of counted on every page. What an integrator would
// notice if that went wrong: a total that disagrees with the rows the list pages through, counts
// another site's rows, a refused or rolled-back write, or a deleted booking.
let t: TestContext;
let shop: Shop;
let other: Shop;
let vaultId: number;
beforeAll(async () => {
  ({ t, shop, vaultId } = await vaultedShopContext());
  other = await createShop(t);
});
afterAll(async () => t.close());

/** X-Site-Total of a list, as a number. */
async function totalOf(site: Shop, path: string): Promise<number> {
  const response = await get(t, site, path);
  expect(response.statusCode).toBe(200);
  return Number(response.headers['x-site-total']);
}

/** What the list would show if it counted its rows. */
async function counted(site: Shop): Promise<{ bookings: number; transactions: number }> {
  return t.db.one(
    `SELECT (SELECT count(*)::int FROM bookings WHERE site_id = $1 AND deleted_at IS NULL) AS bookings,
            (SELECT count(*)::int FROM transactions WHERE site_id = $1) AS transactions`,
    [site.site.siteId],
  );
}

async function totals(site: Shop): Promise<{ bookings: number; transactions: number }> {
  return { bookings: await totalOf(site, '/bookings?per_page=1'), transactions: await totalOf(site, '/transactions?per_page=1') };
}

const retained = (booking: number, total: number) => ({
  transaction_types: 'retained_purchase', channels: shop.channelId, currencies: 'USD', total, linked_id: vaultId, bookings: [{ id: booking, currencies: 'USD', total }],
});

describe('list totals', () => {
  it('agree with the rows after concurrent bookings and payments on two sites, a refused payment and a rolled-back write', async () => {
    const before = await totals(shop);
    const otherBefore = await totals(other);

    const bookings = await Promise.all(Array.from({ length: 30 }, (_, index) => createBooking(t, index % 3 === 0 ? other : shop, { total: 1500 })));
    const ours = bookings.filter((_, index) => index % 3 !== 0);
    const theirs = bookings.filter((_, index) => index % 3 === 0);
    // Payments in batches (concurrent requests share attempt inserts), on both sites at once.
    const answers = await Promise.all([
      ...ours.map((booking, index) => post(t, shop, retained(booking, 1500), { 'idempotency-key': `totals-${index}` })),
      ...theirs.map((booking) => post(t, other, purchaseBody(other, booking, 1500))),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual(answers.map(() => 201));
    // Refused under locks (the booking is paid in full): its attempt's insert is rolled back.
    const refused = await post(t, shop, retained(ours[0]!, 1500));
    expect(refused.statusCode).toBe(400);
    // A write rolled back by its own transaction counts nothing either.
    await t.db.transaction(async (tx) => {
      await tx.query(`INSERT INTO bookings (site_id, channel_id, author_id, firstname, surname, email, date_end, total, currency, country)
                      VALUES ($1, $2, $3, 'Ro', 'Llback', 'r@example.com', '2099-12-31', 100, 'USD', 'GB')`, [shop.site.siteId, shop.channelId, shop.site.userId]);
      throw new Error('rolled back');
    }).catch((error: Error) => expect(error.message).toBe('rolled back'));

    expect(await totals(shop)).toEqual({ bookings: before.bookings + 20, transactions: before.transactions + 20 });
    expect(await totals(other)).toEqual({ bookings: otherBefore.bookings + 10, transactions: otherBefore.transactions + 10 });
    expect(await totals(shop)).toEqual(await counted(shop));
    expect(await totals(other)).toEqual(await counted(other));
  });

  it('drop when a booking is deleted or removed and rise when it is restored; pages and their count agree', async () => {
    const [kept, deleted, removed] = await Promise.all([createBooking(t, shop), createBooking(t, shop), createBooking(t, shop)]);
    const before = await totalOf(shop, '/bookings');
    const response = await t.app.inject({ method: 'DELETE', url: `${shop.base}/bookings/${deleted}`, headers: shop.site.headers });
    expect(response.statusCode).toBe(200);
    await t.db.query('DELETE FROM bookings WHERE id = $1', [removed]);
    expect(await totalOf(shop, '/bookings')).toBe(before - 2);
    await t.db.query('UPDATE bookings SET deleted_at = NULL WHERE id = $1', [deleted]);
    expect(await totalOf(shop, '/bookings')).toBe(before - 1);
    expect((await counted(shop)).bookings).toBe(before - 1);

    // Paging through the whole list meets as many rows as the total says.
    const perPage = 100;
    const total = await totalOf(shop, `/bookings?per_page=${perPage}`);
    const pages = Math.ceil(total / perPage);
    const seen: number[] = [];
    for (let page = 1; page <= pages; page++) seen.push(...(await get(t, shop, `/bookings?per_page=${perPage}&page=${page}`)).json().map((item: { id: number }) => item.id));
    expect(seen).toHaveLength(total);
    expect(seen).toContain(kept);
  });

  it('of a filtered list count its matches (the kept count is the unfiltered one)', async () => {
    const booking = await createBooking(t, shop, { total: 700 });
    const { count: completes } = await t.db.one<{ count: number }>(`SELECT count(*)::int AS count FROM transactions WHERE site_id = $1 AND status = 'complete'`, [shop.site.siteId]);
    expect(await totalOf(shop, '/transactions?status=complete')).toBe(completes);
    expect(await totalOf(shop, `/bookings?include=${booking}`)).toBe(1);
    expect(await totalOf(shop, '/transactions?status=pending')).toBe(0);
    // Past the last page the total is still given (read on its own).
    const past = await get(t, shop, '/transactions?per_page=100&page=1000');
    expect(past.json()).toEqual([]);
    expect(Number(past.headers['x-site-total'])).toBe((await counted(shop)).transactions);
    const pastFiltered = await get(t, shop, '/transactions?status=complete&per_page=100&page=1000');
    expect(Number(pastFiltered.headers['x-site-total'])).toBe(completes);
  });

  it('of an unfiltered list are read from the kept count; `totals verify` finds a count that is off and --repair recounts it', async () => {
    const right = await totals(shop);
    expect((await cli(t.config.databaseUrl!, ['totals', 'verify'])).json).toEqual({ ok: true, problems: [] });
    // Tampered on purpose: the unfiltered totals show it, so they are not counted on each page.
    const tamper = `UPDATE site_row_counts SET row_count = row_count + $3
                     WHERE (site_id, relation, slot) = (SELECT site_id, relation, slot FROM site_row_counts WHERE site_id = $1 AND relation = $2 LIMIT 1)`;
    await t.db.query(tamper, [shop.site.siteId, 'bookings', 1000]);
    await t.db.query(tamper, [shop.site.siteId, 'transactions', 2000]);
    expect(await totals(shop)).toEqual({ bookings: right.bookings + 1000, transactions: right.transactions + 2000 });

    const problems = [
      { site_id: shop.site.siteId, relation: 'bookings', kept: right.bookings + 1000, counted: right.bookings },
      { site_id: shop.site.siteId, relation: 'transactions', kept: right.transactions + 2000, counted: right.transactions },
    ];
    const found = await cli(t.config.databaseUrl!, ['totals', 'verify', '--site', shop.site.path]);
    expect(found.code).not.toBe(0);
    expect(found.stderr).toContain('--repair');
    expect(found.stderr).toContain(`"kept": ${right.transactions + 2000}`);
    // The other site is not named: its totals are right.
    expect((await cli(t.config.databaseUrl!, ['totals', 'verify', '--site', other.site.path])).code).toBe(0);
    const repaired = await cli(t.config.databaseUrl!, ['totals', 'verify', '--repair']);
    expect(repaired.code).toBe(0);
    expect(repaired.json).toEqual({ ok: true, problems: [], repaired: problems });
    expect(await totals(shop)).toEqual(right);
    expect(await totals(other)).toEqual(await counted(other));
  });
});
