import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest, RouteOptions, onSendHookHandler } from 'fastify';
import type { App } from '../app.js';
import type { AppContext } from '../context.js';
import { limits } from '../limits.js';
import type { Db, Queryable } from '../storage/db.js';
import { ApiError, conflict, invalidParam } from './errors.js';
import { pickedBy } from '../storage/batches.js';

/**
 * `Idempotency-Key` on every site-scoped POST (decisions.md; docs/payments.md "Idempotency").
 * The first request with a key claims it (one INSERT, so two processes cannot both win) and runs;
 * its response (any status) is stored when sent. A retry with the same key and the same request
 * gets the stored response with `Idempotent-Replayed: true`; the same key with another request
 * is 409 `rest_idempotency_conflict`; a retry while the first is still running waits for it (up
 * to limits.idempotencyWaitMs), then is answered with what the first had written (its resource
 * or transaction, as it reads now), else 409; on a route that notes its effect on the key
 * (`idempotencyEffectNoted`), a key left in flight past deadAfterMs with nothing noted is taken
 * over and the retry runs. Keys are per site and kept limits.idempotencyKeyRetentionHours.
 */

export interface IdempotencyClaim {
  siteId: number;
  key: string;
  /**
   * The claim's `created_at`, when claimed by claimStatement: what this request notes or stores
   * on the key must find its own claim, not a retry's that took the key over (freeStatement).
   */
  claimedAt?: Date;
}

/**
 * A key a route claims itself, in its first write (issue 7: POST transactions claims it in the
 * attempt's database transaction, saving a round trip and a commit). The route calls
 * `markClaimed(request)` once its write committed the claim, and hands any failure to
 * `finishDeferred`. Its site is the request principal's, read where it is needed: a principal
 * authenticated afresh before the write (docs/auth.md) takes the key with it.
 */
export interface DeferredClaim {
  key: string;
  requestHash: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request claimed an Idempotency-Key; its response will be stored. */
    idempotency: IdempotencyClaim | null;
    /** Set instead of `idempotency` on routes that claim the key in their own write. */
    idempotencyDeferred: DeferredClaim | null;
    /** The route stored its answer in its own last write (storeAnswer): onSend stores nothing. */
    idempotencyStored: boolean;
  }
  interface FastifyContextConfig {
    /** The route claims the Idempotency-Key in its own first write (see DeferredClaim). */
    idempotencyClaimedByRoute?: boolean;
    /**
     * The route's answer carries a credential (a new API token): it must not be stored, so the
     * route takes no part in idempotency and an Idempotency-Key header is ignored (it simply runs).
     */
    idempotencyExempt?: boolean;
    /**
     * The route creates one resource with createdForKey: a key left in flight after the creation
     * committed (its answer could not be stored) is answered with the resource as it reads now.
     */
    idempotencyResource?: ResourceAnswer;
    /**
     * Every effect of the route is written in a database transaction that also notes it on the key
     * (the attempt's insert claims the key with the row's id; createdForKey; noteTransactionOnKey),
     * and nothing outside the database happens before that commits. A key left in flight past
     * deadAfterMs with nothing noted then provably did nothing: a retry takes it over and runs.
     * Without it, such a key is answered 409 until its purge.
     */
    idempotencyEffectNoted?: boolean;
  }
}

/**
 * The created resource `id` as the route would answer it now, serialised, with the reply's status
 * and headers set (201, Location); undefined when it is gone.
 */
export type ResourceAnswer = (request: FastifyRequest, reply: FastifyReply, id: number) => Promise<string | undefined>;

// Response headers worth replaying; the rest (dates, request ids, rate limits) are per response.
const replayedHeaders = ['content-type', 'location', 'link', 'x-site-total', 'x-site-totalpages'];

interface KeyRow {
  request_hash: string;
  status: 'in_flight' | 'done';
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  transaction_id: number | null;
  resource_id: number | null;
  created_at: Date;
}

/** Registers the hooks; call before any route is registered (it extends every POST route). */
export function registerIdempotency(app: App, context: AppContext): void {
  app.decorateRequest('idempotency', null);
  app.decorateRequest('idempotencyDeferred', null);
  app.decorateRequest('idempotencyStored', false);
  // An async hook that answered returns the reply (Fastify's rule); it then skips the handler.
  const preHandlerOf = (resourceAnswer: ResourceAnswer | undefined) => async (request: FastifyRequest, reply: FastifyReply) =>
    ((await claimOrReplay(context, request, reply, { ...(resourceAnswer ? { resourceOf: (id: number) => resourceAnswer(request, reply, id) } : {}) })) ? reply : undefined);
  const preHandler = preHandlerOf(undefined);
  const deferHandler = async (request: FastifyRequest) => deferClaim(request);
  // Synchronous (done callback) when there is nothing to store, which is most answers.
  const onSend: onSendHookHandler = (request, reply, payload, done) => {
    if (!request.idempotency || request.idempotencyStored) return done(null, payload);
    storeResponse(context.db, request.idempotency, reply, payload).then(() => done(null, payload), (error: unknown) => {
      // A server error whose answer cannot be stored either (the database is gone: what failed the
      // request fails this write too) goes out as it is; the key stays in flight, as for a process
      // that died (a retry waits, then gets the transaction when one was recorded, else 409). Handed to
      // Fastify, this second error skipped the error handler: Fastify's own fallback answered
      // `{statusCode, code: "57P01", error, message: "terminating connection due to administrator
      // command"}`, the database's words in place of the error shape.
      if (reply.statusCode < 500) return done(error as Error);
      request.log.error({ err: error }, 'the answer of a failed request could not be stored for its Idempotency-Key');
      done(null, payload);
    });
  };
  // Only POST routes take keys, so only they get the hooks: every other request (GET booking
  // among them) pays nothing for idempotency.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST')) return;
    const config = route.config as { idempotencyClaimedByRoute?: boolean; idempotencyExempt?: boolean; idempotencyResource?: ResourceAnswer } | undefined;
    if (config?.idempotencyExempt) return;
    // Last, so authentication (requireAccess) has run and the site is known.
    const own = config?.idempotencyClaimedByRoute ? deferHandler : config?.idempotencyResource ? preHandlerOf(config.idempotencyResource) : preHandler;
    route.preHandler = [...hookList(route.preHandler), own] as RouteOptions['preHandler'];
    route.onSend = [...hookList(route.onSend), onSend] as RouteOptions['onSend'];
  });
}

function hookList<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}

export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header[0] ?? '' : header;
  if (key.length === 0 || key.length > limits.idempotencyKeyLengthMax || !/^[\x21-\x7e]+$/.test(key)) {
    throw invalidParam('Idempotency-Key', `The Idempotency-Key header must be 1 to ${limits.idempotencyKeyLengthMax} visible ASCII characters.`);
  }
  return key;
}

/** sha256 of method, path and the body with its keys sorted: what "the same request" means. */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${url}\n${canonicalJson(body)}`).digest('hex');
}

/**
 * JSON with every object's keys sorted. Iterative, with its own stack: a body the body limit
 * admits can nest arrays some 100,000 deep (a read-only field is accepted as any value), far past
 * the call stack of a recursive walk. The stack holds text to write as it is (strings) and values
 * still to write (objects and arrays); a scalar is written when its container is expanded.
 */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return scalarJson(value);
  let text = '';
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') {
      text += item;
      continue;
    }
    if (Array.isArray(item)) {
      stack.push(']');
      for (let index = item.length - 1; index >= 0; index -= 1) {
        pushValue(stack, item[index]);
        if (index > 0) stack.push(',');
      }
      stack.push('[');
      continue;
    }
    const entries = Object.entries(item as Record<string, unknown>).filter(([, entry]) => entry !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    stack.push('}');
    for (let index = entries.length - 1; index >= 0; index -= 1) {
      const [name, entry] = entries[index]!;
      pushValue(stack, entry);
      stack.push(`${index > 0 ? ',' : ''}${JSON.stringify(name)}:`);
    }
    stack.push('{');
  }
  return text;
}

/** An array's `undefined` writes nothing, as the recursive walk this replaces did (the same fingerprints). */
function scalarJson(value: unknown): string {
  return JSON.stringify(value) ?? '';
}

function pushValue(stack: unknown[], value: unknown): void {
  stack.push(value === null || typeof value !== 'object' ? scalarJson(value) : value);
}

/** Deferred mode: the key is checked and fingerprinted now, claimed by the route's write. */
function deferClaim(request: FastifyRequest): void {
  const key = idempotencyKeyOf(request);
  const principal = request.principal;
  if (key === undefined || !principal) return;
  request.idempotencyDeferred = { key, requestHash: requestFingerprint(request.method, request.url, request.body) };
}

/** An answer to store for its key (storeAnswers). */
export interface StoredAnswer {
  siteId: number;
  key: string;
  status: number;
  headers: Record<string, string>;
  body: string | null;
  /** The claim's (IdempotencyClaim.claimedAt): stored only while the key is still that claim. */
  claimedAt?: Date;
}

/**
 * The answer about to be sent (status and headers already set on `reply`, `body` serialised), to
 * be stored by the route's own last database transaction (storeAnswers), saving the separate
 * write and commit of onSend (issue 7: POST transactions stores it with the settlement). Call
 * `markStored` once that transaction committed; until then onSend still stores whatever is sent,
 * e.g. an error after a failed commit.
 */
export function answerToStore(request: FastifyRequest, reply: FastifyReply, body: string): StoredAnswer {
  const claim = deferredClaimOf(request);
  if (!claim) throw new Error('answerToStore: the request claimed no Idempotency-Key');
  return storedAnswerOf(claim, reply, body);
}

export function markStored(request: FastifyRequest): void {
  request.idempotencyStored = true;
}

/** The route's write committed the deferred claim: the response will be stored. */
export function markClaimed(request: FastifyRequest): void {
  const claim = deferredClaimOf(request);
  if (claim) request.idempotency = claim;
}

/** The deferred key with its site, the principal's. */
function deferredClaimOf(request: FastifyRequest): IdempotencyClaim | undefined {
  const deferred = request.idempotencyDeferred;
  return deferred && request.principal ? { siteId: request.principal.siteId, key: deferred.key } : undefined;
}

/**
 * The route failed, or found the key taken, before its write committed the claim. Claims the key
 * now (so a refusal is stored like any answer), or, when another request holds it, replays that
 * request's answer (or waits for it, or answers 409) exactly as the claim-first routes do.
 * Returns true when it was answered here (the answer written), else false: the caller rethrows its
 * error. A boolean, not the reply: a Fastify reply is a thenable that resolves to undefined, so an
 * async function returning it returns undefined (the caller then took a replay for a failure).
 * `keyTaken`: the route's own write found the key held. Nothing is claimed then: false means the
 * key is free (a dead request's, taken over), and the route runs again, its write claiming it.
 */
export async function finishDeferred(context: AppContext, request: FastifyRequest, reply: FastifyReply, outcomeOf?: OutcomeOf, options: { keyTaken?: boolean } = {}): Promise<boolean> {
  const deferred = request.idempotencyDeferred;
  if (!deferred || request.idempotency) return false;
  return claimOrReplay(context, request, reply, { known: deferred, claim: options.keyTaken !== true, ...(outcomeOf ? { outcomeOf } : {}) });
}

/**
 * Runs `create`, the creation of one resource, and when the request claimed an Idempotency-Key,
 * notes the created resource's id (`idOf`; undefined when nothing was created) on the key in the
 * same database transaction. The answer is stored after that commits (onSend); should that write
 * fail, the key is not left pointing at nothing: a retry is answered with the resource as it
 * reads now (the route's `idempotencyResource`). Without a key, `create` runs on the pool as it is.
 */
export async function createdForKey<T>(db: Db, request: FastifyRequest, create: (db: Queryable) => Promise<T>, idOf: (created: T) => number | undefined): Promise<T> {
  const claim = request.idempotency;
  if (!claim) return create(db);
  return db.transaction(async (tx) => {
    const created = await create(tx);
    const id = idOf(created);
    if (id !== undefined) await noteOnKey(tx, claim, 'resource_id', id);
    return created;
  });
}

/**
 * Notes on the request's claimed key the transaction it recorded, in the recording's database
 * transaction (a chargeback record, which claims its key before it runs): a key left in flight
 * is then answered with that transaction as it reads now, as a payment's is.
 */
export async function noteTransactionOnKey(tx: Queryable, request: FastifyRequest, transactionId: number): Promise<void> {
  if (request.idempotency) await noteOnKey(tx, request.idempotency, 'transaction_id', transactionId);
}

/**
 * Throws (rolling the effect back with the caller's database transaction) when the key is no
 * longer this request's claim: a retry took it over, taking this request for dead (deadAfterMs),
 * and runs the request itself.
 */
async function noteOnKey(tx: Queryable, claim: IdempotencyClaim, column: 'resource_id' | 'transaction_id', id: number): Promise<void> {
  const noted = await tx.query(
    `UPDATE idempotency_keys SET ${column} = $3 WHERE site_id = $1 AND key = $2 AND status = 'in_flight' AND ($4::timestamptz IS NULL OR created_at = $4) RETURNING key`,
    [claim.siteId, claim.key, id, claim.claimedAt ?? null],
  );
  if (noted.length === 0) throw new Error('the Idempotency-Key was taken over by a retry: this request ran past deadAfterMs');
}

/**
 * The transaction's answer as it reads now, serialised (undefined when it is gone). A stored
 * answer that showed its transaction not yet final (`incomplete`: the processor had not
 * answered; `pending`: a 3DS challenge), or a server error after the transaction was written,
 * told the client nothing of the outcome, and a client retries with its key precisely to learn
 * it; such a replay answers with the transaction as it is now (settled, or still waiting), with
 * `Idempotent-Replayed: true`. Every other stored answer is replayed as it was sent.
 */
export type OutcomeOf = (transactionId: number) => Promise<string | undefined>;

/**
 * True when the request was answered here (a replay, written before this resolves); false when the
 * caller runs the request: the key claimed for it, or, with `claim: false`, the key free for the
 * caller's own write to claim. `known`: the deferred claim, checked already; `outcomeOf`: the
 * transaction of a stored answer that showed no outcome; `resourceOf`: the resource a request
 * left in flight had created (createdForKey).
 */
async function claimOrReplay(
  context: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  options: { known?: DeferredClaim; claim?: boolean; outcomeOf?: OutcomeOf; resourceOf?: (id: number) => Promise<string | undefined> } = {},
): Promise<boolean> {
  const { known, claim = true } = options;
  const key = known?.key ?? idempotencyKeyOf(request);
  const principal = request.principal;
  // Only site-scoped requests have a scope for keys; the token endpoints ignore the header.
  if (key === undefined || !principal) return false;
  const scope = { siteId: principal.siteId, key, hash: known?.requestHash ?? requestFingerprint(request.method, request.url, request.body) };
  const deadline = Date.now() + limits.idempotencyWaitMs;
  let pollMs: number = limits.idempotencyPollMs;
  let tookOver = false;
  for (;;) {
    if (claim) {
      const claimedAt = context.now();
      const claimed = await context.db.query(claimStatement, [scope.siteId, key, scope.hash, claimedAt]);
      if (claimed.length === 1) {
        request.idempotency = { siteId: scope.siteId, key, claimedAt };
        return false;
      }
    }
    const row = await findKey(context.db, scope.siteId, key);
    if (!row) {
      if (!claim) return false; // free: the caller's write claims it
      continue; // purged between the two statements: claim again
    }
    if (row.request_hash !== scope.hash) {
      throw conflict('rest_idempotency_conflict', 'This Idempotency-Key was already used with a different request.');
    }
    if (row.status === 'done') {
      const outcome = options.outcomeOf && row.transaction_id !== null && answeredUnsettled(row) ? await options.outcomeOf(row.transaction_id) : undefined;
      // outcomeOf set the answer's status and headers (201, Location): a stored error's are not kept.
      replay(reply, outcome === undefined ? row : { ...row, response_status: reply.statusCode, response_headers: row.response_status === reply.statusCode ? row.response_headers : {}, response_body: outcome });
      // Waits until the replay is written (the async onSend hook runs first); the caller must not
      // run the route as well, which would repeat the request's effects (a second charge).
      await reply;
      return true;
    }
    const dead = context.now().getTime() - row.created_at.getTime() > deadAfterMs(context);
    if (dead || Date.now() >= deadline) {
      // In flight for longer than any request runs (dead): the request that claimed it ended
      // without storing its answer (its process died, say). What it created (createdForKey), or the
      // transaction it recorded, answers for it as it reads now; nothing runs again.
      const created = await leftBehind(row, options);
      if (created !== undefined) {
        replay(reply, { ...row, response_status: reply.statusCode, response_headers: {}, response_body: created });
        await reply;
        return true;
      }
      // It noted nothing, on a route that notes every effect with the key: it did nothing. The
      // key is freed (one DELETE that only one retry can win) and claimed again, by the next turn
      // or the caller's write, with a fresh claim time; a retry that lost the race waits for it.
      if (dead && !tookOver && request.routeOptions.config.idempotencyEffectNoted === true && row.transaction_id === null && row.resource_id === null) {
        tookOver = true;
        await context.db.query(freeStatement, [scope.siteId, key, scope.hash, new Date(context.now().getTime() - deadAfterMs(context))]);
        continue;
      }
      throw inFlight(row);
    }
    await sleep(pollMs);
    pollMs = Math.min(pollMs * 2, limits.idempotencyPollMaxMs);
  }
}

/**
 * A key in flight longer than this was left by a request that no longer runs: no request runs
 * longer than a retry's whole wait and a processor call (a request that notes nothing on its key
 * calls no processor: the attempt's insert notes the transaction before the call).
 */
function deadAfterMs(context: AppContext): number {
  return limits.idempotencyWaitMs + context.config.processorTimeoutMs;
}

// Named: one of them runs on every POST that carries a key.
const claimStatement = {
  name: 'idempotency_claim',
  text: `INSERT INTO idempotency_keys (site_id, key, request_hash, status, created_at) VALUES ($1, $2, $3, 'in_flight', $4)
         ON CONFLICT (site_id, key) DO NOTHING RETURNING key`,
};
const findStatement = {
  name: 'idempotency_find',
  text: 'SELECT request_hash, status, response_status, response_headers, response_body, transaction_id, resource_id, created_at FROM idempotency_keys WHERE site_id = $1 AND key = $2',
};
/** A key left in flight by a dead request that noted nothing (claimOrReplay), deleted to be claimed again: $4 the dead-after cutoff. */
const freeStatement = {
  name: 'idempotency_free',
  text: `DELETE FROM idempotency_keys
          WHERE site_id = $1 AND key = $2 AND request_hash = $3 AND status = 'in_flight'
            AND transaction_id IS NULL AND resource_id IS NULL AND created_at < $4`,
};
/** Any number of answers, each for its key still in flight and, given its claim time, still that claim (not a retry's that took it over); a batch of settlements stores its answers together; the keys found through their index (pickedBy). */
const storeStatement = {
  name: 'idempotency_store',
  text: `WITH a AS MATERIALIZED (SELECT * FROM json_to_recordset($1::json) AS a(site_id bigint, key text, status integer, headers jsonb, body text, claimed_at timestamptz))
         UPDATE idempotency_keys k SET status = 'done', response_status = a.status, response_headers = a.headers, response_body = a.body, completed_at = now()
           FROM a
          WHERE k.site_id = a.site_id AND k.key = a.key AND k.status = 'in_flight' AND (a.claimed_at IS NULL OR k.created_at = a.claimed_at)
            AND ${pickedBy('k.site_id', 'SELECT site_id FROM a')} AND ${pickedBy('k.key', 'SELECT key FROM a')}`,
};

/** What the request that left the key in flight had written, as it reads now (its resource, or its transaction); undefined when nothing. */
async function leftBehind(row: KeyRow, answers: { resourceOf?: ((id: number) => Promise<string | undefined>) | undefined; outcomeOf?: OutcomeOf | undefined }): Promise<string | undefined> {
  if (answers.resourceOf && row.resource_id !== null) return answers.resourceOf(row.resource_id);
  if (answers.outcomeOf && row.transaction_id !== null) return answers.outcomeOf(row.transaction_id);
  return undefined;
}

function inFlight(row: KeyRow): ApiError {
  const data = row.transaction_id === null ? {} : { transaction_id: row.transaction_id };
  return conflict('rest_idempotency_conflict', 'A request with this Idempotency-Key is still being processed (or did not finish); read the transaction or retry later.', data);
}

async function findKey(db: Queryable, siteId: number, key: string): Promise<KeyRow | undefined> {
  return db.maybeOne<KeyRow & Record<string, unknown>>(findStatement, [siteId, key]);
}

function answeredUnsettled(row: KeyRow): boolean {
  // The service failed after the attempt was written (its settlement, say): the processor may
  // have charged, and reconciliation settles the row later. The stored 500 said nothing of it.
  if (row.response_status !== null && row.response_status >= 500) return true;
  if (row.response_status !== 201 || row.response_body === null) return false;
  try {
    const { status } = JSON.parse(row.response_body) as { status?: unknown };
    return status === 'incomplete' || status === 'pending';
  } catch {
    return false;
  }
}

function replay(reply: FastifyReply, row: KeyRow): void {
  for (const [name, value] of Object.entries(row.response_headers ?? {})) reply.header(name, value);
  reply.header('Idempotent-Replayed', 'true');
  void reply.code(row.response_status ?? 200).send(row.response_body ?? '');
}

async function storeResponse(db: Queryable, claim: IdempotencyClaim, reply: FastifyReply, payload: unknown): Promise<void> {
  const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
  await storeAnswers(db, [storedAnswerOf(claim, reply, body)]);
}

function storedAnswerOf(claim: IdempotencyClaim, reply: FastifyReply, body: string | null): StoredAnswer {
  const headers: Record<string, string> = {};
  for (const name of replayedHeaders) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return { siteId: claim.siteId, key: claim.key, status: reply.statusCode, headers, body, ...(claim.claimedAt ? { claimedAt: claim.claimedAt } : {}) };
}

/** Stores each answer for its key, in one statement. */
export async function storeAnswers(db: Queryable, answers: readonly StoredAnswer[]): Promise<void> {
  if (answers.length === 0) return;
  await db.query(storeStatement, [JSON.stringify(answers.map((answer) => ({ site_id: answer.siteId, key: answer.key, status: answer.status, headers: answer.headers, body: answer.body, claimed_at: answer.claimedAt })))]);
}

/** Deletes keys older than the retention, a bounded batch at a time (the purge job). */
export async function purgeIdempotencyKeys(db: Queryable, options: { now: Date; batchSize: number }): Promise<number> {
  const cutoff = new Date(options.now.getTime() - limits.idempotencyKeyRetentionHours * 3600_000);
  const rows = await db.query(
    `DELETE FROM idempotency_keys
      WHERE ${pickedBy('ctid', 'SELECT ctid FROM idempotency_keys WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED')}
     RETURNING key`,
    [cutoff, options.batchSize],
  );
  return rows.length;
}
