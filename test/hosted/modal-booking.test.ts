import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { signAuthString, type SignedValue } from '../../src/domain/hosted/auth-string.js';
import { addChannel, createBooking, createShop, paymentsContext, post, purchaseBody, type Shop } from '../payments/support.js';
import { openModalBooking, verifyModalAuth } from '../../src/domain/hosted/modal.js';

// A modal auth string authorises the booking it names, and no other (docs/modal.md "Which
// booking a session may open"): an existing booking_id must be signed into it, so a string
// signed to create a new booking cannot read or pay someone else's booking on the channel.
let t: TestContext;
let shop: Shop;
let secret: string;

beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  secret = (await t.db.one<{ channel_secret: string }>('SELECT channel_secret FROM channels WHERE id = $1', [shop.channelId])).channel_secret;
});
afterAll(async () => t.close());

const total = 100;
const newBooking = { booking_id: 0, firstname: 'Eve', surname: 'Example', email: 'eve@example.com', date: '2031-05-20', countries: 'GB' };
/** The random name payment-modal.js gives the modal it opens, sent by its reloaded frame too. */
const opener = 'modal-0pener-0f-the-host-page';

function authFor(extra: Record<string, SignedValue> = {}): string {
  return signAuthString({ channels: shop.channelId, currencies: 'USD', total, ...extra }, secret, new Date());
}

function open(body: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/hosted/modal/sessions', payload: { path: shop.site.path, channels: shop.channelId, currencies: 'USD', total, origin: 'https://shop.example', ...body } });
}

async function sessionsOf(bookingId: number): Promise<number> {
  return (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM hosted_sessions WHERE booking_id = $1', [bookingId])).count;
}

describe('which booking a modal session may open', () => {
  it("refuses another customer's booking to an auth string that did not sign booking_id, showing none of it", async () => {
    const victim = await createBooking(t, shop, { total: 10_000, reference: 'VICTIM-1' });
    const paid = await createBooking(t, shop, { total: 5_000, reference: 'PAID-1' });
    expect((await post(t, shop, purchaseBody(shop, paid, 5_000))).json()).toMatchObject({ status: 'complete' });
    const auth = authFor();

    const answers = await Promise.all([victim, paid, victim + 1_000_000].map((id) => open({ auth, booking: { booking_id: id } })));
    for (const answer of answers) {
      // token_error: the auth string does not authorise this booking.
      expect(answer.statusCode).toBe(403);
      expect(answer.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
      expect(answer.body).not.toMatch(/Lovelace|ada@example\.com|VICTIM-1|PAID-1|amount due/);
    }
    // An existing unpaid, an existing paid and a missing booking answer alike: nothing tells them apart.
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
    expect(await sessionsOf(victim)).toBe(0);
    expect(await sessionsOf(paid)).toBe(0);

    // The same string still does what it was signed for: create a new booking.
    const created = await open({ auth, booking: newBooking });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ booking_event: 'booking_logged', booking: { surname: 'Example' } });
  });

  it('opens an existing booking when booking_id is signed, and only that booking', async () => {
    const mine = await createBooking(t, shop, { total: 10_000, reference: 'MINE-1' });
    const other = await createBooking(t, shop, { total: 10_000, reference: 'OTHER-1' });
    const auth = authFor({ booking_id: mine });

    const opened = await open({ auth, verify: ['booking_id'], booking: { booking_id: mine } });
    expect(opened.statusCode).toBe(201);
    expect(opened.json()).toMatchObject({ booking_event: 'booking_exists', booking: { id: mine, reference: 'MINE-1' }, amount: total });
    // The booking ID read from the page's .tmt_booking_id input arrives as text: same booking.
    expect((await open({ auth, verify: ['booking_id'], booking: { booking_id: String(mine) } })).statusCode).toBe(201);

    // Another booking with the same string: the signature does not match.
    const swapped = await open({ auth, verify: ['booking_id'], booking: { booking_id: other } });
    expect(swapped.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    // Nor through the `id` alias while the signed value rides beside the booking data.
    const aliased = await open({ auth, verify: ['booking_id'], signed: { booking_id: mine }, booking: { id: other } });
    expect(aliased.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    // Nor a new booking made with a string signed for an existing one.
    const fresh = await open({ auth, verify: ['booking_id'], signed: { booking_id: mine }, booking: { ...newBooking, booking_id: undefined } });
    expect(fresh.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    expect(await sessionsOf(other)).toBe(0);
  });

  it('creates a booking with booking_id 0 signed, as before', async () => {
    const auth = authFor({ booking_id: 0 });
    const created = await open({ auth, verify: ['booking_id'], booking: newBooking });
    expect(created.json()).toMatchObject({ booking_event: 'booking_logged', booking: { status: 'draft', total } });
  });

  it('refuses verify names that are no booking field: a signed value moved under another name frees the field it was signed for', async () => {
    // The integrator signed the email and reference of a new booking.
    const auth = authFor({ email: 'eve@example.com', reference: 'ORDER-1' });
    const signed = await open({ auth, verify: ['email', 'reference'], booking: { ...newBooking, reference: 'ORDER-1' } });
    expect(signed.json()).toMatchObject({ booking_event: 'booking_logged' });
    // The same values under names that sort alike, the booking's own email and reference changed.
    const rekeyed = await open({ auth, verify: ['d', 'q'], signed: { d: 'eve@example.com', q: 'ORDER-1' }, booking: { ...newBooking, email: 'mallory@example.com', reference: 'ORDER-666' } });
    expect(rekeyed.statusCode).toBe(403);
    expect(rekeyed.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    // A string signed for an existing booking, its ID moved to `a`, cannot create a new one.
    const existing = await createBooking(t, shop, { total: 5000 });
    const forExisting = authFor({ booking_id: existing });
    const moved = await open({ auth: forExisting, verify: ['a'], signed: { a: existing }, booking: newBooking });
    expect(moved.statusCode).toBe(403);
    expect((await t.db.query(`SELECT 1 FROM bookings WHERE email = 'mallory@example.com'`)).length).toBe(0);
  });

  it('opens again, for a reloaded frame, the booking a session of the same auth string created, and no other', async () => {
    const auth = authFor();
    const first = (await open({ auth, booking: newBooking, opener })).json();
    expect(first).toMatchObject({ booking_event: 'booking_logged' });
    const drafts = async () => (await t.db.one<{ count: number }>(`SELECT count(*)::int AS count FROM bookings WHERE email = 'eve@example.com'`)).count;
    const before = await drafts();
    // The reloaded frame's request: the same options, and the booking the first session opened.
    const reopened = await open({ auth, booking: newBooking, resume_booking_id: first.booking.id, opener });
    expect(reopened.statusCode).toBe(201);
    expect(reopened.json()).toMatchObject({ booking: { id: first.booking.id, surname: 'Example' }, amount: total });
    expect(await drafts()).toBe(before);
    // Not a way round the signature: another booking of the channel, or this one with another string.
    const victim = await createBooking(t, shop, { total: 10_000, reference: 'VICTIM-2' });
    for (const [string, id] of [[auth, victim], [authFor({ reference: 'OTHER' }), first.booking.id]] as const) {
      const refused = await open({ auth: string, booking: { ...newBooking, ...(string === auth ? {} : { reference: 'OTHER' }) }, verify: string === auth ? [] : ['reference'], resume_booking_id: id, opener });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    }
    expect(await sessionsOf(victim)).toBe(0);
    expect((await open({ auth, booking: newBooking, resume_booking_id: 'x' })).statusCode).toBe(403);
  });

  it('reopens, for a frame reloaded before it heard, the booking its string is creating at that moment, not an earlier one', async () => {
    const auth = authFor({ reference: 'RACE-1' });
    // One opener throughout: the reload must find the session being opened, not merely another modal's.
    const body = { auth, verify: ['reference'], booking: { ...newBooking, reference: 'RACE-1' }, opener };
    // An earlier session with the same string (closed since) made a draft.
    const earlier = (await open(body)).json();
    // The string opens the modal again: its session is being opened, the draft not committed yet...
    const now = new Date();
    const verified = { reference: 'RACE-1' };
    const check = await verifyModalAuth(t.db, { sitePath: shop.site.path, channelId: shop.channelId, currency: 'USD', total, auth, verified, now });
    if (!check.ok) throw new Error('auth refused');
    let commit!: () => void;
    const held = new Promise<void>((resolve) => (commit = resolve));
    let opened!: () => void;
    const claimed = new Promise<void>((resolve) => (opened = resolve));
    const second = t.db.transaction(async (tx) => {
      const result = await openModalBooking(tx, {
        channel: check.channel, auth, signedAt: check.signedAt, total, currency: 'USD', bookingId: 0, resumed: false, reloaded: false, opener,
        newBooking: { firstname: 'Eve', surname: 'Example', email: 'eve@example.com', dateEnd: '2031-05-20', total, currency: 'USD', country: 'GB', channelId: shop.channelId, reference: 'RACE-1' },
        language: undefined, hostOrigin: 'https://shop.example', verified, now,
      });
      opened();
      await held;
      return result;
    });
    await claimed;
    // ...when its frame is reloaded: the reload waits for that session, and opens its booking.
    const reloaded = open({ ...body, reloaded: true });
    const waiting = async () => (await t.db.one<{ count: number }>("SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).count;
    await expect.poll(waiting, { timeout: 10_000 }).toBeGreaterThan(0);
    commit();
    const created = await second;
    if (!created.ok) throw new Error('second opening refused');
    expect(created.booking.id).not.toBe(earlier.booking.id);
    expect((await reloaded).json()).toMatchObject({ booking_event: 'booking_logged', booking: { id: created.booking.id } });
  });
});

// An auth string signs the channel, currency, total and a timestamp to the second: nothing of the
// payer. Every visitor who loads the integrator's page in the same second (or a cached copy of it)
// holds the same string, and anyone can load the page every second to hold each one. The reload
// of a frame (docs/modal.md "A reloaded frame") opens again the booking a session of the string
// opened; it must be the same modal's reload, not another holder of the string reading (and
// seeing the payment of) the payer who opened it first.
const victimData = { booking_id: 0, firstname: 'Victoria', surname: 'Payer', email: 'victoria@example.com', date: '2031-05-20', countries: 'GB', reference: 'TRIP-77' };
const otherData = { booking_id: 0, firstname: 'Mallory', surname: 'Other', email: 'mallory@example.com', date: '2031-05-20', countries: 'GB' };
const victimOpener = 'v1ct1m-0pener-xxxxxxxxxxxxxxxxx';

const victimFacts = /Victoria|victoria@example\.com|TRIP-77/;
// An amount of its own: the other tests' strings of the same second are other strings.
const sharedTotal = 4_200;
const sharedAuth = () => signAuthString({ channels: shop.channelId, currencies: 'USD', total: sharedTotal }, secret, new Date());
const openShared = (body: Record<string, unknown>) => open({ total: sharedTotal, ...body });

describe('a modal auth string held by two people', () => {
  it("does not let the other holder reopen the first payer's booking or read its payment, while the payer's own reloaded frame still does", async () => {
    const auth = sharedAuth();
    const first = await openShared({ auth, booking: victimData, opener: victimOpener });
    expect(first.statusCode).toBe(201);
    const victim = first.json() as { session: string; booking: { id: number } };

    // The victim pays.
    const paid = await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${victim.session}` }, payload: { card_token: 'tok_visa' } });
    expect(paid.json()).toMatchObject({ outcome: 'complete' });

    // The other holder, as a reloaded frame that never heard of a booking, without the modal's
    // opener or with one of its own: a draft of its own, nothing of the victim's.
    for (const opener of [undefined, 'an0ther-0pener-xxxxxxxxxxxxxxxxx']) {
      const reloaded = await openShared({ auth, booking: otherData, reloaded: true, ...(opener ? { opener } : {}) });
      expect(reloaded.statusCode).toBe(201);
      expect(reloaded.body).not.toMatch(victimFacts);
      expect(reloaded.json()).toMatchObject({ booking_event: 'booking_logged', booking: { surname: 'Other' }, payment_made: false });
      expect(reloaded.json().booking.id).not.toBe(victim.booking.id);
      const current = await t.app.inject({ method: 'GET', url: '/hosted/payments/current', headers: { authorization: `Bearer ${reloaded.json().session}` } });
      expect(current.statusCode).toBe(404);

      // ...or naming the victim's booking as the one its first session opened (IDs are sequential).
      const resumed = await openShared({ auth, booking: otherData, resume_booking_id: victim.booking.id, ...(opener ? { opener } : {}) });
      expect(resumed.statusCode).toBe(403);
      expect(resumed.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
      expect(resumed.body).not.toMatch(victimFacts);
    }

    // The victim's own frame, reloaded: its host sends the same opener, and the booking and its
    // payment come back (docs/modal.md "A reloaded frame").
    const own = await openShared({ auth, booking: victimData, resume_booking_id: victim.booking.id, opener: victimOpener });
    expect(own.statusCode).toBe(201);
    expect(own.json()).toMatchObject({ booking: { id: victim.booking.id, surname: 'Payer' }, payment_made: true });
    const ownReloaded = await openShared({ auth, booking: victimData, reloaded: true, opener: victimOpener });
    expect(ownReloaded.json()).toMatchObject({ booking_event: 'booking_logged', booking: { id: victim.booking.id }, payment_made: true });
  });

  it('refuses an opener that is not a random name of the host script', async () => {
    const auth = sharedAuth();
    for (const opener of ['short', 'x'.repeat(200), 42, 'with spaces and more than enough characters']) {
      const refused = await openShared({ auth, booking: otherData, opener });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ code: 'jwt_auth_invalid_request' });
    }
  });
});

describe('a modal opened on a channel that takes no payments', () => {
  // channel_status locked or closed refuses every payment (docs/payments.md "Closed channels"); the
  // modal still made the booking and showed the form, whose card could only be refused.
  it('creates no booking and tells the frame the booking cannot be paid online', async () => {
    const existing = await createBooking(t, shop, { total: 5_000, reference: 'LOCKED-1' });
    await t.db.query(`UPDATE channels SET channel_status = 'locked' WHERE id = $1`, [shop.channelId]);
    try {
      const before = (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM bookings WHERE site_id = $1', [shop.site.siteId])).count;
      for (const [auth, booking] of [[authFor(), newBooking], [authFor({ booking_id: existing }), { booking_id: existing }]] as const) {
        const answer = await open({ auth, booking, verify: 'booking_id' in booking && booking.booking_id > 0 ? ['booking_id'] : [] });
        expect(answer.statusCode).toBe(400);
        expect(answer.json().data).toMatchObject({ status: 400, nothing_payable: 'not_online', params: { channels: expect.any(String) } });
      }
      expect((await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM bookings WHERE site_id = $1', [shop.site.siteId])).count).toBe(before);
      expect(await sessionsOf(existing)).toBe(0);
    } finally {
      await t.db.query(`UPDATE channels SET channel_status = 'test' WHERE id = $1`, [shop.channelId]);
    }
  });
});

describe('booking data a modal session refuses (booking_error)', () => {
  it("answers a modal currency other than the channel base currency as POST bookings does: params keyed by channels (the spec's example)", async () => {
    const auth = signAuthString({ channels: shop.channelId, currencies: 'EUR', total }, secret, new Date());
    const before = (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM bookings WHERE site_id = $1', [shop.site.siteId])).count;
    const answer = await open({ auth, currencies: 'EUR', booking: newBooking });
    const rest = await t.app.inject({
      method: 'POST', url: `${shop.base}/bookings`, headers: shop.site.headers,
      payload: { firstname: 'Eve', surname: 'Example', email: 'eve@example.com', date: '2031-05-20', countries: 'GB', total, currencies: 'EUR', channels: shop.channelId },
    });
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toEqual({ code: 'rest_invalid_param', message: 'Invalid parameter(s): channels', data: { status: 400, params: { channels: 'The booking currency (EUR) must match the channel base currency (USD).' } } });
    expect(answer.json()).toEqual(rest.json());
    expect((await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM bookings WHERE site_id = $1', [shop.site.siteId])).count).toBe(before);
  });

  it('refuses booking data naming another channel than the one the auth string signs: no booking made there, no session', async () => {
    const other = await addChannel(t, shop);
    const answer = await open({ auth: authFor(), booking: { ...newBooking, channels: other } });
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toMatchObject({ code: 'rest_invalid_param', message: 'Invalid parameter(s): channels', data: { status: 400, params: { channels: expect.stringContaining(`channel of the payment modal (${shop.channelId})`) } } });
    expect(await t.db.query('SELECT id FROM bookings WHERE channel_id = $1', [other])).toHaveLength(0);
    // The same data on the signed channel opens the modal.
    expect((await open({ auth: authFor(), booking: { ...newBooking, channels: shop.channelId } })).statusCode).toBe(201);
  });
});
