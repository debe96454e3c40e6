import { limits } from '../limits.js';
import type { Queryable } from './db.js';

/**
 * The connection budget. Each server process holds up to limits.dbPoolSize connections for the
 * API and the jobs and limits.sandboxDbPoolSize for the sandbox processor, and a cluster's primary
 * one more. PostgreSQL refuses the connection past its max_connections less the slots it keeps
 * for superusers (and, from 16 on, for roles granted pg_use_reserved_connections): a pool that
 * grows under load then fails requests with "sorry, too many clients already".
 */
const perProcess = limits.dbPoolSize + limits.sandboxDbPoolSize;

/** PostgreSQL's default superuser_reserved_connections, which the embedded server keeps. */
const postgresReservedConnections = 3;

/** The most connections WORKERS server processes open together (the primary's one included). */
export function connectionsNeeded(workers: number): number {
  return workers * perProcess + (workers > 1 ? 1 : 0);
}

/** The max_connections the embedded PostgreSQL starts with: WORKERS' need and room for CLI commands and psql. */
export function embeddedMaxConnections(workers: number): number {
  return Math.max(limits.embeddedConnectionsMin, connectionsNeeded(workers) + postgresReservedConnections + limits.embeddedSpareConnections);
}

/** What the database lets this role open, as PostgreSQL counts it. */
export interface ConnectionLimits {
  maxConnections: number;
  /** superuser_reserved_connections plus reserved_connections (PostgreSQL 16 and later). */
  reservedConnections: number;
  /** CONNECTION LIMIT of the role and of the database (-1: none); superusers are exempt from both. */
  roleConnectionLimit: number;
  databaseConnectionLimit: number;
  superuser: boolean;
}

export async function connectionLimitsOf(db: Queryable): Promise<ConnectionLimits> {
  // Through a pooler (PgBouncer) these are the server's settings, not the pooler's own limits.
  const row = await db.one<{ max_connections: number; reserved: number; rolconnlimit: number; datconnlimit: number; rolsuper: boolean }>(
    `SELECT current_setting('max_connections')::int AS max_connections,
            current_setting('superuser_reserved_connections')::int + coalesce(current_setting('reserved_connections', true), '0')::int AS reserved,
            r.rolconnlimit, d.datconnlimit, r.rolsuper
       FROM pg_roles r, pg_database d
      WHERE r.rolname = current_user AND d.datname = current_database()`,
  );
  return { maxConnections: row.max_connections, reservedConnections: row.reserved, roleConnectionLimit: row.rolconnlimit, databaseConnectionLimit: row.datconnlimit, superuser: row.rolsuper };
}

/**
 * Why WORKERS do not fit the database's connections, with what to change, or null when they
 * fit. The reserved slots count as taken even for a superuser: they are the operator's way in
 * when everything else is busy.
 */
export function connectionBudgetProblem(database: ConnectionLimits, workers: number): string | null {
  const bounds = [{ connections: database.maxConnections - database.reservedConnections, setting: 'max_connections', value: `${database.maxConnections} less ${database.reservedConnections} reserved` }];
  if (!database.superuser && database.roleConnectionLimit >= 0) bounds.push({ connections: database.roleConnectionLimit, setting: "the role's CONNECTION LIMIT", value: String(database.roleConnectionLimit) });
  if (!database.superuser && database.databaseConnectionLimit >= 0) bounds.push({ connections: database.databaseConnectionLimit, setting: "the database's CONNECTION LIMIT", value: String(database.databaseConnectionLimit) });
  const tightest = bounds.reduce((least, bound) => (bound.connections < least.connections ? bound : least));
  const needed = connectionsNeeded(workers);
  if (needed <= tightest.connections) return null;
  let fitting = 0;
  while (connectionsNeeded(fitting + 1) <= tightest.connections) fitting++;
  const remedies = [...(fitting > 0 ? [`Set WORKERS to ${fitting} or fewer`] : []), `${fitting > 0 ? 'raise' : 'Raise'} ${tightest.setting} by ${needed - Math.max(tightest.connections, 0)}`];
  return `WORKERS=${workers} may open ${needed} connections to PostgreSQL (${perProcess} per server process${workers > 1 ? ', 1 for the primary' : ''}), `
    + `more than the ${Math.max(tightest.connections, 0)} it allows (${tightest.setting} ${tightest.value}): under load, requests would fail with "too many clients". `
    + `${remedies.join(', ')}, or put PgBouncer in front (docs/scaling.md §4).`;
}

/** connectionBudgetProblem of the database `db` reaches. */
export async function connectionBudgetProblemOf(db: Queryable, workers: number): Promise<string | null> {
  return connectionBudgetProblem(await connectionLimitsOf(db), workers);
}
