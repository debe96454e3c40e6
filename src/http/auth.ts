import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../storage/db.js';
import { apiTokenPrefix, hashToken, looksLikeJwt, verifyJwt } from '../domain/credentials.js';
import { forbidden, invalidId, invalidToken, notLoggedIn } from './errors.js';

export type Role = 'member_admin' | 'member';

/** Who is calling, within the site named by the `{path}` segment of the URL. */
export interface Principal {
  via: 'jwt' | 'api_token';
  userId: number;
  username: string;
  siteId: number;
  sitePath: string;
  siteName: string;
  role: Role;
  readOnly: boolean;
  isPlatformAdmin: boolean;
  apiTokenId: number | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

interface PrincipalRow {
  user_id: number;
  username: string;
  site_id: number;
  site_path: string;
  site_name: string;
  role: Role;
  read_only: boolean;
  is_platform_admin: boolean;
  token_id: number | null;
  last_used_stale: boolean | null;
}

// One round trip per request: token, user, membership and site in a single statement.
const apiTokenStatement = {
  name: 'auth_api_token',
  text: `SELECT t.id AS token_id, u.id AS user_id, u.username, s.id AS site_id, s.path AS site_path, s.name AS site_name,
                m.role, m.read_only, u.is_platform_admin,
                (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute') AS last_used_stale
           FROM api_tokens t
           JOIN sites s ON s.id = t.site_id
           JOIN users u ON u.id = t.user_id
           JOIN memberships m ON m.site_id = t.site_id AND m.user_id = t.user_id
          WHERE t.token_hash = $1 AND s.path = $2
            AND (t.expires_at IS NULL OR now() <= (t.expires_at::timestamp + interval '23:59:59') AT TIME ZONE 'UTC')`,
};

const membershipStatement = {
  name: 'auth_membership',
  text: `SELECT NULL::bigint AS token_id, u.id AS user_id, u.username, s.id AS site_id, s.path AS site_path, s.name AS site_name,
                m.role, m.read_only, u.is_platform_admin, NULL::boolean AS last_used_stale
           FROM memberships m
           JOIN sites s ON s.id = m.site_id
           JOIN users u ON u.id = m.user_id
          WHERE m.user_id = $1 AND s.path = $2`,
};

export interface AuthOptions {
  db: Db;
  jwtSecret: Uint8Array;
}

/**
 * Resolves the bearer token of a request under `/{path}/...` to a principal of that site.
 * A missing token is 401; a valid token of a user without membership in that site is 404,
 * so the existence of other sites' data is never confirmed.
 */
export async function authenticate(request: FastifyRequest, options: AuthOptions): Promise<Principal> {
  const token = bearerToken(request);
  if (!token) throw notLoggedIn();
  const sitePath = (request.params as { path?: string }).path ?? '';
  let row: PrincipalRow | undefined;
  if (token.startsWith(apiTokenPrefix)) {
    row = await options.db.maybeOne<PrincipalRow & Record<string, unknown>>(apiTokenStatement as never, [hashToken(token), sitePath]);
    if (!row) {
      // Distinguish "bad token" (401) from "good token, other site" (404) without a second
      // round trip on the hot path: only failures pay for this look-up.
      const known = await options.db.maybeOne('SELECT 1 FROM api_tokens WHERE token_hash = $1 AND (expires_at IS NULL OR now() <= (expires_at::timestamp + interval \'23:59:59\') AT TIME ZONE \'UTC\')', [hashToken(token)]);
      throw known ? invalidId('site') : invalidToken();
    }
    if (row.last_used_stale) {
      // Bounded write rate: last_used_at is refreshed at most once a minute per token.
      void options.db.query('UPDATE api_tokens SET last_used_at = now() WHERE id = $1', [row.token_id]).catch(() => undefined);
    }
  } else if (looksLikeJwt(token)) {
    const claims = await verifyJwt(options.jwtSecret, token, 'user');
    if (!claims) throw invalidToken();
    row = await options.db.maybeOne<PrincipalRow & Record<string, unknown>>(membershipStatement as never, [claims.userId, sitePath]);
    if (!row) throw invalidId('site');
  } else {
    throw invalidToken();
  }
  return {
    via: row.token_id ? 'api_token' : 'jwt',
    userId: row.user_id,
    username: row.username,
    siteId: row.site_id,
    sitePath: row.site_path,
    siteName: row.site_name,
    role: row.role,
    readOnly: row.read_only,
    isPlatformAdmin: row.is_platform_admin,
    apiTokenId: row.token_id,
  };
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S{1,4096})\s*$/i.exec(header);
  return match ? match[1]! : null;
}

export interface AccessRule {
  /** Roles allowed; default both. */
  roles?: Role[];
}

/**
 * Builds the preHandler of a site-scoped route: authenticates, then applies the role rules of
 * decisions.md (read_only users may only GET; `roles` narrows who may call at all).
 */
export function requireAccess(options: AuthOptions, rule: AccessRule = {}) {
  return async function accessHook(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const principal = await authenticate(request, options);
    request.principal = principal;
    const isRead = request.method === 'GET' || request.method === 'HEAD';
    if (principal.readOnly && !isRead) throw forbidden('Read-only users may only read.');
    if (rule.roles && !rule.roles.includes(principal.role)) throw forbidden();
  };
}

/** The principal set by requireAccess; a route without it is a programming error. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route is missing requireAccess');
  return request.principal;
}
