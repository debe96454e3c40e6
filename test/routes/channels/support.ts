import type { TestContext } from '../../support/context.js';
import type { SiteFixture } from '../../support/fixtures.js';

export const api = (site: { path: string }, rest: string) => `/${site.path}/site-json/vendor/v2/${rest}`;

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One request through app.inject as a site user; `payload` objects are sent as JSON. */
export async function call(t: TestContext, site: Pick<SiteFixture, 'path' | 'headers'>, method: Method, rest: string, payload?: unknown) {
  return t.app.inject({ method, url: api(site, rest), headers: site.headers, ...(payload === undefined ? {} : { payload: payload as object }) });
}

export async function makeChannel(t: TestContext, site: Pick<SiteFixture, 'path' | 'headers'>, body: Record<string, unknown> = {}) {
  const response = await call(t, site, 'POST', 'channels', { name: 'Main channel', currencies: 'GBP', ...body });
  if (response.statusCode !== 201) throw new Error(`channel create failed: ${response.body}`);
  return response.json() as { id: number; currencies: string; [key: string]: unknown };
}

/** Tables the resource and token routes write. Other parts add theirs (e.g. transactions). */
export const snapshotTables = ['sites', 'users', 'memberships', 'api_tokens', 'channels', 'channel_suppliers', 'suppliers', 'bookings'];

/**
 * Every row of `tables` as sorted JSON, for "a rejected request changed nothing" assertions.
 * Token bookkeeping (`last_used_at`, refreshed at most once a minute on any use) is left out.
 */
export async function snapshot(t: TestContext, tables: readonly string[] = snapshotTables): Promise<string> {
  const parts: string[] = [];
  for (const table of tables) {
    const rows = await t.db.query<{ row: string }>(`SELECT (to_jsonb(x) - 'last_used_at')::text AS row FROM ${table} x`);
    parts.push(`${table}: ${rows.map((row) => row.row).sort().join('\n')}`);
  }
  return parts.join('\n');
}
