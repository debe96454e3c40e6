import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase } from '../support/context.js';
import { killServers, siteApi, startReadyServer, type ApiAnswer } from '../support/server-process.js';
import { createSite } from '../support/fixtures.js';
import { freePort } from '../../src/net.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { limits } from '../../src/limits.js';
import { createDb, type Db } from '../../src/storage/db.js';
import { startEmbeddedPostgres } from '../../src/storage/embedded.js';

// A running server (dist/server.js, its own process) whose PostgreSQL goes away under it: the
// backends killed (pg_terminate_backend, as a failover or a restart does) while retained purchases
// are in flight. The process must live on, answer every request in the error shape, and settle
// every purchase exactly once (docs/payments.md "Processing discipline", reconciliation).
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-outage-'));

afterAll(() => {
  killServers();
  rmSync(dataDir, { recursive: true, force: true });
});

const startServer = (env: Record<string, string>) => startReadyServer({ DATA_DIR: dataDir, ...env });

/** An answer a client can act on: the created transaction, or an error in the spec's shape that gives nothing away. */
function expectSpecAnswer(answer: ApiAnswer): void {
  if (answer.status === 201) return void expect(['complete', 'incomplete', 'failed']).toContain(answer.json.status);
  expect(answer.json).toEqual({ code: 'rest_internal_error', message: expect.any(String), data: { status: answer.status } });
  expect(answer.status).toBeGreaterThanOrEqual(500);
  expect(JSON.stringify(answer.json)).not.toMatch(/ at |terminat|postgres|pg_|Connection/i);
}

/** Runs the reconciliation as soon as the job can: the rows are made older than its wait and its give-up bound (a call the processor never received fails only then). */
async function reconciled(db: Db, siteId: number): Promise<{ status: string }[]> {
  await vi.waitFor(async () => {
    await db.query(`UPDATE transactions SET created_at = now() - interval '2 hours' WHERE site_id = $1 AND status = 'incomplete'`, [siteId]);
    const open = await db.query(`SELECT id FROM transactions WHERE site_id = $1 AND status IN ('incomplete', 'pending')`, [siteId]);
    expect(open).toEqual([]);
  }, { timeout: 40_000, interval: 500 });
  return db.query<{ status: string }>(`SELECT status FROM transactions WHERE site_id = $1 AND type = 'retained_purchase' ORDER BY id`, [siteId]);
}

describe('PostgreSQL connections killed under a running server', () => {
  it('leave the server running: every purchase in flight is answered in the error shape or settled, then each ends complete or failed, charged once', async () => {
    const { db, url, name } = await createTestDatabase(2);
    try {
      const shop = await createSite(db, { role: 'member_admin' });
      // The processor takes its time, so the kills land while purchases wait for it and settle.
      const server = await startServer({ DATABASE_URL: url, SANDBOX_LATENCY_MS: '150', PROCESSOR_TIMEOUT_MS: '2000' });
      const api = siteApi(server.baseUrl, shop);
      const channel = (await api('POST', 'channels', { name: 'Tours', currencies: 'USD' })).json;
      const vault = (await api('POST', 'transactions', { transaction_types: 'vault', channels: channel.id, currencies: 'USD', total: 0, token: 'tok_visa' })).json;
      expect(vault.status).toBe('complete');
      const bookings: { id: number }[] = [];
      for (let index = 0; index < 24; index++) {
        bookings.push((await api('POST', 'bookings', { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 1_000, currencies: 'USD', countries: 'GB', channels: channel.id })).json);
      }
      const purchaseOf = (booking: { id: number }) => api('POST', 'transactions', {
        transaction_types: 'retained_purchase', channels: channel.id, currencies: 'USD', total: 1_000, linked_id: vault.id, bookings: [{ id: booking.id, currencies: 'USD', total: 1_000 }],
      }, { 'idempotency-key': `outage-${booking.id}` });

      // Every connection of the server (its API pool and the sandbox processor's) is killed every 60 ms while the purchases run.
      const kill = () => db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name]);
      let killing = true;
      const killer = (async () => {
        while (killing) {
          await new Promise((resolve) => setTimeout(resolve, 60));
          await kill();
        }
      })();
      const answers = await Promise.all(bookings.map(async (booking, index) => {
        await new Promise((resolve) => setTimeout(resolve, index * 25));
        return purchaseOf(booking).catch((error: Error) => ({ status: 0, headers: {}, json: `no answer: ${String(error.cause ?? error)}` }));
      }));
      killing = false;
      await killer;

      // The process lived through it (it died of an unheard 'error' of a connection in use) and answered every request.
      expect(server.child.exitCode, server.output().slice(-3000)).toBeNull();
      for (const answer of answers) expectSpecAnswer(answer);
      // It recovers by itself: ready, and the next purchase goes through.
      await vi.waitFor(async () => expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200), { timeout: 10_000, interval: 100 });
      const extra = (await api('POST', 'bookings', { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 1_000, currencies: 'USD', countries: 'GB', channels: channel.id })).json;
      expect((await purchaseOf(extra)).json).toMatchObject({ status: 'complete' });
      bookings.push(extra);

      // The jobs settle what the outage left open: every purchase complete or failed, none left incomplete.
      const statuses = await reconciled(db, shop.siteId);
      expect(statuses.every((row) => row.status === 'complete' || row.status === 'failed')).toBe(true);
      // A retry with the key learns the outcome, or that nothing was done; a key left in flight with
      // nothing done is taken over and the retry pays. No booking is charged twice.
      // The retries come long after the requests (a key left in flight is not waited for).
      await db.query(`UPDATE idempotency_keys SET created_at = created_at - interval '1 hour' WHERE site_id = $1`, [shop.siteId]);
      for (const [index, answer] of answers.entries()) {
        if (answer.status === 201) continue;
        const retry = await purchaseOf(bookings[index]!);
        const recorded = await db.query(`SELECT t.id, t.status FROM transactions t JOIN bookings b ON t.id = ANY (b.transaction_ids) WHERE b.id = $1`, [bookings[index]!.id]);
        if (recorded.length === 0) {
          // Nothing was written: the 500 is the key's answer, replayed as any answer is (docs/payments.md
          // "Idempotency").
          expect([retry.status, retry.headers['idempotent-replayed'], retry.json.code]).toEqual([500, 'true', 'rest_internal_error']);
          expect(retry.json.data.transaction_id).toBeUndefined();
        } else {
          // Its 500 stored, or not even that (the key left in flight): the transaction as it reads now.
          // A key left in flight with nothing written (not even its 500) was taken over: the retry
          // made the payment, answered 201 (its first answer, not a replay).
          expect([retry.status, retry.json]).toMatchObject([201, { id: recorded[0]!.id, status: recorded[0]!.status }]);
        }
      }
      // Charged once at most: each booking's approved authorisations at the processor match what the books hold.
      const charges = await db.query<{ booking_id: number; approved: number; paid: number; total: number }>(
        `SELECT b.id AS booking_id, b.total_paid AS paid, b.total,
                (SELECT count(*)::int FROM transactions t JOIN sandbox_operations o ON o.reference = t.uuid::text
                  WHERE t.id = ANY (b.transaction_ids) AND t.type = 'retained_purchase' AND o.kind = 'authorise' AND o.status = 'approved') AS approved
           FROM bookings b WHERE b.site_id = $1 ORDER BY b.id`, [shop.siteId]);
      for (const booking of charges) {
        expect(booking.approved, JSON.stringify(booking)).toBeLessThanOrEqual(1);
        expect(booking.paid, JSON.stringify(booking)).toBe(booking.approved * 1_000);
      }
      expect(await verifyLedger(db, { siteId: shop.siteId })).toMatchObject({ ok: true, problems: [] });

      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    } finally {
      await db.close();
    }
  }, 120_000);
});

describe('PostgreSQL restarted under a running server', () => {
  it('answers in the error shape while it is down (/readyz 503, /healthz 200), then serves and settles again by itself', async () => {
    // A PostgreSQL of this test's own (the shared test server cannot be restarted), on a fixed port.
    const pgDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-outage-pg-'));
    const port = await freePort();
    let postgres = await startEmbeddedPostgres(pgDir, { port, database: 'postgres' });
    const admin = createDb(postgres.url, 1);
    await admin.query('CREATE DATABASE outage');
    await admin.close();
    const url = postgres.url.replace(/\/postgres$/, '/outage');
    const server = await startServer({ DATABASE_URL: url, SANDBOX_LATENCY_MS: '1500', PROCESSOR_TIMEOUT_MS: '5000' });
    let db = createDb(url, 1);
    try {
      const shop = await createSite(db, { role: 'member_admin' });
      const api = siteApi(server.baseUrl, shop);
      const channel = (await api('POST', 'channels', { name: 'Tours', currencies: 'USD' })).json;
      const vault = (await api('POST', 'transactions', { transaction_types: 'vault', channels: channel.id, currencies: 'USD', total: 0, token: 'tok_visa' })).json;
      const bookingBody = { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 1_000, currencies: 'USD', countries: 'GB', channels: channel.id };
      const booking = (await api('POST', 'bookings', bookingBody)).json;
      const purchaseOf = (id: number) => api('POST', 'transactions', {
        transaction_types: 'retained_purchase', channels: channel.id, currencies: 'USD', total: 1_000, linked_id: vault.id, bookings: [{ id, currencies: 'USD', total: 1_000 }],
      });
      await db.close();

      // A purchase waits for the processor when PostgreSQL stops (fast shutdown: every backend ended).
      const inFlight = purchaseOf(booking.id);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await postgres.stop();
      const startedAt = Date.now();
      expectSpecAnswer(await inFlight);
      const down = await Promise.all([fetch(`${server.baseUrl}/readyz`), fetch(`${server.baseUrl}/healthz`), api('POST', 'bookings', bookingBody), api('GET', 'channels')]);
      expect([down[0].status, await down[0].json()]).toEqual([503, { status: 'unavailable' }]);
      expect(down[1].status).toBe(200);
      for (const answer of down.slice(2) as ApiAnswer[]) {
        expect(answer.json).toEqual({ code: 'rest_internal_error', message: expect.any(String), data: { status: answer.status } });
        expect(answer.status).toBeGreaterThanOrEqual(500);
      }
      // Answered at once, not held until the database is back.
      expect(Date.now() - startedAt).toBeLessThan(5_000);
      expect(server.child.exitCode).toBeNull();

      postgres = await startEmbeddedPostgres(pgDir, { port, database: 'postgres' });
      db = createDb(url, 1);
      await vi.waitFor(async () => expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200), { timeout: 10_000, interval: 100 });
      const next = (await api('POST', 'bookings', bookingBody)).json;
      expect((await purchaseOf(next.id)).json).toMatchObject({ status: 'complete' });
      // The jobs run again: what the restart left open ends complete or failed.
      const statuses = await reconciled(db, shop.siteId);
      expect(statuses.every((row) => row.status === 'complete' || row.status === 'failed')).toBe(true);
      expect(await verifyLedger(db, { siteId: shop.siteId })).toMatchObject({ ok: true });

      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    } finally {
      await db.close().catch(() => undefined);
      await postgres.stop().catch(() => undefined);
      rmSync(pgDir, { recursive: true, force: true });
    }
  }, 120_000);
});

/** A TCP relay to PostgreSQL that can go silent both ways (a host gone, a cut network): nothing is refused or closed, nothing gets through; healed, what it held goes on. */
async function silentRelay(target: URL) {
  let silent = false;
  const held: (() => void)[] = [];
  const relay = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    const pipe = (from: Socket, to: Socket) => from.on('data', (chunk) => (silent ? held.push(() => to.write(chunk)) : to.write(chunk)));
    pipe(client, upstream);
    pipe(upstream, client);
    for (const socket of [client, upstream]) socket.on('error', () => undefined);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    port: (relay.address() as AddressInfo).port,
    silence: () => (silent = true),
    heal: () => {
      silent = false;
      for (const write of held.splice(0)) write();
    },
    close: () => new Promise((resolve) => relay.close(resolve)),
  };
}

describe('PostgreSQL gone silent under a running server (packets dropped, nothing refused)', () => {
  it('is given up on within the bounds (/readyz 503, requests 500 in the error shape), not waited for until TCP gives up; healed, the server serves again', async () => {
    const { db, url } = await createTestDatabase(1);
    const target = new URL(url);
    const relay = await silentRelay(target);
    const relayed = new URL(url);
    relayed.hostname = '127.0.0.1';
    relayed.port = String(relay.port);
    try {
      const shop = await createSite(db, { role: 'member_admin' });
      const server = await startServer({ DATABASE_URL: relayed.toString() });
      const api = siteApi(server.baseUrl, shop);
      expect((await api('GET', 'bookings')).status).toBe(200);

      relay.silence();
      const startedAt = Date.now();
      const bound = limits.dbStatementTimeoutMs + limits.dbAnswerMarginMs;
      const [ready, bookings] = await Promise.all([
        fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(bound + 10_000) }).then(async (response) => [response.status, await response.json()]),
        api('GET', 'bookings'),
      ]);
      expect(ready).toEqual([503, { status: 'unavailable' }]);
      expect(bookings.json).toEqual({ code: 'rest_internal_error', message: expect.any(String), data: { status: 500 } });
      expect(Date.now() - startedAt).toBeLessThan(bound + 5_000);

      relay.heal();
      await vi.waitFor(async () => expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200), { timeout: 10_000, interval: 100 });
      expect((await api('GET', 'bookings')).status).toBe(200);
      server.child.kill('SIGTERM');
      expect(await server.exited, server.output().slice(-2000)).toBe(0);
    } finally {
      await relay.close();
      await db.close();
    }
  }, 90_000);
});
