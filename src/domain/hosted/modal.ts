import type { Queryable } from '../../storage/db.js';
import { createBooking, currencyMismatch, loadBooking, loadBookingFunding, nothingPayableReason, payableNow, payableNowExplained, type BookingInput, type BookingRecord, type NothingPayableReason } from '../bookings.js';
import { noPaymentsReason } from '../channels.js';
import { parseLanguage } from '../../i18n/catalogue.js';
import { verifyAuthString, type AuthStringCheck, type SignedValue } from './auth-string.js';
import { createHostedSession, type HostedSession } from './sessions.js';
import { claimModalAuthSession } from './modal-auth-uses.js';
import { hashToken } from '../credentials.js';
import { siteActorCondition } from '../users/accounts.js';
import { cardholderNameOf } from './vault-app.js';

/**
 * Opening the payment modal: the integrator's auth string is checked against the channel
 * secret, then the booking is read (booking_exists, only when the string signs its ID) or
 * created as a draft (booking_logged), and a modal session scoped to that channel, booking and
 * amount is issued.
 */
export interface ModalChannel {
  id: number;
  siteId: number;
  currency: string;
  accountMode: string;
  channelStatus: string;
  channelSecret: string;
  company: string;
  language: string;
}

export interface ModalAuthRequest {
  sitePath: string;
  channelId: number;
  currency: string;
  total: number;
  auth: string;
  /** Extra signed fields, by name, with the values the page sent. */
  verified: Record<string, SignedValue>;
  now: Date;
}

export type ModalAuthRefusal = Extract<AuthStringCheck, { ok: false }>['reason'] | 'unknown_channel';
export type ModalAuthResult = { ok: true; channel: ModalChannel; signedAt: Date } | { ok: false; reason: ModalAuthRefusal };

export async function verifyModalAuth(db: Queryable, request: ModalAuthRequest): Promise<ModalAuthResult> {
  const row = await db.maybeOne<{ id: number; site_id: number; currency: string; account_mode: string; channel_status: string; channel_secret: string; company: string; language: string }>(
    `SELECT c.id, c.site_id, c.currency, c.account_mode, c.channel_status, c.channel_secret, COALESCE(c.receipt_label, s.name) AS company, c.language
       FROM channels c JOIN sites s ON s.id = c.site_id
      WHERE s.path = $1 AND c.id = $2 AND c.deleted_at IS NULL`,
    [request.sitePath, request.channelId],
  );
  // An unknown channel and a wrong hash look the same: the auth string is what is invalid.
  if (!row) return { ok: false, reason: 'unknown_channel' };
  const fields: Record<string, SignedValue> = { ...request.verified, channels: request.channelId, currencies: request.currency, total: request.total };
  const check = verifyAuthString({ auth: request.auth, fields, channelSecret: row.channel_secret, now: request.now });
  if (!check.ok) return { ok: false, reason: check.reason };
  return {
    ok: true,
    signedAt: check.signedAt,
    channel: { id: row.id, siteId: row.site_id, currency: row.currency.trim(), accountMode: row.account_mode, channelStatus: row.channel_status, channelSecret: row.channel_secret, company: row.company, language: row.language },
  };
}

/**
 * The user the modal acts for: bookings need an author, and the site's first admin is it (else its
 * first member who is not read-only: a read-only member writes nothing). None when the site has
 * no such member (`membership remove` keeps one, so only SQL or a site never given one leaves
 * none): the caller refuses the session.
 */
async function siteActor(db: Queryable, siteId: number): Promise<number | undefined> {
  const row = await db.maybeOne<{ user_id: number }>(
    `SELECT user_id FROM memberships WHERE site_id = $1 AND ${siteActorCondition} ORDER BY (role = 'member_admin') DESC, created_at, user_id LIMIT 1`,
    [siteId],
  );
  return row?.user_id;
}

/** A booking ID as the page sends it (a number, or the text of the `.tmt_booking_id` input); null if it is none. */
export function parseModalBookingId(raw: unknown): number | null {
  const id = typeof raw === 'string' && /^[0-9]{1,15}$/.test(raw.trim()) ? Number(raw.trim()) : raw;
  return Number.isSafeInteger(id) && (id as number) >= 0 ? (id as number) : null;
}

/**
 * Whether the auth string authorises the booking the session would open. The string always
 * covers channel, currency and amount, so without `booking_id` among its fields it can only
 * create a new booking (0): opening an existing one would hand its personal data, and the
 * means to pay it, to anyone holding a string for the channel. When `booking_id` is signed, it
 * is the booking opened, whatever other field (`id`, a new booking's data) the page sends.
 */
export function bookingIdSigned(bookingId: number, verified: Record<string, SignedValue>): boolean {
  if (!Object.hasOwn(verified, 'booking_id')) return bookingId === 0;
  return parseModalBookingId(verified.booking_id) === bookingId;
}

/**
 * Whether a session of the auth string's record (`modal_auth_uses`) opened the booking in the same
 * modal (`openerHash`, see ModalBookingRequest.opener); never for a request without an opener.
 */
async function openedWithAuth(db: Queryable, modalAuthId: number, bookingId: number, openerHash: string | null): Promise<boolean> {
  if (openerHash === null) return false;
  const row = await db.maybeOne(`SELECT 1 FROM hosted_sessions WHERE modal_auth_id = $1 AND booking_id = $2 AND options->>'openerHash' = $3 LIMIT 1`, [modalAuthId, bookingId, openerHash]);
  return row !== undefined;
}

/**
 * The booking the auth string's latest session of the same modal opened (a frame reloaded before it
 * heard), or null.
 * The string's record is locked first, as claimModalAuthSession will: a session of the string
 * being opened at this moment (its booking not committed yet) is waited for and then seen, rather
 * than an earlier one of a modal since closed.
 */
async function latestBookingOfAuth(db: Queryable, auth: string, openerHash: string | null): Promise<number | null> {
  if (openerHash === null) return null;
  const authHash = hashToken(auth);
  await db.query('SELECT 1 FROM modal_auth_uses WHERE auth_hash = $1 FOR UPDATE', [authHash]);
  const row = await db.maybeOne<{ booking_id: number }>(
    `SELECT s.booking_id FROM hosted_sessions s JOIN modal_auth_uses u ON u.id = s.modal_auth_id
      WHERE u.auth_hash = $1 AND s.kind = 'modal' AND s.booking_id IS NOT NULL AND s.options->>'openerHash' = $2 ORDER BY s.id DESC LIMIT 1`,
    [authHash, openerHash],
  );
  return row?.booking_id ?? null;
}

/** The payment a session of the auth string in the same modal completed on the booking (the frame reloaded after paying), or null. */
async function paymentWithAuth(db: Queryable, modalAuthId: number, bookingId: number, openerHash: string): Promise<number | null> {
  const row = await db.maybeOne<{ transaction_id: number }>(
    `SELECT transaction_id FROM hosted_sessions WHERE modal_auth_id = $1 AND booking_id = $2 AND transaction_id IS NOT NULL AND options->>'openerHash' = $3 ORDER BY id DESC LIMIT 1`,
    [modalAuthId, bookingId, openerHash],
  );
  return row?.transaction_id ?? null;
}

/**
 * The payment of a session of the same modal on the booking still awaiting its 3DS challenge (the
 * frame was reloaded, or the phone's browser discarded the tab, during the challenge), or null.
 */
async function pendingChallengeWithAuth(db: Queryable, modalAuthId: number, bookingId: number, openerHash: string): Promise<number | null> {
  const row = await db.maybeOne<{ id: number }>(
    `SELECT t.id FROM hosted_sessions s JOIN transactions t ON t.id = s.pending_transaction_id
      WHERE s.modal_auth_id = $1 AND s.booking_id = $2 AND s.options->>'openerHash' = $3 AND t.status = 'pending' ORDER BY s.id DESC LIMIT 1`,
    [modalAuthId, bookingId, openerHash],
  );
  return row?.id ?? null;
}

export type ModalBooking =
  /** `session.transactionId` set: a reloaded frame's booking, which the string's earlier session paid; `session.pendingTransactionId`, whose payment awaits its challenge. */
  | { ok: true; event: 'booking_logged' | 'booking_exists'; booking: BookingRecord; token: string; session: HostedSession }
  /** `nothingPayable`: the booking takes no payment now at all, and why (the frame tells the payer, and until when). */
  | { ok: false; params: Record<string, string>; nothingPayable?: { reason: NothingPayableReason; bookingId: number } }
  /**
   * The auth string does not allow this session (token_error): it opened all the sessions or
   * draft bookings it may (limits.modalSessionsPerAuthMax), or it does not sign the booking.
   */
  | { ok: false; tokenError: 'auth_used_up' | 'booking_not_signed' }
  /** The site has no member the modal can act for (siteActor): nothing the payer or integrator can fix. */
  | { ok: false; noSiteActor: true };

export interface ModalBookingRequest {
  channel: ModalChannel;
  /** The verified auth string and its timestamp: every session it opens shares one record. */
  auth: string;
  signedAt: Date;
  total: number;
  currency: string;
  /** 0: create this booking first; otherwise the existing booking's id. */
  bookingId: number;
  /**
   * The frame was reloaded (docs/modal.md "A reloaded frame"): `bookingId` is the booking an
   * earlier session of this same auth string opened, which it may open again though the string
   * does not sign its ID (it created it, or signed it). Without this, a reloaded frame sent the
   * string's booking data again: a second draft booking, and booking_logged fired twice.
   */
  resumed: boolean;
  /**
   * The frame was reloaded before its host heard of a booking (the first session's answer never
   * reached it): with booking ID 0, the booking the string's latest session opened is opened
   * again, when there is one. Without this, a frame reloaded while its first session was being
   * opened made a second draft booking.
   */
  reloaded: boolean;
  /**
   * The random name payment-modal.js gives the modal it opens, sent by every frame of it (the
   * reloaded one too), or null (a request not from our host script). `resumed` and `reloaded` find
   * only sessions of the same name. The auth string names no payer: everyone who loads the
   * integrator's page in the same second (or a cached copy) holds the same one, and anyone can load
   * it every second to hold each; matched on the string alone, a reload request of any holder
   * opened the first payer's booking (name, email, reference) and read the payment made on it.
   */
  opener: string | null;
  newBooking: BookingInput | null;
  language: string | undefined;
  hostOrigin: string;
  verified: Record<string, SignedValue>;
  now: Date;
}

export async function openModalBooking(db: Queryable, request: ModalBookingRequest): Promise<ModalBooking> {
  const { channel } = request;
  // The spec's example of booking_error, answered as POST bookings answers it (params.channels).
  if (request.currency !== channel.currency) return { ok: false, params: { channels: currencyMismatch(request.currency, channel.currency) } };
  // Before the booking is read: an unsigned booking ID learns nothing, not even whether it exists.
  if (!request.resumed && !bookingIdSigned(request.bookingId, request.verified)) return { ok: false, tokenError: 'booking_not_signed' };
  // The draft an earlier session of the string made, which the host of a reloaded frame never heard of.
  const openerHash = request.opener === null ? null : hashToken(request.opener);
  const earlierDraft = request.reloaded && request.bookingId === 0 ? await latestBookingOfAuth(db, request.auth, openerHash) : null;
  const bookingId = earlierDraft ?? request.bookingId;
  const resumed = request.resumed || earlierDraft !== null;
  // First, so concurrent openings with one auth string queue on its record before any booking is made.
  const modalAuthId = await claimModalAuthSession(db, { auth: request.auth, channelId: channel.id, signedAt: request.signedAt, createsDraft: bookingId === 0 }, request.now);
  if (modalAuthId === null) return { ok: false, tokenError: 'auth_used_up' };
  if (resumed && !(await openedWithAuth(db, modalAuthId, bookingId, openerHash))) return { ok: false, tokenError: 'booking_not_signed' };
  const authorId = await siteActor(db, channel.siteId);
  if (authorId === undefined) return { ok: false, noSiteActor: true };
  // Every payment on it would be refused (prepare.ts): no booking made, no form shown.
  const noPayments = noPaymentsReason(channel);
  if (noPayments !== null) return { ok: false, params: { channels: `is ${noPayments}: it takes no payments` }, nothingPayable: { reason: 'not_online', bookingId } };
  let booking: BookingRecord;
  let event: 'booking_logged' | 'booking_exists';
  if (bookingId > 0) {
    const found = await loadBooking(db, { siteId: channel.siteId, id: bookingId });
    if (!found || found.channelId !== channel.id) return { ok: false, params: { booking_id: 'Invalid booking ID.' } };
    booking = found;
    // The host was not told of that draft: it hears of it as the booking its data created.
    event = earlierDraft !== null ? 'booking_logged' : 'booking_exists';
  } else {
    if (!request.newBooking) return { ok: false, params: { booking_id: 'must be a booking ID, or 0 with the booking details' } };
    // The booking data may name the channel, but only the one the auth string signs: the session
    // pays on that one. Another made the draft there, and every card was refused ("not on channel").
    if (request.newBooking.channelId !== channel.id) return { ok: false, params: { channels: `must be the channel of the payment modal (${channel.id})` } };
    const created = await createBooking(db, { siteId: channel.siteId, authorId, input: request.newBooking, draft: true });
    if ('params' in created) return { ok: false, params: created.params };
    booking = created;
    event = 'booking_logged';
  }
  if (request.total <= 0) return { ok: false, params: { total: 'must be a positive amount in cents' } };
  // A reloaded frame whose earlier session paid: the new session carries that payment, so the frame
  // shows it and reports it (the host fires transaction_logged once). The booking has nothing left
  // for it to pay, and a booking_error on `total` told the payer who had just paid that the booking
  // details were not valid.
  const paid = resumed && openerHash !== null ? await paymentWithAuth(db, modalAuthId, booking.id, openerHash) : null;
  // Reloaded during its 3DS challenge: the new session goes on with that payment (the frame shows
  // the challenge again). The booking's room is held by it, so the frame said a payment was in
  // progress until the challenge expired, 30 minutes on.
  const pending = resumed && openerHash !== null && paid === null ? await pendingChallengeWithAuth(db, modalAuthId, booking.id, openerHash) : null;
  // Not total_unpaid: a payment above what can be paid now would be refused once the card is in.
  const funding = await loadBookingFunding(db, booking.id);
  const payable = payableNow(funding);
  if (paid === null && pending === null && request.total > payable) {
    const nothingPayable = nothingPayableReason(booking, funding);
    return { ok: false, params: { total: `exceeds what can be paid on the booking now (${payable}): ${payableNowExplained}` }, ...(nothingPayable ? { nothingPayable: { reason: nothingPayable, bookingId: booking.id } } : {}) };
  }
  const language = parseLanguage(request.language) ?? parseLanguage(booking.language) ?? 'enGB';
  const { token, session } = await createHostedSession(db, {
    kind: 'modal',
    siteId: channel.siteId,
    channelId: channel.id,
    userId: authorId,
    bookingId: booking.id,
    amount: request.total,
    currency: request.currency,
    hostOrigin: request.hostOrigin,
    language,
    modalAuthId,
    transactionId: paid,
    pendingTransactionId: pending,
    options: { verify: request.verified, cardholder: { name: cardholderNameOf(booking), email: booking.email }, ...(openerHash === null ? {} : { openerHash }) },
  }, request.now);
  return { ok: true, event, booking, token, session };
}
