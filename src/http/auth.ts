import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db, Row, Statement } from '../storage/db.js';
import { apiTokenPrefix, credentialEpochSql, hashToken, looksLikeJwt, passwordStampSql, revokedByPasswordChange, verifyJwt, type JwtClaims } from '../domain/credentials.js';
import { allFulfilled, Batcher } from '../batcher.js';
import { makeRoomForOne } from '../bounded.js';
import { PrincipalMemory, type RememberedPrincipal } from './principals.js';
import { limits } from '../limits.js';
import { forbidden, invalidSite, invalidToken, notLoggedIn, type ApiError } from './errors.js';

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

/**
 * The principal's columns, prefixed `auth_` so the columns of a route's own query joined to them
 * (authenticatedRead) never collide with them.
 */
interface PrincipalRow {
  auth_token_id: number | null;
  auth_user_id: number;
  auth_username: string;
  auth_site_id: number;
  auth_site_path: string;
  auth_site_name: string;
  auth_role: Role;
  auth_read_only: boolean;
  auth_is_platform_admin: boolean;
  auth_last_used_stale: boolean | null;
  /** Whole Unix seconds of the user's last password change (JWT statements only). */
  auth_password_changed_at?: number | null;
  /** The last instant the API token is usable (apiTokenLiveUntilSql, as JSON text); null without an expiry (API token statements only). */
  auth_live_until?: string | null;
}

type Credential = 'api_token' | 'jwt';

/** How often last_used_at is refreshed for a token in use: by the statements, and for remembered principals. */
const apiTokenTouchIntervalMs = 60_000;

/** An API token is usable through the last second (23:59:59 GMT) of its `expires_at` date. */
const apiTokenLiveUntilSql = (alias: string) => `(${alias}.expires_at::timestamp + interval '23:59:59') AT TIME ZONE 'UTC'`;
const apiTokenLiveSql = (alias: string) => `(${alias}.expires_at IS NULL OR now() <= ${apiTokenLiveUntilSql(alias)})`;

const principalColumns = `u.id AS auth_user_id, u.username AS auth_username, s.id AS auth_site_id, s.path AS auth_site_path, s.name AS auth_site_name,
                m.role AS auth_role, m.read_only AS auth_read_only, u.is_platform_admin AS auth_is_platform_admin`;

/**
 * The principal of a credential within a site, in one statement: $1 is the API token hash or
 * the JWT's user id, $2 the site path. Written once; every authenticating statement embeds it.
 */
const principalSql: Record<Credential, string> = {
  // The token row carries its principal (migration 014: kept equal to its site, user and
  // membership by triggers; role is null without a membership): one row of one table, no joins.
  api_token: `SELECT t.id AS auth_token_id, t.user_id AS auth_user_id, t.username AS auth_username, t.site_id AS auth_site_id,
                t.site_path AS auth_site_path, t.site_name AS auth_site_name, t.role AS auth_role, t.read_only AS auth_read_only,
                t.is_platform_admin AS auth_is_platform_admin, ${apiTokenLiveUntilSql('t')} AS auth_live_until,
                (t.last_used_at IS NULL OR t.last_used_at < now() - interval '${apiTokenTouchIntervalMs / 1000} seconds') AS auth_last_used_stale
           FROM api_tokens t
          WHERE t.token_hash = $1 AND t.site_path = $2 AND t.role IS NOT NULL AND ${apiTokenLiveSql('t')}`,
  jwt: `SELECT NULL::bigint AS auth_token_id, ${principalColumns}, NULL::boolean AS auth_last_used_stale,
                ${passwordStampSql} AS auth_password_changed_at
           FROM memberships m
           JOIN sites s ON s.id = m.site_id
           JOIN users u ON u.id = m.user_id
          WHERE m.user_id = $1 AND s.path = $2`,
};

/**
 * A route's read joined to authentication, so a hot route costs one round trip: the principal
 * is the CTE `auth` (columns of PrincipalRow: `auth.auth_site_id`, `auth.auth_user_id`, ...);
 * `sql` reads at most one row with its own parameters from $3 (look it up by a unique key:
 * it is joined as it is), and `on` ties that row to the principal
 * (`item.site_id = auth.auth_site_id`). No row (a 404 for an item route) still authenticates.
 * A principal authenticated once is then remembered and only checked (principals.ts): `on` may
 * use `auth.auth_site_id` only, the one principal column of that statement.
 */
export interface AuthenticatedRead {
  /** Unique among statement names (the prepared statements are `auth_<credential>_<name>`). */
  name: string;
  sql: string;
  on: string;
}

type Statements = Record<Credential, Statement>;

// The principal comes as one JSON column, `auth` (PrincipalRow): pg builds a parser and a
// property per column of every result, which cost more than one JSON.parse (issue 7).
// With the credential epoch read in the same snapshot, so the principal can be remembered.
const principalStatements: Statements = {
  api_token: { name: 'auth_api_token', text: `WITH auth AS (${principalSql.api_token}) SELECT to_json(auth) AS auth, ${credentialEpochSql} AS auth_epoch FROM auth` },
  jwt: { name: 'auth_membership', text: `WITH auth AS (${principalSql.jwt}) SELECT to_json(auth) AS auth, ${credentialEpochSql} AS auth_epoch FROM auth` },
};

interface JoinedStatements extends Statements {
  /**
   * The read for a remembered principal: $1 its site id, $2 its epoch. `auth_current` is false
   * when a credential changed since (the row is then not used); it is read in the statement's
   * own snapshot, so the read and the check see the same state.
   */
  remembered: Statement;
}


function joinedStatements(read: AuthenticatedRead): JoinedStatements {
  const joined = (credential: Credential): Statement => ({
    name: `auth_${credential}_${read.name}`,
    // The read joins as it is (no subquery fence: one plan node less per request); reading at
    // most one row by a unique key, its plan is that key's look-up whatever the statistics say
    // of the site's rows; `on` then checks it belongs to the principal's site.
    text: `WITH auth AS (${principalSql[credential]}) SELECT to_json(auth) AS auth, ${credentialEpochSql} AS auth_epoch, item.* FROM auth LEFT JOIN (${read.sql}) item ON ${read.on}`,
  });
  return {
    api_token: joined('api_token'),
    jwt: joined('jwt'),
    remembered: {
      name: `auth_remembered_${read.name}`,
      text: `SELECT ${credentialEpochSql} = $2::bigint AS auth_current, item.* FROM (SELECT $1::bigint AS auth_site_id) auth LEFT JOIN (${read.sql}) item ON ${read.on}`,
    },
  };
}

export interface AuthOptions {
  db: Db;
  jwtSecret: Uint8Array;
}

/**
 * Resolves the bearer token of a request under `/{path}/...` to a principal of that site.
 * A missing token is 401; a valid token of a user without membership in that site is 404,
 * so the existence of other sites' data is never confirmed.
 */
export async function authenticate(request: FastifyRequest, options: AuthOptions, memory?: Memory): Promise<Principal> {
  return principalFromRow((await authenticatedRow(request, options, principalStatements, [], memory)).auth);
}

/**
 * The credential epoch (migration 016) as of a read that started after the caller asked: one
 * statement serves every request that asks while none is running, and those asking while one
 * runs share the next (issue 7: a remembered principal's check, one round trip per batch of
 * requests instead of one each). A change committed before a request arrived is in the epoch it
 * gets, exactly as if it had read the epoch itself.
 */
function currentEpoch(db: Db): Promise<string> {
  let reader = epochReaders.get(db);
  if (!reader) {
    reader = new Batcher(async (requests) => {
      const { epoch } = await db.one<{ epoch: string }>(epochStatement, []);
      return allFulfilled(requests.map(() => epoch));
    }, { batchMax: Number.MAX_SAFE_INTEGER, inFlightMax: 1 });
    epochReaders.set(db, reader);
  }
  return reader.add(undefined);
}

const epochReaders = new WeakMap<Db, Batcher<undefined, string>>();
const epochStatement: Statement = { name: 'auth_credential_epoch', text: 'SELECT epoch::text AS epoch FROM credential_epoch' };

/**
 * The memory of every requireAccess hook on `db`: a remembered principal is checked against the
 * current epoch. One per database, not one per hook: the principal of a credential and site is the
 * same whatever the route (each hook applies its own rules after), so a token used on bookings and
 * transactions is authenticated once and remembered once.
 */
function principalsMemory(db: Db): Memory {
  let memory = principalsMemories.get(db);
  if (!memory) {
    memory = {
      principals: new PrincipalMemory(limits.principalsRememberedMax),
      async check(checkDb, remembered) {
        return (await currentEpoch(checkDb)) === remembered.epoch ? {} : undefined;
      },
    };
    principalsMemories.set(db, memory);
  }
  return memory;
}

const principalsMemories = new WeakMap<Db, Memory>();

/** The row of an authenticating statement: the principal, and the read's columns (all null when it found nothing). */
type AuthenticatedRow = Row & { auth: PrincipalRow };

/** The bearer credential of a request, as far as it is checked without the database. */
type Presented = { credential: 'api_token'; lookup: string } | { credential: 'jwt'; lookup: number; claims: JwtClaims };

async function presentedJwt(token: string, options: AuthOptions): Promise<Presented> {
  if (!looksLikeJwt(token)) throw invalidToken();
  const claims = await verifyJwt(options.jwtSecret, token, 'user');
  if (!claims) throw invalidToken();
  return { credential: 'jwt', lookup: claims.userId, claims };
}

/** Where a remembered principal is kept, and how it is checked. */
interface Memory {
  principals: PrincipalMemory<PrincipalRow>;
  /**
   * The route's row (its read's columns) for a principal remembered at `remembered.epoch`, or
   * undefined when a credential changed since.
   */
  check(db: Db, remembered: RememberedPrincipal<PrincipalRow>, values: unknown[]): Promise<Row | undefined>;
}

/** One statement for authentication and the route's read. */
async function authenticatedRow(request: FastifyRequest, options: AuthOptions, statements: Statements, values: unknown[], memory?: Memory): Promise<AuthenticatedRow> {
  const presentation = await presentationOf(request, options);
  if (memory) {
    const row = await rememberedRow(options.db, memory, presentation, values);
    if (row) return row;
  }
  return freshRow(options, statements, presentation, values, memory);
}

/** The request's credential as far as it is checked without the database, and its key in a Memory. */
interface Presentation {
  presented: Presented;
  sitePath: string;
  key: string;
}

async function presentationOf(request: FastifyRequest, options: AuthOptions): Promise<Presentation> {
  const token = bearerToken(request);
  if (!token) throw notLoggedIn();
  // An API token needs no await (no promise and microtask per request); a JWT's signature does.
  const presented: Presented = token.startsWith(apiTokenPrefix) ? { credential: 'api_token', lookup: bearerTokenHash(token) } : await presentedJwt(token, options);
  const sitePath = siteLookupPath((request.params as { path?: string }).path ?? '');
  return { presented, sitePath, key: `${presented.credential} ${presented.lookup} ${sitePath}` };
}

/**
 * The site path as the statements look it up. Authentication runs before the preValidation NUL
 * check (app.ts), and PostgreSQL text cannot hold a NUL (a 500 from the driver): such a path is
 * looked up as '', which names no site (migration 001's CHECK on sites.path), so the request gets
 * exactly the answer of an unknown site. One `includes` per request.
 */
function siteLookupPath(path: string): string {
  return path.includes('\u0000') ? '' : path;
}

/** The credential looked up (with the route's read), and its principal remembered in `memory`. */
async function freshRow(options: AuthOptions, statements: Statements, { presented, sitePath, key }: Presentation, values: unknown[], memory?: Memory): Promise<AuthenticatedRow> {
  const row = await options.db.maybeOne<AuthenticatedRow>(statements[presented.credential], [presented.lookup, sitePath, ...values]);
  if (!row) {
    if (presented.credential === 'jwt') throw await jwtRefusal(options.db, presented.claims);
    // Distinguish "bad token" (401) from "good token, other site" (404) without a second
    // round trip on the hot path: only failures pay for this look-up.
    const known = await options.db.maybeOne(knownApiTokenStatement, [presented.lookup]);
    throw known ? invalidSite() : invalidToken();
  }
  // A password change ends the sessions opened for the password before it, not only their refresh tokens.
  if (presented.credential === 'jwt' && revokedByPasswordChange(presented.claims, row.auth.auth_password_changed_at)) throw invalidToken();
  if (row.auth.auth_last_used_stale) touchApiToken(options.db, row.auth.auth_token_id!);
  const epoch = row.auth_epoch as string | number | null | undefined;
  if (memory && epoch != null) {
    const liveUntil = row.auth.auth_live_until;
    memory.principals.remember(key, { principal: row.auth, epoch: String(epoch), liveUntilMs: liveUntil ? Date.parse(liveUntil) : null, touchedAtMs: Date.now() });
  }
  return row;
}

/**
 * The route's read for a principal this process authenticated before, checked in the same
 * statement against credential_epoch; undefined when there is none or a credential changed
 * since (the caller then authenticates afresh, and remembers the new principal).
 */
async function rememberedRow(db: Db, memory: Memory, { presented, key }: Presentation, values: unknown[]): Promise<AuthenticatedRow | undefined> {
  const nowMs = Date.now();
  const remembered = recallPrincipal(memory, key, presented, nowMs);
  if (!remembered) return undefined;
  const row = await memory.check(db, remembered, values);
  if (!row) {
    memory.principals.forget(key);
    return undefined;
  }
  touchRemembered(db, remembered, nowMs);
  // The statement found the epoch unchanged: the row was read at the remembered one.
  return Object.assign(row, { auth: remembered.principal, auth_epoch: remembered.epoch });
}

/** The principal remembered for a presentation, if it may still be used as far as this process can tell without the database. */
function recallPrincipal(memory: Memory, key: string, presented: Presented, nowMs: number): RememberedPrincipal<PrincipalRow> | undefined {
  // Expiry is judged by this process's clock, as a JWT's is; the statement uses PostgreSQL's.
  const remembered = memory.principals.recall(key, nowMs);
  if (!remembered) return undefined;
  // A session older than the remembered password change: let the full statement judge it with
  // the current one (an operator may have moved it), as it judges every first request.
  if (presented.credential === 'jwt' && revokedByPasswordChange(presented.claims, remembered.principal.auth_password_changed_at)) return undefined;
  return remembered;
}

function touchRemembered(db: Db, remembered: RememberedPrincipal<PrincipalRow>, nowMs: number): void {
  const tokenId = remembered.principal.auth_token_id;
  if (tokenId !== null && nowMs - remembered.touchedAtMs >= apiTokenTouchIntervalMs) {
    remembered.touchedAtMs = nowMs;
    touchApiToken(db, tokenId);
  }
}

// Token ids whose last_used_at update is under way in this process.
const apiTokenTouchesInFlight = new Set<number>();

/**
 * Bounded write rate: last_used_at is refreshed at most once a minute per token (the statement
 * says when it is stale), and by one update at a time per process: every request that read the
 * stale flag before the update committed would otherwise send its own (50 concurrent requests of
 * one token sent 50 updates of one row, whose dead versions each later read had to step over).
 */
function touchApiToken(db: Db, tokenId: number): void {
  if (apiTokenTouchesInFlight.has(tokenId)) return;
  apiTokenTouchesInFlight.add(tokenId);
  void db
    .query(touchApiTokenStatement, [tokenId])
    .catch(() => undefined)
    .finally(() => apiTokenTouchesInFlight.delete(tokenId));
}

/**
 * Why a user JWT found no membership in the site of the URL, read only on that failure: the
 * user is gone or its password changed since the token was issued (a revoked credential, 401
 * whatever the site), else the site is not one of the user's (404, whether it exists or not: the
 * answer depends on the token's own user, never on another site).
 */
async function jwtRefusal(db: Db, claims: JwtClaims): Promise<ApiError> {
  const user = await db.maybeOne<{ password_changed_at: number | null }>(jwtUserStatement, [claims.userId]);
  return !user || revokedByPasswordChange(claims, user.password_changed_at) ? invalidToken() : invalidSite();
}

const jwtUserStatement: Statement = {
  name: 'auth_jwt_user',
  text: `SELECT ${passwordStampSql} AS password_changed_at FROM users u WHERE u.id = $1`,
};
const knownApiTokenStatement: Statement = { name: 'auth_api_token_known', text: `SELECT 1 FROM api_tokens t WHERE t.token_hash = $1 AND ${apiTokenLiveSql('t')}` };
const touchApiTokenStatement: Statement = { name: 'auth_api_token_touch', text: 'UPDATE api_tokens SET last_used_at = now() WHERE id = $1' };

function principalFromRow(row: PrincipalRow): Principal {
  return {
    via: row.auth_token_id ? 'api_token' : 'jwt',
    userId: row.auth_user_id,
    username: row.auth_username,
    siteId: row.auth_site_id,
    sitePath: row.auth_site_path,
    siteName: row.auth_site_name,
    role: row.auth_role,
    readOnly: row.auth_read_only,
    isPlatformAdmin: row.auth_is_platform_admin,
    apiTokenId: row.auth_token_id,
  };
}

/**
 * The bearer token of the request, or null when it sends none (no Authorization header, another
 * scheme, nothing after `Bearer`). A Bearer credential that is no token at all (longer than
 * 4096 characters, or words separated by spaces) is a credential nonetheless, and a bad one:
 * it comes back as `malformedBearerToken`, which no check accepts, so it is answered as any
 * invalid token (401 jwt_auth_invalid_token), not as a request that sent none. Only a refused
 * header pays for the second test.
 */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S{1,4096})\s*$/i.exec(header);
  if (match) return match[1]!;
  return /^Bearer\s+\S/i.test(header) ? malformedBearerToken : null;
}

/** Stands for a Bearer credential that is not a token: not a JWT, an API token or a page session. */
const malformedBearerToken = 'malformed';

const bearerTokenHashes = new Map<string, string>();

/**
 * hashToken of a bearer token, remembered for the last limits.bearerTokenHashesCachedMax distinct
 * tokens (oldest forgotten first; a look-up is a third of the cost of hashing, refreshing recency
 * on each hit would double it): the rate limiter and authentication both need it on every
 * request, and a client sends the same token again and again.
 */
export function bearerTokenHash(token: string): string {
  const cached = bearerTokenHashes.get(token);
  if (cached !== undefined) return cached;
  const hash = hashToken(token);
  makeRoomForOne(bearerTokenHashes, limits.bearerTokenHashesCachedMax);
  bearerTokenHashes.set(token, hash);
  return hash;
}

export interface AccessRule {
  /** Roles allowed; default both. */
  roles?: Role[];
}

/** The role rules of decisions.md: read_only users may only GET; `roles` narrows who may call at all. */
function refusalOf(request: FastifyRequest, principal: Principal, rule: AccessRule): ApiError | undefined {
  const isRead = request.method === 'GET' || request.method === 'HEAD';
  if (principal.readOnly && !isRead) return forbidden('Read-only users may only read.');
  if (rule.roles && !rule.roles.includes(principal.role)) return forbidden();
  return undefined;
}

function admit(request: FastifyRequest, principal: Principal, rule: AccessRule): void {
  const refusal = refusalOf(request, principal, rule);
  if (refusal) throw refusal;
}

/** Builds the onRequest hook of a site-scoped route: authenticates, then applies the role rules. */
export function requireAccess(options: AuthOptions, rule: AccessRule = {}) {
  const memory = principalsMemory(options.db);
  return async function accessHook(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const principal = await authenticate(request, options, memory);
    request.principal = principal;
    admit(request, principal, rule);
  };
}

/**
 * requireAccess for a route whose own first statement reads credential_epoch (POST transactions:
 * the attempt's look-up; issue 7, one round trip less per request). A remembered principal the
 * rules admit is admitted without reading the epoch; it is pending until the route confirms it:
 * the route's statement compares the epoch it read with `epochToConfirm`, then calls `confirmed`
 * or, for a changed epoch (nothing written), `confirm(request, { stale: true })`, which
 * authenticates afresh (a revoked credential is refused there) and applies the rules again. Any
 * answer given before that (a schema's 400, a refusal of the remembered role) must first
 * `confirm`: a credential changed since is answered as requireAccess would have answered it.
 */
export interface AccessConfirmedByRoute {
  hook(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** The epoch the route's statement must find for the pending principal to stand; undefined when none is pending. */
  epochToConfirm(request: FastifyRequest): string | undefined;
  /** The route's statement found the principal's epoch: it is no longer pending. */
  confirmed(request: FastifyRequest): void;
  /**
   * Confirms a pending principal by a read of the epoch (shared, as requireAccess's), unless
   * `stale` says the route found it changed; a changed one is authenticated afresh and admitted
   * again (request.principal replaced), or the refusal thrown. Nothing pending: nothing to do.
   */
  confirm(request: FastifyRequest, options?: { stale?: boolean }): Promise<void>;
}

export function requireAccessConfirmedByRoute(options: AuthOptions, rule: AccessRule = {}): AccessConfirmedByRoute {
  const memory = principalsMemory(options.db);
  const checked = requireAccess(options, rule);
  const pending = new WeakMap<FastifyRequest, { key: string; remembered: RememberedPrincipal<PrincipalRow> }>();
  return {
    async hook(request, reply) {
      const presentation = await presentationOf(request, options);
      const nowMs = Date.now();
      const remembered = recallPrincipal(memory, presentation.key, presentation.presented, nowMs);
      if (remembered) {
        const principal = principalFromRow(remembered.principal);
        // A refusal by the remembered role may be stale: requireAccess below decides it.
        if (!refusalOf(request, principal, rule)) {
          request.principal = principal;
          pending.set(request, { key: presentation.key, remembered });
          touchRemembered(options.db, remembered, nowMs);
          return;
        }
      }
      await checked(request, reply);
    },
    epochToConfirm(request) {
      return pending.get(request)?.remembered.epoch;
    },
    confirmed(request) {
      pending.delete(request);
    },
    async confirm(request, { stale = false } = {}) {
      const entry = pending.get(request);
      if (!entry) return;
      pending.delete(request);
      if (!stale && (await memory.check(options.db, entry.remembered, []))) return;
      memory.principals.forget(entry.key);
      const principal = await authenticate(request, options, memory);
      request.principal = principal;
      admit(request, principal, rule);
    },
  };
}

/**
 * requireAccess and the route's read in one statement (AuthenticatedRead): the hook sets the
 * principal with the same checks and answers as requireAccess, and keeps the read's row for the
 * handler (`readOf(request)`: undefined when the read found nothing). `values(request)` gives the
 * read's parameters from the raw request (the hook runs before validation, as requireAccess).
 */
export function requireAccessWithRead<T extends Row>(options: AuthOptions, read: AuthenticatedRead & { values(request: FastifyRequest): unknown[]; found(row: Row): boolean }, rule: AccessRule = {}) {
  const statements = joinedStatements(read);
  const memory: Memory = {
    principals: new PrincipalMemory(limits.principalsRememberedMax),
    async check(db, remembered, values) {
      const row = await db.one<Row & { auth_current: boolean | null }>(statements.remembered, [remembered.principal.auth_site_id, remembered.epoch, ...values]);
      return row.auth_current === true ? row : undefined;
    },
  };
  const reads = new WeakMap<FastifyRequest, { row: T; epoch: string }>();
  return {
    async hook(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
      const row = await authenticatedRow(request, options, statements, read.values(request), memory);
      const principal = principalFromRow(row.auth);
      request.principal = principal;
      admit(request, principal, rule);
      if (read.found(row)) reads.set(request, { row: row as unknown as T, epoch: String(row.auth_epoch) });
    },
    /**
     * The route's row, with the credential epoch (migration 016) its statement read: what is
     * remembered at that epoch (AuthorNameMemory) is as current as the row.
     */
    readOf(request: FastifyRequest): { row: T; epoch: string } | undefined {
      return reads.get(request);
    },
  };
}

/** The principal set by requireAccess; a route without it is a programming error. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route is missing requireAccess');
  return request.principal;
}
