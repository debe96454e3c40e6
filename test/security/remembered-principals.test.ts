// GET booking remembers the principal it authenticated and, on the next request, checks it against
// credential_epoch in the statement that reads the booking (src/http/principals.ts, migration 016).
// Every change to a credential made anywhere (here: straight SQL, as another process or an operator
// would) must show on the very next request, exactly as when each request looked the token up.
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signJwt } from '../../src/domain/credentials.js';
import { setPassword } from '../../src/domain/users/accounts.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { addUser, createSite, type SiteFixture } from '../support/fixtures.js';
import { api, expectError, expectStatus, makeBooking, makeChannel } from '../conformance/support.js';

let t: TestContext;
const statementNames: string[] = [];
const originalQuery = pg.Client.prototype.query;

beforeAll(async () => {
  t = await createTestContext();
  (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { name?: string };
    if (typeof first === 'object' && first?.name) statementNames.push(first.name);
    return (originalQuery as (...rest: unknown[]) => unknown).apply(this, args);
  } as never;
});
afterAll(async () => {
  (pg.Client.prototype as { query: unknown }).query = originalQuery;
  await t?.close();
});

interface Shop {
  site: SiteFixture;
  bookingId: number;
}

async function newShop(): Promise<Shop> {
  const site = await createSite(t.db);
  const channel = await makeChannel(t, site);
  const booking = await makeBooking(t, site, channel.id);
  return { site, bookingId: booking.id };
}

const getBooking = (shop: Shop, headers = shop.site.headers, path = shop.site.path, id = shop.bookingId) => api(t, { path, headers }, 'GET', `bookings/${id}`);

/** The statements one GET booking sent, by name. */
async function statementsOf(request: () => Promise<unknown>): Promise<string[]> {
  statementNames.length = 0;
  await request();
  return statementNames.filter((name) => name.includes('booking_json_by_id'));
}

const epoch = async () => (await t.db.one<{ epoch: string }>('SELECT epoch FROM credential_epoch')).epoch;

describe('remembered principals (GET booking)', () => {
  let shop: Shop;
  beforeEach(async () => {
    shop = await newShop();
    // The first request authenticates and remembers; the second uses the remembered principal.
    expectStatus(await getBooking(shop), 200);
    expectStatus(await getBooking(shop), 200);
  });

  it('reads the booking without looking the credential up once it is remembered', async () => {
    expect(await statementsOf(() => getBooking(shop))).toEqual(['auth_remembered_booking_json_by_id']);
    expect(await statementsOf(() => getBooking(shop))).toEqual(['auth_remembered_booking_json_by_id']);
  });

  it('a deleted token is refused on the next request', async () => {
    await t.db.query('DELETE FROM api_tokens WHERE user_id = $1', [shop.site.userId]);
    expectError(await getBooking(shop), 401);
  });

  it('an expiry moved into the past is refused on the next request', async () => {
    await t.db.query("UPDATE api_tokens SET expires_at = (now() AT TIME ZONE 'UTC')::date - 1 WHERE user_id = $1", [shop.site.userId]);
    expectError(await getBooking(shop), 401);
  });

  it('a token that expires later today stays usable, and is remembered', async () => {
    await t.db.query("UPDATE api_tokens SET expires_at = (now() AT TIME ZONE 'UTC')::date WHERE user_id = $1", [shop.site.userId]);
    expectStatus(await getBooking(shop), 200);
    expect(await statementsOf(() => getBooking(shop))).toEqual(['auth_remembered_booking_json_by_id']);
  });

  it('a removed membership answers 404 on the next request, as for another site', async () => {
    await t.db.query('DELETE FROM memberships WHERE site_id = $1 AND user_id = $2', [shop.site.siteId, shop.site.userId]);
    expectError(await getBooking(shop), 404);
  });

  it('a renamed site answers under its new path only', async () => {
    const newPath = `${shop.site.path}-moved`;
    await t.db.query('UPDATE sites SET path = $2 WHERE id = $1', [shop.site.siteId, newPath]);
    expectError(await getBooking(shop), 404);
    expectStatus(await getBooking(shop, shop.site.headers, newPath), 200);
  });

  it('a deleted user is refused on the next request', async () => {
    // Another member of the site: the booking's author cannot be deleted.
    const member = await addUser(t.db, shop.site.siteId, { role: 'member' });
    expectStatus(await getBooking(shop, member.headers), 200);
    expectStatus(await getBooking(shop, member.headers), 200);
    await t.db.query('DELETE FROM users WHERE id = $1', [member.userId]);
    expectError(await getBooking(shop, member.headers), 401);
  });

  it('keeps to its own site: another site\'s booking and a missing one are 404', async () => {
    const other = await newShop();
    expectError(await getBooking(shop, shop.site.headers, shop.site.path, other.bookingId), 404);
    expectError(await getBooking(shop, shop.site.headers, shop.site.path, other.bookingId + 1_000_000), 404);
    expect(await statementsOf(() => getBooking(shop, shop.site.headers, shop.site.path, other.bookingId))).toEqual(['auth_remembered_booking_json_by_id']);
  });

  describe('user tokens (JWT)', () => {
    const bearer = async (issuedAt: Date) => ({ authorization: `Bearer ${await signJwt(t.config.secrets.jwtSecret, { userId: shop.site.userId, kind: 'user' }, issuedAt)}` });

    beforeEach(async () => {
      await t.db.query("UPDATE users SET password_changed_at = now() - interval '1 hour' WHERE id = $1", [shop.site.userId]);
    });

    it('a password change ends the sessions opened before it on the next request', async () => {
      const earlier = await bearer(new Date(Date.now() - 60_000));
      expectStatus(await getBooking(shop, earlier), 200);
      expect(await statementsOf(() => getBooking(shop, earlier))).toEqual(['auth_remembered_booking_json_by_id']);
      await setPassword(t.db, shop.site.userId, 'a-completely-new-password');
      expectError(await getBooking(shop, earlier), 401);
      expectStatus(await getBooking(shop, await bearer(new Date(Date.now() + 2_000))), 200);
    });

    it('a removed membership answers 404 on the next request', async () => {
      const session = await bearer(new Date(Date.now() - 60_000));
      expectStatus(await getBooking(shop, session), 200);
      expectStatus(await getBooking(shop, session), 200);
      await t.db.query('DELETE FROM memberships WHERE site_id = $1 AND user_id = $2', [shop.site.siteId, shop.site.userId]);
      expectError(await getBooking(shop, session), 404);
    });
  });
});

describe('credential_epoch', () => {
  let site: SiteFixture;
  let before: string;
  beforeAll(async () => {
    site = await createSite(t.db);
  });
  beforeEach(async () => {
    before = await epoch();
  });

  it.each([
    ['an API token expiry', "UPDATE api_tokens SET expires_at = '2999-01-01' WHERE user_id = $1"],
    ['a membership role', "UPDATE memberships SET role = 'member_admin' WHERE user_id = $1"],
    ['a username', "UPDATE users SET username = username || '-x' WHERE id = $1"],
    ['a password change', 'UPDATE users SET password_changed_at = now() WHERE id = $1'],
  ])('moves with %s', async (_change, sql) => {
    await t.db.query(sql, [site.userId]);
    expect(BigInt(await epoch())).toBeGreaterThan(BigInt(before));
  });

  it('moves with a site rename', async () => {
    await t.db.query("UPDATE sites SET name = name || ' renamed' WHERE id = $1", [site.siteId]);
    expect(BigInt(await epoch())).toBeGreaterThan(BigInt(before));
  });

  it('stays with last-use bookkeeping, which every request in use writes', async () => {
    await t.db.query('UPDATE api_tokens SET last_used_at = now() WHERE user_id = $1', [site.userId]);
    await t.db.query('UPDATE users SET totp_last_step = 1 WHERE id = $1', [site.userId]);
    expect(await epoch()).toBe(before);
  });
});
