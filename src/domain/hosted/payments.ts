import type { AppContext } from '../../context.js';
import { ApiError, invalidParams, missingParams } from '../../http/errors.js';
import { loadBooking, loadBookingFunding, nothingPayableReason, type NothingPayableReason } from '../bookings.js';
import { loadChannel, receiptLabelOf } from '../channels.js';
import { declineReason } from '../../i18n/catalogue.js';
import { loadTransactionViews, type TransactionJson } from '../transactions/view.js';
import type { Actor, TransactionInput, TransactionSource } from '../transactions/types.js';
import { createTransaction } from '../transactions/index.js';
import { captureTokenPrefix, resolvePaymentCard, type CardHolder } from '../vault/index.js';
import { limits } from '../../limits.js';
import type { Queryable } from '../../storage/db.js';
import { attemptsLeft, cancelAttempt, findHostedSession, getHostedSession, payRequestWindowStart, recordAttemptOutcome, startAttempt, type HostedSession } from './sessions.js';

/**
 * Payments made by a hosted page on its session: the vaulting app's zero-value vault
 * transaction, and the modal's and payment request page's purchase of the session's booking.
 * Attempts are counted on the session (limits.hostedFailedAttemptsMax) before the processor is
 * called, so the limit holds on the server whatever the page does.
 */
export type HostedOutcome = 'complete' | 'failed' | 'challenge' | 'timeout';

export interface HostedPaymentAnswer {
  outcome: HostedOutcome;
  transaction: TransactionJson;
  attempts_left: number;
  rejected?: { message: string };
  challenge_url?: string;
  redirect_url?: string;
  decline?: HostedDecline;
  booking_id: number | null;
}

/**
 * Why the card was declined: the gateway's `code`, its English `message` (without the code) and
 * the `reason` for that code in the page's language (the catalogue's `declines` namespace, the
 * generic reason for a code it does not know). The pages show `<code> <reason>`: translated here
 * so the browser bundles carry no decline texts and the catalogue stays their one source.
 */
export interface HostedDecline {
  code: string;
  message: string;
  reason: string;
}

export const rejectedMessage = 'Three failed attempts: the payment was rejected and no further attempts are possible.';

const sourceOf: Record<HostedSession['kind'], TransactionSource> = { vault: 'vault_app', modal: 'modal', pay: 'payment_request' };

/**
 * The answer to any unknown or expired page session, wherever the page presents it (the card
 * capture endpoint, the page payment API), and the modal's token_error argument: the pages tell
 * the payer to reopen the page, and the modal fires token_error, on this one code.
 */
export function sessionExpired(): ApiError {
  return new ApiError(403, 'jwt_auth_invalid_request', 'Your session has expired or the authorisation is invalid. Please reopen the payment page.');
}

/**
 * What tells a cards refusal from a failed-attempts one under their shared code: no attempt failed,
 * so a page saying "three failed attempts" would be untrue (the pages say no more cards,
 * exhaustedLine in web/shared/payment-flow.ts).
 */
const capturesExhaustedData = { exhausted: 'captures' } as const;

/**
 * `captures_exhausted`: the capture endpoint's refusal once the page submitted its cards
 * (countCardCapture); `token_captures_exhausted`, once a cardvaultuser token posting cards itself
 * did (countCardVaultTokenCapture). The code is the attempts' own: the pages then end the form as
 * for a rejected payment (the modal emits transaction_rejected), and `data.exhausted` tells them
 * which words to use.
 */
export function attemptRefusal(reason: 'attempts_exhausted' | 'captures_exhausted' | 'token_captures_exhausted' | 'already_completed' | 'in_progress'): ApiError {
  if (reason === 'attempts_exhausted') return new ApiError(403, 'rest_attempts_exhausted', rejectedMessage);
  if (reason === 'captures_exhausted') return new ApiError(403, 'rest_attempts_exhausted', 'This page has taken as many cards as it may: no further card can be entered here.', capturesExhaustedData);
  if (reason === 'token_captures_exhausted') return new ApiError(403, 'rest_attempts_exhausted', 'This cardvaultuser token has captured as many cards as it may: obtain a new token.', capturesExhaustedData);
  if (reason === 'already_completed') return new ApiError(409, 'rest_session_completed', 'This page has already completed its payment.');
  return new ApiError(409, 'rest_payment_in_progress', 'A payment of this page is still awaiting its outcome.');
}

export interface PayInput {
  cardToken: string;
  /**
   * Payment request page: the currency the payer chose (forex), default the channel's, and the
   * total in it that the page showed (paymentCurrencyOptions). The payments core checks that
   * total against the current quote (spec "Forex rule"), so the cardholder is charged exactly
   * what was shown or not at all.
   */
  currency?: string;
  total?: number;
  ipAddress?: string;
  /** The page's name for this attempt (`attempt_id`), by which it may ask for its outcome later. */
  attemptId?: string;
}

/**
 * The payer's details the page's card form took with the card (name and email; the vaulting app
 * also the country): the payment's `payee_name`, `payee_email` and `countries` (where the card is
 * registered), so its receipt reaches whoever paid (docs/emails.md "The payer"), not the traveller
 * the booking names. Until session 33 the form's fields went only onto the card record. A sandbox
 * token, or a capture token the payments core will refuse, names no holder.
 */
async function cardHolderOf(context: AppContext, session: HostedSession, cardToken: string): Promise<CardHolder | null> {
  if (!cardToken.startsWith(captureTokenPrefix)) return null;
  const resolved = await resolvePaymentCard(context.db, context.vault, { siteId: session.siteId, token: cardToken, channelId: session.channelId });
  return resolved?.card.holder ?? null;
}

function transactionInputOf(context: AppContext, session: HostedSession, input: PayInput, holder: CardHolder | null): TransactionInput {
  const common = {
    channelId: session.channelId,
    token: input.cardToken,
    language: session.language,
    attempt3ds: true,
    // The return page is the last the payer sees of the challenge: in the page's language.
    redirectUrl: `${context.config.baseUrl}/hosted/3ds-return?language=${session.language}`,
    paymentMethod: 'credit-card' as const,
    ...(input.ipAddress ? { ipAddress: input.ipAddress } : {}),
    ...(holder?.name ? { payeeName: holder.name } : {}),
    ...(holder?.email ? { payeeEmail: holder.email } : {}),
    ...(holder?.country ? { country: holder.country } : {}),
  };
  if (session.kind === 'vault') {
    return { ...common, type: 'vault', currency: session.currency!, total: 0, ...(session.options.failCode ? { forcedDeclineCode: session.options.failCode } : {}) };
  }
  if (session.bookingId === null || session.amount === null || session.currency === null) throw new Error('payment session without booking or amount');
  const currency = input.currency ?? session.currency;
  // In another currency the total is the converted amount the page showed; never guessed here.
  if (currency !== session.currency && input.total === undefined) throw missingParams(['total']);
  return {
    ...common,
    type: 'purchase',
    currency,
    total: input.total ?? session.amount,
    bookings: [{ id: session.bookingId, currency: session.currency, total: session.amount }],
  };
}

/**
 * Whether the booking's payment request pages used up their failed card attempts
 * (`limits.payRequestFailedAttemptsPerBookingMax` within `payRequestFailedAttemptsWindowSeconds`).
 * Sessions attempting at the same moment may each pass before the others' failures are written:
 * the bound can be passed by at most the attempts in flight, as with one session's own three.
 */
export async function payRequestAttemptsExhausted(context: AppContext, bookingId: number): Promise<boolean> {
  const since = payRequestWindowStart(context.now());
  const { failed } = await context.db.one<{ failed: number }>(
    `SELECT count(*)::int AS failed FROM transaction_bookings tb JOIN transactions t ON t.id = tb.transaction_id
      WHERE tb.booking_id = $1 AND t.source = 'payment_request' AND t.status = 'failed' AND t.created_at > $2`,
    [bookingId, since],
  );
  return failed >= limits.payRequestFailedAttemptsPerBookingMax;
}

/**
 * In how many minutes, at most, the booking's payments awaiting a 3DS challenge have all lapsed
 * (the payments job expires each `limits.pendingExpiryMinutes` after it was made), or null when
 * none awaits one. The pages tell a payer who cannot resume the challenge (another browser, the
 * link or the integrator's page opened anew) when the booking takes a payment again, where
 * "reload in a few minutes" sent them back for up to 35 minutes. Minutes, not a time of day: no
 * time zone to guess, and the pages write it as "Minutes until then: 35" (no plural forms).
 */
export async function minutesUntilChallengesLapse(db: Queryable, bookingId: number, now: Date): Promise<number | null> {
  const row = await db.one<{ latest: Date | null }>(
    `SELECT max(t.created_at) AS latest FROM transaction_bookings tb JOIN transactions t ON t.id = tb.transaction_id
      WHERE tb.booking_id = $1 AND t.status = 'pending'`,
    [bookingId],
  );
  if (row.latest === null) return null;
  const lapsesAtMs = new Date(row.latest).getTime() + limits.pendingExpiryMinutes * 60_000 + limits.jobIntervalMs;
  return Math.max(1, Math.ceil((lapsesAtMs - now.getTime()) / 60_000));
}

/**
 * The error data of a refusal because the booking takes no payment now (a modal session's
 * booking_error, a page's payment): why (`nothing_payable`), whom to contact (`company`) and, while
 * a 3DS challenge holds it, in how many minutes at most it takes one again (`lapses_in_minutes`).
 */
export async function nothingPayableData(db: Queryable, options: { bookingId: number; reason: NothingPayableReason; company: string; now: Date }): Promise<Record<string, unknown>> {
  const minutes = options.reason === 'in_progress' ? await minutesUntilChallengesLapse(db, options.bookingId, options.now) : null;
  return { nothing_payable: options.reason, company: options.company, ...(minutes === null ? {} : { lapses_in_minutes: minutes }) };
}

/** Starts one card attempt of the session and answers with its outcome (or the 3DS challenge). */
export async function payWithSession(context: AppContext, session: HostedSession, input: PayInput): Promise<HostedPaymentAnswer> {
  if (session.kind === 'pay' && session.bookingId !== null && (await payRequestAttemptsExhausted(context, session.bookingId))) throw attemptRefusal('attempts_exhausted');
  const started = await startAttempt(context.db, session.id);
  if (!started.ok) throw attemptRefusal(started.reason);
  const recorded: { transactionId?: number } = {};
  const actor: Actor = {
    siteId: session.siteId, userId: session.userId, source: sourceOf[session.kind], isPlatformAdmin: false, onAttemptRecorded: (transactionId) => (recorded.transactionId = transactionId),
  };
  let created: { id: number; status: string };
  try {
    const holder = await cardHolderOf(context, session, input.cardToken);
    created = await createTransaction(context, actor, transactionInputOf(context, session, input, holder));
  } catch (error) {
    // Failed before the attempt was recorded, so before the bank could be asked: a refusal (bad
    // token, wrong currency...) or our own fault (a card key missing from CARD_KEYS, a 500). Not
    // the payer's card attempt: counted, three server faults rejected a card no bank ever saw.
    if (recorded.transactionId === undefined) {
      await cancelAttempt(context.db, session.id);
      throw await withNothingPayable(context, session, error);
    }
    // Failed after (its settlement): the bank may have charged, and reconciliation settles the
    // row. The session waits on it as on an unknown outcome, so the page can read it (current)
    // and a second submit is refused rather than charged again.
    await recordAttemptOutcome(context.db, session.id, { transactionId: recorded.transactionId, status: 'incomplete', attemptId: input.attemptId ?? null });
    throw error;
  }
  await recordAttemptOutcome(context.db, session.id, { transactionId: created.id, status: created.status, attemptId: input.attemptId ?? null });
  return answerFor(context, await getHostedSession(context.db, session.id), created.id);
}

/**
 * The payments core's refusal of a page's payment because its booking took other money since the
 * page opened (400 on `bookings`), with why nothing can be paid now when nothing can
 * (`data.nothing_payable`, `data.company`: the modal's booking_error carries the same). A second
 * tab of a link paid in the first said "a payment is being processed, reload" of a booking that
 * was paid; the pages now say what the link itself would say (nothingPayableMessageKey).
 */
async function withNothingPayable(context: AppContext, session: HostedSession, error: unknown): Promise<unknown> {
  const params = error instanceof ApiError && error.status === 400 ? error.data.params : undefined;
  if (session.bookingId === null || !params || typeof params !== 'object' || !Object.hasOwn(params, 'bookings')) return error;
  const booking = await loadBooking(context.db, { siteId: session.siteId, id: session.bookingId });
  const reason = booking ? nothingPayableReason(booking, await loadBookingFunding(context.db, booking.id)) : null;
  const channel = reason ? await loadChannel(context.db, { siteId: session.siteId, id: session.channelId }) : undefined;
  if (!reason || !channel) return error;
  return invalidParams(params as Record<string, string>, await nothingPayableData(context.db, { bookingId: session.bookingId, reason, company: receiptLabelOf(channel), now: context.now() }));
}

/**
 * The state of the session's latest payment: after a 3DS challenge, or on reload. With `attemptId`
 * (a page that gave up waiting for that attempt's answer), that attempt's only: null while it is
 * not recorded, when the session's latest attempt is an earlier one, whose outcome is not this
 * attempt's (the page says the outcome is not known yet).
 */
export async function currentPayment(context: AppContext, session: HostedSession, attemptId?: string): Promise<HostedPaymentAnswer | null> {
  // Only the session's own attempts: the booking's other payments (the API's, other pages') are
  // not for whoever holds the page's link to read.
  const transactionId = attemptId === undefined
    ? session.transactionId ?? session.pendingTransactionId ?? session.lastTransactionId
    : session.lastAttemptId === attemptId ? session.lastTransactionId : null;
  if (transactionId === null) return null;
  const [view] = await loadTransactionViews(context.db, context.config, session.siteId, [transactionId]);
  if (!view) return null;
  // A challenge or an unknown outcome settles later; record where it ended up.
  if (session.pendingTransactionId === transactionId && view.status !== 'pending' && view.status !== 'incomplete') {
    await recordAttemptOutcome(context.db, session.id, { transactionId, status: view.status });
  }
  return answerFor(context, await getHostedSession(context.db, session.id), transactionId);
}

/**
 * A page's own payment still waiting for its 3DS challenge, when the browser brings back the
 * page's session (`token`): the payment request page or the vaulting app was reloaded, or its tab
 * discarded (a phone's browser does so while the payer is in the bank's app). That challenge is
 * shown again in the new page, never a second payment: a booking's room is held by it, the link
 * said "still being processed" until it expired, and the vaulting app's payer started over with a
 * second vault of the card. Only a session the loaded page `owns` (the same booking's, the same
 * vaulting app token's): another holder of the link is not shown someone else's card and amount.
 */
export async function pendingChallengeOf(
  context: AppContext,
  token: string,
  owns: (session: HostedSession) => boolean | Promise<boolean>,
): Promise<{ session: HostedSession; answer: HostedPaymentAnswer } | null> {
  const session = await findHostedSession(context.db, token, context.now());
  if (!session || session.pendingTransactionId === null || !(await owns(session))) return null;
  const answer = await currentPayment(context, session);
  return answer?.outcome === 'challenge' && answer.challenge_url ? { session, answer } : null;
}

/**
 * How a page load finds the session the browser kept while its payment awaits the 3DS challenge
 * (src/routes/hosted/resume-cookie.ts): answered with the session when `owns` holds for it and its
 * challenge is still there to show (pendingChallengeOf).
 */
export type ResumableSession = (owns: (session: HostedSession) => boolean | Promise<boolean>) => Promise<{ token: string; session: HostedSession } | null>;

async function answerFor(context: AppContext, session: HostedSession, transactionId: number): Promise<HostedPaymentAnswer> {
  const [transaction] = await loadTransactionViews(context.db, context.config, session.siteId, [transactionId]);
  if (!transaction) throw new Error(`transaction ${transactionId} vanished`);
  const outcome: HostedOutcome =
    transaction.status === 'complete' ? 'complete' : transaction.status === 'pending' ? 'challenge' : transaction.status === 'incomplete' ? 'timeout' : 'failed';
  const left = attemptsLeft(session);
  const answer: HostedPaymentAnswer = { outcome, transaction, attempts_left: outcome === 'complete' ? 0 : left, booking_id: session.bookingId };
  if (outcome === 'challenge' && transaction['3ds_response']?.challenge_url) answer.challenge_url = transaction['3ds_response'].challenge_url;
  if (outcome === 'failed') {
    answer.decline = await declineOf(context, session, transactionId, transaction.content);
    if (left === 0) answer.rejected = { message: rejectedMessage };
  }
  // A vault whose processor did not answer in time also ends here: the integrator gets the
  // transaction ID (status failed, visual only) and reads the real outcome through the API. So does
  // one still pending when the cardholder came back from the challenge (the look-up there did not
  // settle it): the same answer as before the challenge, so the URL goes with a challenge too, and
  // the page follows it only once no challenge is left to show. Without it that page kept the payer
  // for good, and the integrator never heard of the attempt.
  if (session.kind === 'vault' && session.options.redirect) {
    answer.redirect_url = await vaultRedirectUrl(context, session, transaction);
  }
  return answer;
}

async function declineOf(context: AppContext, session: HostedSession, transactionId: number, content: string): Promise<HostedDecline> {
  const row = await context.db.maybeOne<{ decline_code: string | null }>('SELECT decline_code FROM transactions WHERE id = $1', [transactionId]);
  const code = row?.decline_code ?? '';
  // `content` reads "<code> <message>"; the pages show the code apart, so not twice.
  const message = code && content.startsWith(`${code} `) ? content.slice(code.length + 1) : content;
  // The session's language is the one the vaulting app and payment request page are shown in,
  // and the modal frame's when the integrator passes `language` (docs/hosted-pages.md).
  return { code, message, reason: declineReason(session.language, code) };
}

/**
 * The vaulting app's redirect (spec "Vaulting redirect parameters"): every parameter appended to
 * the integrator's URL, replacing any of the same name already in it.
 */
export async function vaultRedirectUrl(context: AppContext, session: HostedSession, transaction: TransactionJson): Promise<string> {
  const card = await context.db.maybeOne<{ token: string; last_four: string; brand: string; expiry_month: number; expiry_year: number }>(
    'SELECT c.token, c.last_four, c.brand, c.expiry_month, c.expiry_year FROM transactions t JOIN cards c ON c.id = t.card_id WHERE t.id = $1 AND t.site_id = $2',
    [transaction.id, session.siteId],
  );
  const url = new URL(session.options.redirect!);
  const parameters: Record<string, string> = {
    session_id: session.options.sessionId ?? '',
    token: card?.token ?? '',
    transaction_id: String(transaction.id),
    last_four: card?.last_four ?? '',
    card_type: card?.brand ?? '',
    expiry_month: card ? String(card.expiry_month).padStart(2, '0') : '',
    expiry_year: card ? String(card.expiry_year) : '',
    status: transaction.status === 'complete' ? 'success' : 'failed',
  };
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return url.toString();
}
