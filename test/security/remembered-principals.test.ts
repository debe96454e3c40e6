// Routes remember the principals they authenticated and, on the next request, check them against
// credential_epoch (src/http/principals.ts, migration 016): GET booking in the statement that reads
// the booking, every other route (requireAccess, here GET transactions) by a read of the epoch that
// concurrent requests share. Every change to a credential made anywhere (here: straight SQL, as
// another process or an operator would) must show on the very next request, exactly as when each
// request looked the token up.
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
  channelId: number;
}

async function newShop(): Promise<Shop> {
  const site = await createSite(t.db);
  const channel = await makeChannel(t, site);
  const booking = await makeBooking(t, site, channel.id);
  return { site, bookingId: booking.id, channelId: channel.id };
}

/** A vault transaction (a card verification on the test channel): POST transactions' every step, no money. */
const vaultBody = (shop: Shop) => ({ transaction_types: 'vault', channels: shop.channelId, currencies: 'GBP', total: 0, token: 'tok_visa' });
const postVault = (shop: Shop, headers = shop.site.headers, path = shop.site.path, extra: Record<string, string> = {}) =>
  api(t, { path, headers }, 'POST', 'transactions', vaultBody(shop), extra);

const getBooking = (shop: Shop, headers = shop.site.headers, path = shop.site.path, id = shop.bookingId) => api(t, { path, headers }, 'GET', `bookings/${id}`);

/** A route under test: how to call it, and the statements that authenticate it once the principal is remembered. */
interface Route {
  send(shop: Shop, headers?: SiteFixture['headers'], path?: string): ReturnType<typeof getBooking>;
  /** Its success status. */
  ok: number;
  /** A request that makes the principal remembered without writing as the user (default: send); a user with transactions cannot be deleted. */
  prime?(shop: Shop, headers: SiteFixture['headers']): ReturnType<typeof getBooking>;
  /** Of the statements one request sent, those about authentication. */
  authStatements(names: string[]): string[];
  remembered: string[];
}

const routes: [string, Route][] = [
  ['GET booking (joined read)', {
    send: (shop, headers, path) => getBooking(shop, headers, path),
    authStatements: (names) => names.filter((name) => name.includes('booking_json_by_id')),
    ok: 200,
    remembered: ['auth_remembered_booking_json_by_id'],
  }],
  ['GET transactions (requireAccess)', {
    send: (shop, headers = shop.site.headers, path = shop.site.path) => api(t, { path, headers }, 'GET', 'transactions'),
    ok: 200,
    authStatements: (names) => names.filter((name) => name.startsWith('auth_')),
    remembered: ['auth_credential_epoch'],
  }],
  ['POST transactions (checked by the attempt)', {
    send: (shop, headers, path) => postVault(shop, headers, path),
    ok: 201,
    // requireAccess's memory is the route's too.
    prime: (shop, headers) => api(t, { path: shop.site.path, headers }, 'GET', 'transactions'),
    // The attempt's look-up reads the epoch with what the request names: no statement of its own.
    authStatements: (names) => names.filter((name) => name.startsWith('auth_') || name === 'transaction_create_lookup'),
    remembered: ['transaction_create_lookup'],
  }],
];

/** The statements one request sent, by name. */
async function statementsOf(request: () => Promise<unknown>): Promise<string[]> {
  statementNames.length = 0;
  await request();
  return [...statementNames];
}

const epoch = async () => (await t.db.one<{ epoch: string }>('SELECT epoch FROM credential_epoch')).epoch;

describe.each(routes)('remembered principals: %s', (_name, route) => {
  let shop: Shop;
  const send = (headers?: SiteFixture['headers'], path?: string) => route.send(shop, headers, path);
  const authStatementsOf = async (request: () => Promise<unknown>) => route.authStatements(await statementsOf(request));
  beforeEach(async () => {
    shop = await newShop();
    // The first request authenticates and remembers; the second uses the remembered principal.
    expectStatus(await send(), route.ok);
    expectStatus(await send(), route.ok);
  });

  it('answers without looking the credential up once it is remembered', async () => {
    expect(await authStatementsOf(() => send())).toEqual(route.remembered);
    expect(await authStatementsOf(() => send())).toEqual(route.remembered);
  });

  it('a deleted token is refused on the next request', async () => {
    await t.db.query('DELETE FROM api_tokens WHERE user_id = $1', [shop.site.userId]);
    expectError(await send(), 401);
  });

  it('an expiry moved into the past is refused on the next request', async () => {
    await t.db.query("UPDATE api_tokens SET expires_at = (now() AT TIME ZONE 'UTC')::date - 1 WHERE user_id = $1", [shop.site.userId]);
    expectError(await send(), 401);
  });

  it('a token that expires later today stays usable, and is remembered', async () => {
    await t.db.query("UPDATE api_tokens SET expires_at = (now() AT TIME ZONE 'UTC')::date WHERE user_id = $1", [shop.site.userId]);
    expectStatus(await send(), route.ok);
    expect(await authStatementsOf(() => send())).toEqual(route.remembered);
  });

  it('a removed membership revokes the token: refused on the next request', async () => {
    await t.db.query('DELETE FROM memberships WHERE site_id = $1 AND user_id = $2', [shop.site.siteId, shop.site.userId]);
    expectError(await send(), 401);
  });

  it('a renamed site answers under its new path only', async () => {
    const newPath = `${shop.site.path}-moved`;
    await t.db.query('UPDATE sites SET path = $2 WHERE id = $1', [shop.site.siteId, newPath]);
    expectError(await send(), 404);
    expectStatus(await send(shop.site.headers, newPath), route.ok);
  });

  it('a deleted user is refused on the next request', async () => {
    // Another member of the site: the booking's author cannot be deleted.
    const member = await addUser(t.db, shop.site.siteId, { role: 'member' });
    const prime = () => (route.prime ? route.prime(shop, member.headers) : send(member.headers));
    expectStatus(await prime(), 200);
    expectStatus(await prime(), 200);
    await t.db.query('DELETE FROM users WHERE id = $1', [member.userId]);
    expectError(await send(member.headers), 401);
  });

  describe('user tokens (JWT)', () => {
    const bearer = async (issuedAt: Date) => ({ authorization: `Bearer ${await signJwt(t.config.secrets.jwtSecret, { userId: shop.site.userId, kind: 'user' }, issuedAt)}` });

    beforeEach(async () => {
      await t.db.query("UPDATE users SET password_changed_at = now() - interval '1 hour' WHERE id = $1", [shop.site.userId]);
    });

    it('a password change ends the sessions opened before it on the next request', async () => {
      const earlier = await bearer(new Date(Date.now() - 60_000));
      expectStatus(await send(earlier), route.ok);
      expect(await authStatementsOf(() => send(earlier))).toEqual(route.remembered);
      await setPassword(t.db, shop.site.userId, 'a-completely-new-password');
      expectError(await send(earlier), 401);
      expectStatus(await send(await bearer(new Date(Date.now() + 2_000))), route.ok);
    });

    it('a session older than the password change stays refused while a newer one is remembered', async () => {
      const earlier = await bearer(new Date(Date.now() - 60_000));
      expectStatus(await send(earlier), route.ok);
      await setPassword(t.db, shop.site.userId, 'a-completely-new-password');
      // The user logs in again: the new session is authenticated and remembered under the same key (user and site).
      const later = await bearer(new Date(Date.now() + 2_000));
      expectStatus(await send(later), route.ok);
      expectStatus(await send(later), route.ok);
      expectError(await send(earlier), 401);
      expectStatus(await send(later), route.ok);
    });

    it('a removed membership answers 404 on the next request', async () => {
      const session = await bearer(new Date(Date.now() - 60_000));
      expectStatus(await send(session), route.ok);
      expectStatus(await send(session), route.ok);
      await t.db.query('DELETE FROM memberships WHERE site_id = $1 AND user_id = $2', [shop.site.siteId, shop.site.userId]);
      expectError(await send(session), 404);
    });
  });
});

describe('remembered principals keep to their site (GET booking)', () => {
  it("another site's booking and a missing one are 404", async () => {
    const shop = await newShop();
    const other = await newShop();
    expectStatus(await getBooking(shop), 200);
    expectError(await getBooking(shop, shop.site.headers, shop.site.path, other.bookingId), 404);
    expectError(await getBooking(shop, shop.site.headers, shop.site.path, other.bookingId + 1_000_000), 404);
    const names = await statementsOf(() => getBooking(shop, shop.site.headers, shop.site.path, other.bookingId));
    expect(names.filter((name) => name.includes('booking_json_by_id'))).toEqual(['auth_remembered_booking_json_by_id']);
  });
});

describe("GET booking's author names, remembered per process against the epoch", () => {
  let shop: Shop;
  const authorOf = async (id = shop.bookingId) => {
    const body = expectStatus(await getBooking(shop, shop.site.headers, shop.site.path, id), 200);
    return { author: body.author, authorname: body.authorname };
  };
  const readsOf = (names: string[]) => names.filter((name) => name.includes('booking_json_by_id') || name === 'author_names');
  beforeEach(async () => {
    shop = await newShop();
    await authorOf();
    await authorOf();
  });

  it('reads the booking alone once its author is known', async () => {
    expect(readsOf(await statementsOf(() => getBooking(shop)))).toEqual(['auth_remembered_booking_json_by_id']);
  });

  it('shows a display name changed anywhere on the next request', async () => {
    await t.db.query("UPDATE users SET display_name = 'Renamed Author' WHERE id = $1", [shop.site.userId]);
    expect(await authorOf()).toEqual({ author: shop.site.username, authorname: 'Renamed Author' });
  });

  it('shows a username changed anywhere on the next request', async () => {
    const username = `${shop.site.username}-renamed`;
    await t.db.query('UPDATE users SET username = $2 WHERE id = $1', [shop.site.userId, username]);
    expect((await authorOf()).author).toBe(username);
  });

  it("reads another author's names on first sight, then remembers them", async () => {
    const member = await addUser(t.db, shop.site.siteId, { role: 'member' });
    const booking = await makeBooking(t, { path: shop.site.path, headers: member.headers }, shop.channelId);
    // Adding a member moved the epoch (its token copies the membership, migration 014): one request
    // to remember the principal, and the first author's names, at the new one.
    await authorOf();
    const first = await statementsOf(async () => expect(await authorOf(booking.id as number)).toEqual({ author: member.username, authorname: member.username }));
    expect(readsOf(first)).toEqual(['auth_remembered_booking_json_by_id', 'author_names']);
    const second = await statementsOf(async () => expect(await authorOf(booking.id as number)).toEqual({ author: member.username, authorname: member.username }));
    expect(readsOf(second)).toEqual(['auth_remembered_booking_json_by_id']);
  });
});

describe('the epoch read shared by concurrent requests (requireAccess)', () => {
  it('serves 20 concurrent requests of a remembered principal with fewer reads than requests, and none misses a revocation made before it', async () => {
    const shop = await newShop();
    const list = () => api(t, { path: shop.site.path, headers: shop.site.headers }, 'GET', 'transactions');
    expectStatus(await list(), 200);
    const names = await statementsOf(() => Promise.all(Array.from({ length: 20 }, list)));
    const reads = names.filter((name) => name === 'auth_credential_epoch').length;
    expect(names.filter((name) => name === 'auth_api_token')).toEqual([]);
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThan(20);
    await t.db.query('DELETE FROM api_tokens WHERE user_id = $1', [shop.site.userId]);
    const after = await Promise.all(Array.from({ length: 20 }, list));
    expect(after.map((response) => response.statusCode)).toEqual(after.map(() => 401));
  });
});

describe('a remembered principal on POST transactions, checked by the attempt', () => {
  let shop: Shop;
  const lookups = (names: string[]) => names.filter((name) => name === 'transaction_create_lookup').length;
  const transactionCount = async () => Number((await t.db.one<{ n: string }>('SELECT count(*) AS n FROM transactions WHERE site_id = $1', [shop.site.siteId])).n);
  beforeEach(async () => {
    shop = await newShop();
    expectStatus(await postVault(shop), 201);
  });

  it('refuses a revoked token before judging the body: 401, not the schema\'s 400', async () => {
    await t.db.query('DELETE FROM api_tokens WHERE user_id = $1', [shop.site.userId]);
    expectError(await api(t, { path: shop.site.path, headers: shop.site.headers }, 'POST', 'transactions', { ...vaultBody(shop), total: 'nothing' }), 401);
  });

  it('writes nothing for a revoked token, and keeps no answer for its Idempotency-Key', async () => {
    const before = await transactionCount();
    await t.db.query('DELETE FROM api_tokens WHERE user_id = $1', [shop.site.userId]);
    expectError(await postVault(shop, shop.site.headers, shop.site.path, { 'idempotency-key': 'revoked-1' }), 401);
    expect(await transactionCount()).toBe(before);
    expect(await t.db.query('SELECT 1 FROM idempotency_keys WHERE site_id = $1', [shop.site.siteId])).toEqual([]);
  });

  it('refuses all of 20 concurrent requests made after a revocation', async () => {
    await t.db.query('DELETE FROM api_tokens WHERE user_id = $1', [shop.site.userId]);
    const after = await Promise.all(Array.from({ length: 20 }, () => postVault(shop)));
    expect(after.map((response) => response.statusCode)).toEqual(after.map(() => 401));
  });

  it('refuses only the stale members of a batch: the others are written', async () => {
    const other = await addUser(t.db, shop.site.siteId, { role: 'member' });
    await t.db.query('DELETE FROM api_tokens WHERE user_id = $1', [shop.site.userId]);
    // The other member is remembered at the new epoch, the revoked token at the old one: in the
    // batches below, some members are current and some stale.
    expectStatus(await postVault(shop, other.headers), 201);
    const before = await transactionCount();
    const sent = Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? shop.site.headers : other.headers));
    const answers = await Promise.all(sent.map((headers) => postVault(shop, headers)));
    expect(answers.map((response) => response.statusCode)).toEqual(sent.map((headers) => (headers === other.headers ? 201 : 401)));
    expect(await transactionCount()).toBe(before + 10);
  });

  it('runs the request when another user\'s change moved the epoch, authenticating afresh once', async () => {
    const other = await createSite(t.db);
    await t.db.query("UPDATE users SET username = username || '-x' WHERE id = $1", [other.userId]);
    const names = await statementsOf(async () => expectStatus(await postVault(shop), 201));
    // The look-up found the epoch moved (nothing written), the token was looked up, the request ran.
    expect(names.filter((name) => name.startsWith('auth_'))).toEqual(['auth_api_token']);
    expect(lookups(names)).toBe(2);
    expect(lookups(await statementsOf(async () => expectStatus(await postVault(shop), 201)))).toBe(1);
  });

  it('refuses a read-only member remembered from a read (403), writing nothing', async () => {
    const member = await addUser(t.db, shop.site.siteId, { role: 'member', readOnly: true });
    // Remembered by the read it may make; the write must still be judged by its rules.
    expectStatus(await api(t, { path: shop.site.path, headers: member.headers }, 'GET', 'transactions'), 200);
    const before = await transactionCount();
    expectError(await postVault(shop, member.headers), 403);
    expectError(await postVault(shop, member.headers), 403);
    expect(await transactionCount()).toBe(before);
  });

  it('refuses a member made read-only (403), and lets one made writable again through', async () => {
    const member = await addUser(t.db, shop.site.siteId, { role: 'member' });
    const setReadOnly = (readOnly: boolean) => t.db.query('UPDATE memberships SET read_only = $3 WHERE site_id = $1 AND user_id = $2', [shop.site.siteId, member.userId, readOnly]);
    expectStatus(await postVault(shop, member.headers), 201);
    await setReadOnly(true);
    const before = await transactionCount();
    expectError(await postVault(shop, member.headers), 403);
    expect(await transactionCount()).toBe(before);
    // The remembered principal is now the read-only one: its refusal is not given without a check.
    await setReadOnly(false);
    expectStatus(await postVault(shop, member.headers), 201);
  });
});

describe('the memory of requireAccess', () => {
  it('is shared by every route: a principal authenticated on one is remembered on the others, each applying its own role rules', async () => {
    const site = await createSite(t.db, { role: 'member' });
    const call = (method: 'GET' | 'POST', path: string, payload?: object) => api(t, { path: site.path, headers: site.headers }, method, path, payload);
    expect(await statementsOf(async () => expectStatus(await call('GET', 'transactions'), 200))).toContain('auth_api_token');
    // Remembered from GET transactions: neither the channel list nor the admin-only channel create
    // looks the token up again.
    const list = await statementsOf(async () => expectStatus(await call('GET', 'channels'), 200));
    expect(list.filter((name) => name.startsWith('auth_'))).toEqual(['auth_credential_epoch']);
    const create = await statementsOf(async () => expectError(await call('POST', 'channels', { name: 'Not mine to make' }), 403));
    expect(create.filter((name) => name.startsWith('auth_'))).toEqual(['auth_credential_epoch']);
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
