import { limits } from '../../limits.js';
import type { Queryable } from '../../storage/db.js';
import type { Role } from './accounts.js';

/**
 * The authenticated user object of the spec, without `token` and `refresh_token` (the caller
 * adds them). `default_site` is the site of the URL the user logged in through.
 */
export interface UserProfile {
  id: number;
  name: string;
  username: string;
  user_email: string;
  user_nicename: string;
  user_display_name: string;
  usertype: Role;
  type: Role;
  read_only: boolean;
  can_sign_off_payout: boolean;
  default_site: { id: number; name: string; path: string; permissions: string[]; channel_count: number; usertype: Role };
  site_count: number;
  two_factor_confirmed_at: string | null;
  sites: { id: number; name: string }[];
}

/**
 * What a membership allows, named `<resource>:<read|write>`. Mirrors decisions.md "Auth and
 * roles": members work with bookings and transactions and read channels and suppliers;
 * member_admins also manage channels and API tokens; read-only users keep only the reads.
 */
export function permissionsFor(role: Role, readOnly: boolean): string[] {
  const reads = ['bookings:read', 'channels:read', 'suppliers:read', 'transactions:read'];
  if (role === 'member_admin') reads.push('api_tokens:read');
  if (readOnly) return reads.sort();
  const writes = role === 'member_admin' ? ['api_tokens:write', 'bookings:write', 'channels:write', 'transactions:write'] : ['bookings:write', 'transactions:write'];
  return [...reads, ...writes].sort();
}

/** WordPress's nicename: the username made URL-safe. */
export function nicename(username: string): string {
  return username.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'user';
}

interface ProfileRow {
  id: number;
  username: string;
  email: string;
  display_name: string;
  can_sign_off_payout: boolean;
  two_factor_confirmed_at: Date | null;
  role: Role;
  read_only: boolean;
  site_id: number;
  site_name: string;
  site_path: string;
  channel_count: number;
  site_count: number;
}

const profileStatement = {
  name: 'auth_profile',
  text: `SELECT u.id, u.username, u.email, u.display_name, u.can_sign_off_payout, u.two_factor_confirmed_at,
                m.role, m.read_only, s.id AS site_id, s.name AS site_name, s.path AS site_path,
                (SELECT count(*)::int FROM channels c WHERE c.site_id = s.id AND c.deleted_at IS NULL) AS channel_count,
                (SELECT count(*)::int FROM memberships all_m WHERE all_m.user_id = u.id) AS site_count
           FROM users u
           JOIN memberships m ON m.user_id = u.id
           JOIN sites s ON s.id = m.site_id
          WHERE u.id = $1 AND s.path = $2`,
};

/** The profile of a user seen through one site, or null when the user is not a member of it. */
export async function loadProfile(db: Queryable, userId: number, sitePath: string): Promise<UserProfile | null> {
  const row = await db.maybeOne<ProfileRow & Record<string, unknown>>(profileStatement as never, [userId, sitePath]);
  if (!row) return null;
  const sites = await db.query<{ id: number; name: string }>(
    'SELECT s.id, s.name FROM memberships m JOIN sites s ON s.id = m.site_id WHERE m.user_id = $1 ORDER BY s.id LIMIT $2',
    [userId, limits.userSitesListedMax],
  );
  return {
    id: row.id,
    name: row.display_name,
    username: row.username,
    user_email: row.email,
    user_nicename: nicename(row.username),
    user_display_name: row.display_name,
    usertype: row.role,
    type: row.role,
    read_only: row.read_only,
    can_sign_off_payout: row.can_sign_off_payout,
    default_site: {
      id: row.site_id,
      name: row.site_name,
      path: row.site_path,
      permissions: permissionsFor(row.role, row.read_only),
      channel_count: row.channel_count,
      usertype: row.role,
    },
    site_count: row.site_count,
    two_factor_confirmed_at: row.two_factor_confirmed_at ? row.two_factor_confirmed_at.toISOString() : null,
    sites: sites.map((site) => ({ id: site.id, name: site.name })),
  };
}
