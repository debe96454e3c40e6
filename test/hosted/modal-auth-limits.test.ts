import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { signAuthString, type SignedValue } from '../../src/domain/hosted/auth-string.js';
import { limits } from '../../src/limits.js';

// One modal auth string is valid for 15 minutes; reopening the modal with it must not buy fresh
// card attempts, sessions or draft bookings (card testing). docs/modal.md "Attempts".
let t: TestContext;
let site: SiteFixture;
let channel: { id: number; channel_secret: string };

beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db);
  channel = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Tours', currencies: 'USD' } })).json();
});
afterAll(async () => t.close());

const newBooking = { booking_id: 0, firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', countries: 'GB' };

function authFor(total: number, at = new Date(), signed: Record<string, SignedValue> = {}): string {
  return signAuthString({ channels: channel.id, currencies: 'USD', total, ...signed }, channel.channel_secret, at);
}

/** A string for one existing booking: its booking_id is signed (docs/modal.md), so it opens only that booking. */
function authForBooking(total: number, bookingId: number, at = new Date()): string {
  return authFor(total, at, { booking_id: bookingId });
}

function open(auth: string, total: number, booking: Record<string, unknown> = newBooking) {
  const verify = booking.booking_id ? ['booking_id'] : [];
  return t.app.inject({ method: 'POST', url: '/hosted/modal/sessions', payload: { path: site.path, channels: channel.id, currencies: 'USD', total, auth, verify, booking, origin: 'https://shop.example' } });
}

async function restBooking(total: number): Promise<number> {
  const created = await t.app.inject({
    method: 'POST', url: `/${site.path}/site-json/vendor/v2/bookings`, headers: site.headers,
    payload: { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total, currencies: 'USD', countries: 'GB', channels: channel.id },
  });
  return (created.json() as { id: number }).id;
}

async function openSession(auth: string, total: number, booking: Record<string, unknown> = newBooking): Promise<{ session: string; bookingId: number; attemptsLeft: number }> {
  const answer = await open(auth, total, booking);
  expect(answer.statusCode).toBe(201);
  const json = answer.json();
  return { session: json.session, bookingId: json.booking.id, attemptsLeft: json.attempts_left };
}

function pay(session: string, cardToken = 'tok_visa_declined') {
  return t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: cardToken } });
}

async function attemptsOnBooking(bookingId: number): Promise<number> {
  return (await t.db.one<{ count: number }>('SELECT cardinality(transaction_ids) AS count FROM bookings WHERE id = $1', [bookingId])).count;
}

describe('one modal auth string, many modal sessions', () => {
  it('allows three failed attempts across every session opened with the string, then transaction_rejected for each further attempt', async () => {
    const total = 2_100;
    const existing = { booking_id: await restBooking(total) };
    const auth = authForBooking(total, existing.booking_id);
    const first = await openSession(auth, total, existing);
    expect(first.attemptsLeft).toBe(3);
    expect((await pay(first.session)).json()).toMatchObject({ outcome: 'failed', attempts_left: 2 });
    expect((await pay(first.session)).json()).toMatchObject({ outcome: 'failed', attempts_left: 1 });

    // Reopening the modal with the same string: one failure left in all, not three more.
    const second = await openSession(auth, total, existing);
    expect(second.attemptsLeft).toBe(1);
    const third = await pay(second.session);
    expect(third.json()).toMatchObject({ outcome: 'failed', attempts_left: 0, rejected: { message: expect.stringContaining('Three failed attempts') } });

    // Every further attempt, in any session of the string, is refused before the bank.
    for (const session of [second.session, first.session, (await openSession(auth, total, existing)).session]) {
      const refused = await pay(session, 'tok_visa');
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ code: 'rest_attempts_exhausted', data: { status: 403 }, message: expect.stringContaining('Three failed attempts') });
    }
    expect(await attemptsOnBooking(first.bookingId)).toBe(3);

    // A new string from the integrator's server (signed at another second) starts afresh.
    const fresh = await openSession(authForBooking(total, existing.booking_id, new Date(Date.now() - 60_000)), total, existing);
    expect(fresh.attemptsLeft).toBe(3);
  });

  it('holds the shared limit when sessions of one string pay at the same time', async () => {
    const total = 2_200;
    const existing = { booking_id: await restBooking(total) };
    const auth = authForBooking(total, existing.booking_id);
    const first = await openSession(auth, total, existing);
    const sessions = [first.session, ...(await Promise.all([1, 2].map(() => openSession(auth, total, existing)))).map((opened) => opened.session)];
    const raced = await Promise.all(sessions.flatMap((session) => [pay(session), pay(session)]));
    expect(raced.filter((answer) => answer.statusCode === 201).length).toBeLessThanOrEqual(3);
    // Attempts refused before the bank (the booking's room held by a concurrent payment) are
    // given back; keep trying until the string is used up.
    for (let round = 0; round < 6; round++) {
      const answers = await Promise.all(sessions.map((session) => pay(session)));
      if (answers.every((answer) => answer.statusCode === 403)) break;
    }
    expect(await attemptsOnBooking(first.bookingId)).toBe(3);
  });

  it('bounds the sessions and the draft bookings one string opens (token_error beyond)', async () => {
    const total = 2_300;
    const auth = authFor(total);
    const drafts: number[] = [];
    for (let index = 0; index < limits.modalDraftBookingsPerAuthMax; index++) drafts.push((await openSession(auth, total)).bookingId);
    expect(new Set(drafts).size).toBe(limits.modalDraftBookingsPerAuthMax);
    const count = async () => (await t.db.one<{ count: number }>("SELECT count(*)::int AS count FROM bookings WHERE site_id = $1 AND status = 'draft'", [site.siteId])).count;
    const draftsBefore = await count();
    const oneDraftTooMany = await open(auth, total);
    expect(oneDraftTooMany.statusCode).toBe(403);
    expect(oneDraftTooMany.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 }, message: expect.stringContaining('expired') });
    expect(await count()).toBe(draftsBefore);

    // A string signed for an existing booking opens it again and again, up to the session bound.
    const existing = { booking_id: drafts[0]! };
    const bookingAuth = authForBooking(total, existing.booking_id);
    for (let index = 0; index < limits.modalSessionsPerAuthMax; index++) await openSession(bookingAuth, total, existing);
    const oneSessionTooMany = await open(bookingAuth, total, existing);
    expect(oneSessionTooMany.statusCode).toBe(403);
    expect(oneSessionTooMany.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    const sessions = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM hosted_sessions WHERE booking_id = $1', [existing.booking_id]);
    expect(sessions.count).toBe(1 + limits.modalSessionsPerAuthMax);
  });

  it('does not count a session refused for its booking against the string', async () => {
    const total = 2_400;
    const small = { booking_id: await restBooking(1_000) };
    const auth = authForBooking(total, small.booking_id);
    for (let index = 0; index < limits.modalSessionsPerAuthMax + 1; index++) {
      const refused = await open(auth, total, small);
      expect(refused.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { total: expect.any(String) } } });
    }
    // Once the booking is large enough, the same string still opens it: no refusal was counted.
    const raised = await t.app.inject({ method: 'PUT', url: `/${site.path}/site-json/vendor/v2/bookings/${small.booking_id}`, headers: site.headers, payload: { total: 5_000 } });
    expect(raised.statusCode).toBe(200);
    expect((await openSession(auth, total, small)).attemptsLeft).toBe(3);
  });
});

describe("a modal's draft booking", () => {
  it('shows as draft only in the modal; the REST API shows it, abandoned or not, as unpaid', async () => {
    const total = 2_400;
    const answer = (await open(authFor(total), total)).json();
    expect(answer.booking).toMatchObject({ status: 'draft' });
    const api = (rest: string) => t.app.inject({ url: `/${site.path}/site-json/vendor/v2/${rest}`, headers: site.headers });
    expect((await api(`bookings/${answer.booking.id}`)).json()).toMatchObject({ status: 'unpaid', total_unpaid: total });
    expect(((await api('bookings?status=unpaid')).json() as { id: number }[]).map((booking) => booking.id)).toContain(answer.booking.id);
    expect((await api('bookings?status=draft')).json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { status: expect.any(String) } } });
  });
});
