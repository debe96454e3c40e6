import { createChannel } from '../../src/domain/channels.js';
import { createTestContext, type TestContext, type TestContextOptions } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';

/**
 * Shared set-up of the payments tests: a context with a pool large enough for concurrent
 * requests, a site, a test channel, bookings, and helpers that speak the wire format. The
 * processor timeout is generous so a loaded CI machine never turns an answered call into
 * `incomplete`; tests of the no-answer card set a short one themselves.
 */
export function paymentsContext(options: TestContextOptions = {}): Promise<TestContext> {
  return createTestContext({ ...options, poolSize: options.poolSize ?? 12, env: { PROCESSOR_TIMEOUT_MS: '10000', ...options.env } });
}

/** A payments context with a shop in it: the set-up most tests of the API start from. */
export async function shopContext(options: TestContextOptions = {}): Promise<{ t: TestContext; shop: Shop }> {
  const t = await paymentsContext(options);
  return { t, shop: await createShop(t) };
}

export interface Shop {
  site: SiteFixture;
  channelId: number;
  currency: string;
  base: string;
}

export async function createShop(t: TestContext, options: { currency?: string; accountMode?: 'test' | 'live'; role?: 'member_admin' | 'member'; platformAdmin?: boolean } = {}): Promise<Shop> {
  const site = await createSite(t.db, { role: options.role ?? 'member_admin', platformAdmin: options.platformAdmin ?? false });
  const currency = options.currency ?? 'USD';
  const channel = await createChannel(t.db, { siteId: site.siteId, name: 'Main', currency });
  if (options.accountMode === 'live') await t.db.query(`UPDATE channels SET account_mode = 'live' WHERE id = $1`, [channel.id]);
  return { site, channelId: channel.id, currency, base: `/${site.path}/site-json/vendor/v2` };
}

export async function addChannel(t: TestContext, shop: Shop, options: { currency?: string; accountMode?: string; accountType?: string } = {}): Promise<number> {
  const channel = await createChannel(t.db, { siteId: shop.site.siteId, name: 'Other', currency: options.currency ?? shop.currency });
  if (options.accountMode) await t.db.query('UPDATE channels SET account_mode = $2 WHERE id = $1', [channel.id, options.accountMode]);
  if (options.accountType) await t.db.query('UPDATE channels SET account_type = $2 WHERE id = $1', [channel.id, options.accountType]);
  return channel.id;
}

export async function createBooking(t: TestContext, shop: Shop, options: { total?: number; channelId?: number; reference?: string; dateEnd?: string } = {}): Promise<number> {
  const row = await t.db.one<{ id: number }>(
    `INSERT INTO bookings (site_id, channel_id, author_id, firstname, surname, email, date_end, total, currency, country, reference)
     VALUES ($1, $2, $3, 'Ada', 'Lovelace', 'ada@example.com', $4, $5, (SELECT currency FROM channels WHERE id = $2), 'GB', $6) RETURNING id`,
    [shop.site.siteId, options.channelId ?? shop.channelId, shop.site.userId, options.dateEnd ?? '2099-12-31', options.total ?? 10_000, options.reference ?? 'REF-1'],
  );
  return row.id;
}

export type Body = Record<string, unknown>;

export function post(t: TestContext, shop: Shop, body: Body, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'POST', url: `${shop.base}/transactions`, headers: { ...shop.site.headers, ...headers }, payload: body });
}

export function get(t: TestContext, shop: Shop, path: string) {
  return t.app.inject({ method: 'GET', url: `${shop.base}${path}`, headers: shop.site.headers });
}

/** A purchase body paying one booking in full with a sandbox token. */
export function purchaseBody(shop: Shop, bookingId: number, total: number, extra: Body = {}): Body {
  return { transaction_types: 'purchase', channels: shop.channelId, currencies: shop.currency, total, token: 'tok_visa', bookings: [{ id: bookingId, currencies: shop.currency, total }], ...extra };
}

export async function bookingRow(t: TestContext, id: number) {
  const row = await t.db.one<{ status: string; total_paid: number; total_authorized: number; transaction_ids: string[]; locked_transactions: number }>(
    'SELECT status, total_paid, total_authorized, transaction_ids, locked_transactions FROM bookings WHERE id = $1',
    [id],
  );
  return { ...row, transaction_ids: row.transaction_ids.map(Number) };
}

export async function entriesOf(t: TestContext, transactionId: number) {
  return t.db.query<{ id: number; account: string; direction: string; amount: number }>('SELECT id, account, direction, amount FROM ledger_entries WHERE transaction_id = $1 ORDER BY id', [transactionId]);
}

/**
 * For the batch tests: a context whose pool holds every batch slot with room to spare and whose
 * processor timeout outlasts a held batch, a shop, and a vaulted test card to charge again.
 */
export async function vaultedShopContext(): Promise<{ t: TestContext; shop: Shop; vaultId: number }> {
  const t = await paymentsContext({ poolSize: 20, env: { PROCESSOR_TIMEOUT_MS: '20000' } });
  const shop = await createShop(t);
  const vaultId = (await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: 'USD', total: 0, token: 'tok_visa' })).json().id as number;
  return { t, shop, vaultId };
}

/** A processor call kept at the bank: `reached` once the call arrived, answered after `release()`. */
export interface HeldCall {
  reached: boolean;
  release(): void;
}

/**
 * Makes the next call of one processor operation wait at the bank until released, so a race with
 * a payment in flight is certain rather than timed. Returns `hold()`: each hold catches the one
 * call made next; every other call goes through at once (a race lost by the code under test then
 * fails its test quickly instead of waiting for the processor timeout).
 */
export function bankHolds(t: TestContext, operation: 'authorise' | 'refund'): () => HeldCall {
  const connector = t.context.connector as unknown as Record<typeof operation, (request: unknown) => Promise<unknown>>;
  const call = connector[operation].bind(connector);
  let next: (HeldCall & { released: Promise<void> }) | null = null;
  connector[operation] = async (request: unknown) => {
    const held = next;
    next = null;
    if (held) {
      held.reached = true;
      await held.released;
    }
    return call(request);
  };
  return () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = { reached: false, released, release: () => release() };
    next = held;
    return held;
  };
}
