import { randomBytes } from 'node:crypto';
import { hash } from '@node-rs/argon2';
import type { Queryable } from '../../src/storage/db.js';
import { generateApiToken } from '../../src/domain/credentials.js';

export interface SiteFixture {
  siteId: number;
  path: string;
  userId: number;
  username: string;
  password: string;
  /** An API token of the user for this site; use as `Authorization: Bearer <token>`. */
  token: string;
  headers: { authorization: string };
}

// Cheap Argon2 parameters keep fixtures fast; production parameters live in domain code.
const fastArgon = { memoryCost: 1024, timeCost: 1, parallelism: 1 };

/** A site with one user of the given role and an API token, inserted directly. */
export async function createSite(db: Queryable, options: { path?: string; role?: 'member_admin' | 'member'; readOnly?: boolean; platformAdmin?: boolean } = {}): Promise<SiteFixture> {
  const suffix = randomBytes(4).toString('hex');
  const path = options.path ?? `site-${suffix}`;
  const site = await db.one<{ id: number }>('INSERT INTO sites (path, name) VALUES ($1, $2) RETURNING id', [path, `Site ${suffix}`]);
  const member = await addUser(db, site.id, { role: options.role ?? 'member_admin', readOnly: options.readOnly ?? false, platformAdmin: options.platformAdmin ?? false });
  return { siteId: site.id, path, ...member };
}

export async function addUser(db: Queryable, siteId: number, options: { role: 'member_admin' | 'member'; readOnly?: boolean; platformAdmin?: boolean }): Promise<Omit<SiteFixture, 'siteId' | 'path'>> {
  const username = `user-${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const user = await db.one<{ id: number }>(
    'INSERT INTO users (username, email, display_name, password_hash, is_platform_admin) VALUES ($1, $2, $3, $4, $5) RETURNING id',
    [username, `${username}@example.com`, username, await hash(password, fastArgon), options.platformAdmin ?? false],
  );
  await db.query('INSERT INTO memberships (site_id, user_id, role, read_only) VALUES ($1, $2, $3, $4)', [siteId, user.id, options.role, options.readOnly ?? false]);
  const { token, hash: tokenHash } = generateApiToken();
  await db.query('INSERT INTO api_tokens (site_id, user_id, name, token_hash) VALUES ($1, $2, $3, $4)', [siteId, user.id, 'fixture', tokenHash]);
  return { userId: user.id, username, password, token, headers: { authorization: `Bearer ${token}` } };
}

/** The hosted page session a served page (vaulting app, payment request page) carries in its page data, or null. */
export function pageSessionOf(body: string): string | null {
  return /"session":"(hps_[A-Za-z0-9_-]+)"/.exec(body)?.[1] ?? null;
}
