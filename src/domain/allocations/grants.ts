import type { Queryable } from '../../storage/db.js';

/**
 * Cross-site allocation grants: an operator records that channels of `fromSiteId` may allocate
 * funds to channels of `toSiteId` (the receiving site's consent, given outside the API). Within
 * one site no grant is needed.
 */
export async function grantAllocation(db: Queryable, options: { fromSiteId: number; toSiteId: number }): Promise<{ created: boolean }> {
  if (options.fromSiteId === options.toSiteId) throw new Error('a site may always allocate to its own channels; no grant is needed');
  const rows = await db.query(
    'INSERT INTO allocation_grants (from_site_id, to_site_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING from_site_id',
    [options.fromSiteId, options.toSiteId],
  );
  return { created: rows.length === 1 };
}

export async function revokeAllocationGrant(db: Queryable, options: { fromSiteId: number; toSiteId: number }): Promise<{ revoked: boolean }> {
  const rows = await db.query('DELETE FROM allocation_grants WHERE from_site_id = $1 AND to_site_id = $2 RETURNING from_site_id', [options.fromSiteId, options.toSiteId]);
  return { revoked: rows.length === 1 };
}

/** The sites `fromSiteId` may allocate to besides itself. */
export async function grantedSiteIds(db: Queryable, fromSiteId: number): Promise<Set<number>> {
  const rows = await db.query<{ to_site_id: number }>('SELECT to_site_id FROM allocation_grants WHERE from_site_id = $1', [fromSiteId]);
  return new Set(rows.map((row) => row.to_site_id));
}

export async function listAllocationGrants(db: Queryable): Promise<{ fromSite: string; toSite: string; createdAt: Date }[]> {
  const rows = await db.query<{ from_path: string; to_path: string; created_at: Date }>(
    `SELECT f.path AS from_path, t.path AS to_path, g.created_at
       FROM allocation_grants g JOIN sites f ON f.id = g.from_site_id JOIN sites t ON t.id = g.to_site_id
      ORDER BY f.path, t.path`,
  );
  return rows.map((row) => ({ fromSite: row.from_path, toSite: row.to_path, createdAt: row.created_at }));
}
