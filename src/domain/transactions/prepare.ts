import type { AppContext } from '../../context.js';
import type { Queryable } from '../../storage/db.js';
import { invalidId, invalidParam, missingParams, noLiveProcessor, type ApiError } from '../../http/errors.js';
import { limits } from '../../limits.js';
import { takesLiveMode } from '../../processor/index.js';
import { channelFrom, channelFromRow, channelSelect, noPaymentsReason, type ChannelRecord, type ChannelRow } from '../channels.js';
import { credentialEpochSql } from '../credentials.js';
import { followableUrl, followableUrlProblem } from '../redirect-url.js';
import {
  assertCardAllowedInMode, assertCardKeyConfigured, assertCardNotExpired, assertCardUsableOnChannel, cardById, cardByVaultToken, chargeableCardColumns, chargeableCardJoin, chargeableCardOf, isTestMode, resolvePaymentCard,
  type CaptureTokenRedemption, type ResolvedCard, type CardRecord, type ChargeableCard, type ChargeableCardColumns, type SealedPan,
} from '../vault/index.js';
import { toRecord, transactionColumns } from './repository.js';
import { prepareForexAndAllocations, type ForexAndAllocations } from './forex-allocations.js';
import { isAuthorization, isCapturedMoney, isFollowUpType, isHostedSource, isRetainedType, type Actor, type TransactionInput, type TransactionRecord, type TransactionType } from './types.js';

/**
 * Checks a create request against everything that can be checked without locks, and resolves
 * what it names (channel, bookings, linked transaction, card). Every refusal is the spec's 400
 * (or 404 for a linked transaction outside the site) and happens before anything is written.
 */

export interface PaymentPlan {
  input: TransactionInput;
  channel: ChannelRecord;
  /** The processor mode the call is made in (processorModeOf). */
  mode: 'test' | 'live';
  currency: string;
  total: number;
  shares: { bookingId: number; total: number }[];
  linked: TransactionRecord | null;
  card: CardRecord | null;
  /** A capture or sandbox token's CVV, for the processor call; memory only. */
  cvv: string | undefined;
  /**
   * The capture token naming the card, if any: single use (docs/vault.md "CVV"). It is redeemed
   * by the database transaction that records the attempt (insertAttempts), never during
   * validation: a refused request leaves the token usable with its CVV.
   */
  captureRedemption: CaptureTokenRedemption | undefined;
  /** The card's sealed PAN when validation read it with the card (retained charges); else openCard reads it. */
  sealedPan: SealedPan | undefined;
  /** Forex terms and validated allocations (issue 4; forex-allocations.ts). */
  extras: ForexAndAllocations;
  /** The receipt language stored on the row (languageOf). */
  language: string;
}

const needsBookings = new Set(['purchase', 'authorize', 'retained_purchase', 'retained_authorize', 'capture', 'void', 'refund']);

function assertRequired(input: TransactionInput): void {
  const missing: string[] = [];
  if (input.channelId === undefined) missing.push('channels');
  if (input.currency === undefined) missing.push('currencies');
  if (input.total === undefined) missing.push('total');
  if (needsBookings.has(input.type) && input.bookings === undefined) missing.push('bookings');
  if ((input.type === 'vault' || input.type === 'purchase' || input.type === 'authorize') && input.token === undefined) missing.push('token');
  if (isFollowUpType(input.type) && input.linkedId === undefined) missing.push('linked_id');
  if (isRetainedType(input.type) && input.linkedId === undefined && input.token === undefined) missing.push('linked_id');
  if (missing.length > 0) throw missingParams(missing);
}

function assertAmount(input: TransactionInput): void {
  if (input.type === 'vault') {
    if (input.total !== 0) throw invalidParam('total', 'A vault (card verification) transaction has total 0.');
    if (input.bookings !== undefined && input.bookings.length > 0) throw invalidParam('bookings', 'A vault transaction pays no booking.');
    return;
  }
  if (!input.total || input.total <= 0) throw invalidParam('total', 'The total must be a positive amount in cents.');
  // The spec keeps `pending` (awaiting the cardholder's 3DS) to purchase, vault and authorise.
  if (input.attempt3ds && isRetainedType(input.type)) {
    throw invalidParam('attempt_3ds', 'A retained charge is merchant-initiated: the cardholder is not there to authenticate, and the card was verified when it was vaulted. Send it without attempt_3ds.');
  }
  assertFollowUpFields(input);
}

/**
 * A capture, void or refund moves money on its linked transaction's card, at the processor's
 * reference of that transaction (resolveCard, callProcessor): no cardholder is there to
 * authenticate and no card is chosen. Taken and ignored, a `token` naming another card looked
 * like a refund to that card, and `attempt_3ds` was recorded with a made-up 3-D Secure outcome
 * (`3ds_response` `frictionless` on a refund); refused like a purchase's `linked_id`.
 */
function assertFollowUpFields(input: TransactionInput): void {
  if (!isFollowUpType(input.type)) return;
  const action = `A ${input.type} acts on the card of the linked transaction (linked_id)`;
  if (input.token !== undefined) throw invalidParam('token', `${action}; send it without token.`);
  if (input.attempt3ds) throw invalidParam('attempt_3ds', `${action} and no cardholder authenticates it; send it without attempt_3ds.`);
}

/** Every type that takes a redirect_url, a vault's (3-D Secure on the verification) included. */
function assertRedirectUrl(input: TransactionInput): void {
  if (input.redirectUrl !== undefined && !followableUrl(input.redirectUrl)) throw invalidParam('redirect_url', `The redirect URL ${followableUrlProblem}.`);
}

/**
 * What a create request names, read with every other request of its batch in one statement
 * (issue 7): the channel (none when it is not the site's), the named bookings of the site, the
 * linked transaction of the site and, for a retained charge, its card with the sealed PAN. No
 * locks: every check made on them is made again under locks where it matters (attempt.ts).
 */
export interface Lookup {
  channel: ChannelRecord | undefined;
  bookings: BookingRow[];
  linked: TransactionRecord | undefined;
  linkedCard: ChargeableCard | null;
  /** credential_epoch (migration 016) in the statement's snapshot: what a remembered principal is checked against (Actor.principalEpoch). */
  credentialEpoch: string;
}

/**
 * One row per request (`m` is the request: $1-$4 its channel, site, linked transaction and
 * whether it is a retained charge; $5-$6 the bookings it names, by the request's ordinal); the
 * channel's columns are null when the channel is not the site's.
 */
const lookupStatement = {
  name: 'transaction_create_lookup',
  text: `SELECT m.ordinality, ${credentialEpochSql}::text AS credential_epoch, ${channelSelect},
                coalesce((SELECT json_agg(json_build_object('id', b.id, 'channel_id', b.channel_id, 'currency', b.currency, 'language', b.language))
                            FROM unnest($5::bigint[], $6::bigint[]) AS n(ordinality, id) JOIN bookings b ON b.id = n.id
                           WHERE n.ordinality = m.ordinality AND b.site_id = m.site_id AND b.deleted_at IS NULL), '[]'::json) AS booking_list,
                (SELECT row_to_json(l) FROM (SELECT ${transactionColumns} FROM transactions WHERE id = m.linked_id AND site_id = m.site_id) l) AS linked_row,
                ${chargeableCardColumns('k')}
           FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::boolean[]) WITH ORDINALITY AS m(channel_id, site_id, linked_id, retained, ordinality)
           LEFT JOIN (${channelFrom}) ON c.id = m.channel_id AND c.site_id = m.site_id AND c.deleted_at IS NULL
           ${chargeableCardJoin('k', '(SELECT card_id FROM transactions WHERE id = m.linked_id AND site_id = m.site_id AND m.retained)', 'm.site_id')}`,
};

type LookupRow = ChannelRow & ChargeableCardColumns & {
  ordinality: string;
  credential_epoch: string;
  booking_list: BookingRow[];
  linked_row: (Record<string, unknown> & { created_at: string; modified_at: string }) | null;
};

/** What each request names (Lookup), in the order of `requests`. */
export async function lookUp(db: Queryable, requests: readonly { actor: Actor; input: TransactionInput }[]): Promise<Lookup[]> {
  const members = requests.map(({ actor, input }) => ({
    channelId: Number.isSafeInteger(input.channelId) ? input.channelId! : null,
    siteId: actor.siteId,
    linkedId: input.linkedId !== undefined && Number.isSafeInteger(input.linkedId) ? input.linkedId : null,
    retained: isRetainedType(input.type),
    // More than the limit is refused by resolveShares; nothing to read for it.
    bookingIds: (input.bookings ?? []).length > limits.bookingsPerTransactionMax ? [] : (input.bookings ?? []).map((item) => item.id).filter((id) => Number.isSafeInteger(id)),
  }));
  const named = members.flatMap((member, index) => member.bookingIds.map((id) => ({ ordinal: index + 1, id })));
  const rows = await db.query<LookupRow>(lookupStatement, [
    members.map((member) => member.channelId), members.map((member) => member.siteId), members.map((member) => member.linkedId),
    members.map((member) => member.retained), named.map((item) => item.ordinal), named.map((item) => item.id),
  ]);
  const found: Lookup[] = new Array(members.length);
  for (const row of rows) {
    const linked = row.linked_row ? toRecord({ ...row.linked_row, created_at: new Date(row.linked_row.created_at), modified_at: new Date(row.linked_row.modified_at) } as never) : undefined;
    found[Number(row.ordinality) - 1] = row.id === null
      ? { channel: undefined, bookings: [], linked: undefined, linkedCard: null, credentialEpoch: row.credential_epoch }
      : { channel: channelFromRow(row), bookings: row.booking_list, linked, linkedCard: chargeableCardOf(row), credentialEpoch: row.credential_epoch };
  }
  return found;
}

/**
 * What a closed channel still takes (docs/payments.md "Closed channels"): a closed channel takes
 * no new money, but a refund or a void gives back or releases money it already took, and refusing
 * them left the customer unrefunded and the amount held on the card. A capture is refused: it is
 * when held money moves to the channel; the merchant voids the authorisation instead.
 */
const closedChannelTypes: ReadonlySet<TransactionType> = new Set(['refund', 'void']);

/** Whether a transaction of this type is new money, which a closed or locked channel refuses (closedChannelTypes). */
export function takesNewMoney(type: TransactionType): boolean {
  return !closedChannelTypes.has(type);
}

/** The refusal of new money on a channel that takes none (noPaymentsReason), at the read or at the insert (attempt.ts). */
export function noPaymentsRefusal(type: TransactionType, reason: 'closed' | 'locked'): ApiError {
  const refusal = `The channel is ${reason} and takes no payments.`;
  return invalidParam('channels', type === 'capture' ? `${refusal.slice(0, -1)}; void the authorisation to release the held amount.` : refusal);
}

function resolveChannel(input: TransactionInput, channel: ChannelRecord | undefined): ChannelRecord {
  if (!channel) throw invalidParam('channels', 'Unknown channel.');
  const reason = noPaymentsReason(channel);
  if (reason !== null && takesNewMoney(input.type)) throw noPaymentsRefusal(input.type, reason);
  // Paying in another currency is forex (docs/forex.md), checked with the bookings in
  // prepareForexAndAllocations; a vault (no money) is in the channel currency.
  if (input.type === 'vault' && input.currency !== channel.currency) throw invalidParam('currencies', `The channel's currency is ${channel.currency}.`);
  return channel;
}

/**
 * The processor mode a transaction is made in. A capture, void or refund is made in its
 * original's, which its card tells (test cards pay on test channels only, real cards never on
 * them): the channel's mode may have changed since (closed, or moved from test to live), and a
 * refund of a sandbox payment sent in live mode would reach a live processor. Anything else is
 * made in the channel's mode.
 */
function processorModeOf(plan: { input: TransactionInput; channel: ChannelRecord; card: CardRecord | null }): 'test' | 'live' {
  // Every authorisation and captured payment has its card (cards are never deleted); the channel's
  // mode stands in should one not.
  if (isFollowUpType(plan.input.type) && plan.card) return plan.card.isTestCard ? 'test' : 'live';
  return isTestMode(plan.channel.accountMode) ? 'test' : 'live';
}

/**
 * A payment in the processor's live mode needs a processor that moves money: in production on
 * the sandbox it is refused here, before anything is written or the sandbox is asked, so no
 * booking is shown paid for money that never moved.
 */
function assertProcessorTakes(context: AppContext, mode: 'test' | 'live'): void {
  if (mode === 'test' || takesLiveMode(context.config, context.connector)) return;
  throw noLiveProcessor('payment');
}

interface BookingRow {
  id: number;
  channel_id: number;
  currency: string;
  language: string;
}

type Shares = { bookingId: number; total: number }[];

/** bookings[]: known bookings of the site, on this channel, in its currency, adding up to total. */
function resolveShares(input: TransactionInput, channel: ChannelRecord, rows: BookingRow[]): { shares: Shares; firstBookingLanguage: string | null } {
  const items = input.bookings ?? [];
  if (!needsBookings.has(input.type)) return { shares: [], firstBookingLanguage: null };
  if (items.length === 0) throw invalidParam('bookings', 'Name at least one booking.');
  if (items.length > limits.bookingsPerTransactionMax) throw invalidParam('bookings', `At most ${limits.bookingsPerTransactionMax} bookings per transaction.`);
  const ids = items.map((item) => item.id);
  if (new Set(ids).size !== ids.length) throw invalidParam('bookings', 'A booking appears more than once.');
  const byId = new Map(rows.map((row) => [row.id, row]));
  for (const item of items) {
    const booking = byId.get(item.id);
    if (!booking) throw invalidParam('bookings', `Unknown booking ${item.id}.`);
    if (booking.channel_id !== channel.id) throw invalidParam('bookings', `Booking ${item.id} is not on channel ${channel.id}.`);
    if (booking.currency.trim() !== channel.currency || item.currency !== channel.currency) {
      throw invalidParam('bookings', `Booking ${item.id}: the booking currency must be the channel currency ${channel.currency}.`);
    }
    // A share is the booking's side of the money movement (the channel currency): with forex the
    // top-level total is the other side, so a 0 here let a refund or capture move euros at the
    // processor and nothing in the ledger or the booking (docs/forex.md "Parts"). A booking the
    // transaction pays or refunds nothing of is left out, never named with 0.
    if (item.total < 1) throw invalidParam('bookings', `Booking ${item.id}: its total must be a positive amount in cents; leave out a booking this transaction moves nothing of.`);
  }
  // The sum is checked against total (or its forex conversion) in prepareForexAndAllocations.
  return { shares: items.map((item) => ({ bookingId: item.id, total: item.total })), firstBookingLanguage: byId.get(items[0]!.id)!.language };
}

/**
 * The language of the transaction's mails (spec "Languages", issue 6): the request's, else
 * (captures, voids, refunds) the transaction it applies to, whose language came from its own
 * request, else the first booking's, else the channel's.
 */
function languageOf(input: TransactionInput, linked: TransactionRecord | null, firstBookingLanguage: string | null, channel: ChannelRecord): string {
  if (input.language !== undefined) return input.language;
  if (linked && isFollowUpType(input.type)) return linked.language;
  return firstBookingLanguage ?? channel.language;
}

/** The linked transaction: of this site (else 404), channel and currency, and of the right type. */
function resolveLinked(input: TransactionInput, channel: ChannelRecord, linked: TransactionRecord | undefined): TransactionRecord | null {
  if (input.linkedId === undefined) return null;
  if (!linked) throw invalidId('linked_id');
  if (linked.channelId !== channel.id && isFollowUpType(input.type)) throw invalidParam('linked_id', 'The linked transaction belongs to another channel.');
  if (linked.currency !== input.currency && isFollowUpType(input.type)) throw invalidParam('linked_id', 'The linked transaction is in another currency.');
  const allowed: Record<string, (record: TransactionRecord) => boolean> = {
    capture: (record) => isAuthorization(record.type),
    void: (record) => isAuthorization(record.type),
    refund: (record) => isCapturedMoney(record.type),
    retained_purchase: (record) => record.type === 'vault',
    retained_authorize: (record) => record.type === 'vault',
  };
  const expected: Record<string, string> = {
    capture: 'an authorize or retained_authorize',
    void: 'an authorize or retained_authorize',
    refund: 'a purchase, retained_purchase or capture',
    retained_purchase: 'a vault transaction',
    retained_authorize: 'a vault transaction',
  };
  const check = allowed[input.type];
  if (!check) throw invalidParam('linked_id', `A ${input.type} transaction takes no linked_id.`);
  if (!check(linked)) throw invalidParam('linked_id', `The linked transaction must be ${expected[input.type]}.`);
  return linked;
}

interface PlanCard {
  card: CardRecord | null;
  cvv?: string;
  captureRedemption?: CaptureTokenRedemption;
  sealed?: SealedPan;
}

/** A token that names no card: unknown, expired, of another site, or a capture token already used. */
export function unknownCardToken(): ApiError {
  return invalidParam('token', 'Unknown or expired card token.');
}

/**
 * A vault token names a stored card without its CVV, which only a merchant-initiated charge may
 * go without (spec: without `linked_id` the cardholder enters the CVV again). A purchase,
 * authorize or vault is the cardholder's: by vault token it reached the processor without CVV and
 * not merchant-initiated, the charge docs/vault.md "CVV" says never happens.
 */
function vaultTokenNotRetained(type: TransactionType): ApiError {
  const instead = type === 'vault' ? 'the card is vaulted already' : `charge it with retained_${type}`;
  return invalidParam('token', `A vault token charges its card without the CVV, as the merchant: ${instead} (retained_purchase or retained_authorize, by this token or linked_id). A ${type} takes a card captured on a hosted page.`);
}

/**
 * A hosted page pays only with a card captured for its own channel (its session captures for no
 * other, authorizeCardCapture): a capture token of another channel's page or of a cardvaultuser
 * token is someone else's card entry, and a vault token names a stored card the page never saw.
 * Both read as an unknown token, so the page learns nothing about the vault. (The REST API may
 * charge a card on any channel of its currency and account type, as the spec allows.)
 */
function isPagesOwnCard(found: ResolvedCard, channel: ChannelRecord): boolean {
  return found.via !== 'vault_token' && found.card.channelId === channel.id;
}

async function resolveCard(
  context: AppContext, db: Queryable, actor: Actor, input: TransactionInput, lookup: { channel: ChannelRecord; linked: TransactionRecord | null; linkedCard: ChargeableCard | null },
): Promise<PlanCard> {
  const { channel, linked } = lookup;
  // Every transaction this API creates moves money by card (a charge, or a follow-up of one), so
  // it is recorded as `credit-card`; `bank-transfer` would hide it from card reports and filters.
  if (input.paymentMethod !== undefined && input.paymentMethod !== 'credit-card') {
    throw invalidParam('payment_methods', 'This transaction is paid by card: payment_methods can only be credit-card.');
  }
  if (isFollowUpType(input.type)) return { card: linked?.cardId ? await cardById(db, actor.siteId, linked.cardId) : null };
  let resolved: PlanCard & { card: CardRecord };
  if (isRetainedType(input.type)) {
    resolved = await retainedCard(db, actor, input, { linked, linkedCard: lookup.linkedCard });
  } else {
    // Resolving writes nothing: the capture token is redeemed with the attempt (insertAttempts).
    const found = await resolvePaymentCard(db, context.vault, { siteId: actor.siteId, token: input.token!, channelId: channel.id });
    if (!found || (isHostedSource(actor.source) && !isPagesOwnCard(found, channel))) throw unknownCardToken();
    if (found.via === 'vault_token') throw vaultTokenNotRetained(input.type);
    resolved = { card: found.card, ...(found.cvv !== undefined ? { cvv: found.cvv } : {}), ...(found.redemption ? { captureRedemption: found.redemption } : {}) };
  }
  // Keyed by what named the card: a retained charge may name it by linked_id alone.
  const cardParam = input.token === undefined ? 'linked_id' : 'token';
  assertCardAllowedInMode(resolved.card, channel.accountMode, cardParam);
  assertCardUsableOnChannel(resolved.card, channel, 'channels');
  assertCardNotExpired(resolved.card, context.now(), cardParam);
  assertCardKeyConfigured(context.vault, resolved.card);
  return resolved;
}

/**
 * Retained charges name the card by the vault transaction (`linked_id`) or its vault token; the
 * vault transaction's card was read by the look-up (`linkedCard`).
 */
async function retainedCard(
  db: Queryable, actor: Actor, input: TransactionInput, lookup: { linked: TransactionRecord | null; linkedCard: ChargeableCard | null },
): Promise<{ card: CardRecord; sealed?: SealedPan }> {
  const { linked, linkedCard } = lookup;
  let card: CardRecord | null = null;
  let sealed: SealedPan | undefined;
  if (linked) {
    if (linked.status !== 'complete' || linked.cardId === null) throw invalidParam('linked_id', 'The vault transaction did not complete; vault the card again.');
    card = linkedCard?.card ?? null;
    sealed = linkedCard?.sealed;
  }
  if (input.token !== undefined) {
    const byToken = await cardByVaultToken(db, actor.siteId, input.token);
    if (!byToken) throw invalidParam('token', 'Unknown vault token.');
    if (card && card.id !== byToken.id) throw invalidParam('token', 'The token is not the card of the linked vault transaction.');
    card = byToken;
  }
  if (!card) throw invalidParam('linked_id', 'The vaulted card is no longer available.');
  // A token naming the same card keeps the sealed PAN read with it; another card was refused above.
  return sealed ? { card, sealed } : { card };
}

/**
 * `found` is what `lookUp` read for the request. Reads the rest through `db`: attempts.ts passes
 * the attempt's database transaction, so these fixed statements share its generic plans (their
 * array parameters would otherwise be re-planned on every call). Every read is a plain read; the
 * locks are taken by the attempt's own statements.
 */
export async function preparePayment(context: AppContext, db: Queryable, actor: Actor, input: TransactionInput, found: Lookup): Promise<PaymentPlan> {
  assertRequired(input);
  assertAmount(input);
  assertRedirectUrl(input);
  const channel = resolveChannel(input, found.channel);
  const { shares, firstBookingLanguage } = resolveShares(input, channel, found.bookings);
  const linked = resolveLinked(input, channel, found.linked);
  const extras = await prepareForexAndAllocations(context, db, actor, { input, channel, shares, linked });
  const { card, cvv, captureRedemption, sealed } = await resolveCard(context, db, actor, input, { channel, linked, linkedCard: found.linkedCard });
  const mode = processorModeOf({ input, channel, card });
  assertProcessorTakes(context, mode);
  return {
    input, channel, mode, currency: input.currency!, total: input.total!, shares, linked, card, cvv, captureRedemption, sealedPan: sealed, extras,
    language: languageOf(input, linked, firstBookingLanguage, channel),
  };
}
