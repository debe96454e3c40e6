import type { NothingPayableReason } from '../../src/domain/bookings.js';
import { nothingPayableMessageKey } from '../../src/domain/hosted/nothing-payable.js';
import { callApi, type CallResult } from './api.js';
import type { CardForm, CardInput } from './card-form.js';
import { byId, type PageData, type Translate } from './page-data.js';

/** The answer of the page payment API (`POST /hosted/payments`, `GET /hosted/payments/current`). */
export interface PaymentAnswer {
  outcome: 'complete' | 'failed' | 'challenge' | 'timeout';
  /** The transaction as the REST API returns it, plus `3ds_response`, `api_urls`, `statement_batches`. */
  transaction: Record<string, unknown> & { id: number; status: string; content?: string };
  attempts_left: number;
  /** Set when this failure was the last attempt allowed. */
  rejected?: { message: string };
  challenge_url?: string;
  /** Vaulting app: where to send the browser, every redirect parameter appended. */
  redirect_url?: string;
  /** `reason` is already in the page's language (the server translates it from the catalogue). */
  decline?: { code: string; message: string; reason: string };
  booking_id?: number | null;
}

export interface ApiErrorBody {
  code: string;
  message: string;
  /**
   * `exhausted`: 'captures' on a rest_attempts_exhausted refusing a card to capture (no attempt failed).
   * `nothing_payable`, `company`, `lapses_in_minutes`: a modal session, or a page's payment, refused because its booking takes no payment now, why, and (a 3DS challenge) for how long at most.
   */
  data: { status: number; params?: Record<string, string> | string[]; exhausted?: string; nothing_payable?: NothingPayableReason; company?: string; lapses_in_minutes?: number };
}

export type FlowEnd =
  /** `gaveUp`: the page stopped waiting for the payment's answer and read the outcome later (the modal fires transaction_timeout first). */
  | { kind: 'answer'; answer: PaymentAnswer; gaveUp?: true }
  | { kind: 'refused'; status: number; error: ApiErrorBody }
  | { kind: 'timeout'; error: { name: 'TimeoutError'; message: string } }
  | { kind: 'network'; error: { name: 'TypeError'; message: string } };

export interface FlowHooks {
  /** The card is with the service and the bank is being asked (beforeunload protection starts). */
  onProcessing?: (processing: boolean) => void;
  /** The bank wants the cardholder: the challenge is shown in the page. */
  onChallenge?: () => void;
  /**
   * Aborted when nobody can see the page any more (the modal closed while processing): a 3DS
   * challenge is not waited for (or shown); the flow reads what the payment came to instead (still
   * pending: the timeout case), so the outcome is reported within the calls' own time bounds.
   */
  stopWaiting?: AbortSignal;
}

/**
 * Card → capture endpoint → page payment API → (3DS challenge in an iframe of this page) → the
 * final answer. The card data goes only to this page's own origin.
 */
export function runPayment(data: PageData, card: CardInput, extra: Record<string, unknown>, hooks: FlowHooks = {}): Promise<FlowEnd> {
  // Processing from the moment the card leaves the form until the outcome is known.
  return whileProcessing(hooks, () => capturePayAndSettle(data, card, extra, hooks));
}

/**
 * A page opened on its session's payment awaiting its 3DS challenge (the payment request page or
 * the vaulting app reloaded, or its tab discarded while the payer was in the bank's app): shows that
 * challenge again and ends on its outcome, as runPayment would have. No card is taken: the one payment goes on.
 */
export function resumePayment(data: PageData, hooks: FlowHooks = {}): Promise<FlowEnd> {
  return whileProcessing(hooks, async () => settleChallenge(data, await paymentMade(data), hooks));
}

async function whileProcessing(hooks: FlowHooks, flow: () => Promise<FlowEnd>): Promise<FlowEnd> {
  hooks.onProcessing?.(true);
  try {
    return await flow();
  } finally {
    hooks.onProcessing?.(false);
  }
}

async function capturePayAndSettle(data: PageData, card: CardInput, extra: Record<string, unknown>, hooks: FlowHooks): Promise<FlowEnd> {
  const capture = await callApi<{ token: string } | ApiErrorBody>({
    method: 'POST',
    url: `/${encodeURIComponent(data.sitePath)}/site-json/vendor/v2/cards`,
    session: data.session,
    body: { channels: data.channelId, ...card },
    timeoutMs: data.timeoutMs,
  });
  if (capture.kind !== 'answer') return capture;
  // A page whose payment went through refuses a card as it refuses a second payment (409
  // rest_session_completed): the answer was lost and the payer paid again, so the flow goes on
  // from that payment below, as when the payment API refuses it.
  if (capture.status !== 201 && !paymentUnderWay(capture)) return { kind: 'refused', status: capture.status, error: capture.body as ApiErrorBody };
  const attemptId = newAttemptId();
  const paid = capture.status !== 201 ? { ...capture, body: capture.body as ApiErrorBody } : await callApi<PaymentAnswer | ApiErrorBody>({
    method: 'POST',
    url: '/hosted/payments',
    session: data.session,
    body: { card_token: (capture.body as { token: string }).token, ...extra, attempt_id: attemptId },
    timeoutMs: data.timeoutMs,
    keepsResume: true,
  });
  // This page's payment was made, or awaits its challenge, already: its answer was lost on the way
  // (the connection dropped) and the payer paid again. Go on from where that payment is, so the
  // payer sees it (and its challenge) and the modal reports it. The page said it had been paid
  // (or was being processed) and the modal fired transaction_error for a payment that was taken.
  const first = paid.kind === 'answer' && paymentUnderWay(paid) ? await currentPayment(data) : paid;
  const end = paid.kind === 'timeout' ? await afterGivingUp(data, paid, attemptId) : flowEnd(first);
  return settleChallenge(data, end, hooks);
}

/** Where a payment's answer asks for the cardholder, shows the challenge and reads the outcome after it. */
async function settleChallenge(data: PageData, end: FlowEnd, hooks: FlowHooks): Promise<FlowEnd> {
  if (end.kind !== 'answer' || end.answer.outcome !== 'challenge') return end;
  if (!end.answer.challenge_url) return notKnownYet(end.answer);
  hooks.onChallenge?.();
  await showChallenge(end.answer.challenge_url, hooks.stopWaiting);
  const settled = await paymentMade(data);
  const last = settled.kind === 'answer' && settled.answer.outcome === 'challenge' ? notKnownYet(settled.answer) : settled;
  return end.gaveUp && last.kind === 'answer' ? { ...last, gaveUp: true } : last;
}

/**
 * A payment still `pending` when there is no challenge (left) to show: the processor's look-up at
 * the 3DS return did not settle it, and the pending-payments job will. It may still complete, so
 * it is the spec's timeout case (the modal fires transaction_timeout, the pages say to check
 * before paying again). The pages read it as a decline: "no payment was taken, try again".
 */
function notKnownYet(answer: PaymentAnswer): FlowEnd {
  return { kind: 'answer', answer: { ...answer, outcome: 'timeout' } };
}

/**
 * The page gave up waiting for its payment's answer (`timeoutMs`), but the service may have
 * answered since: the page reads what its payment came to and goes on from it (a receipt, a
 * decline, the challenge it never showed). Before, it said "check before paying again" of a payment
 * that had gone through. With nothing to read (this attempt not recorded yet, or the look-up
 * unanswered too) it stays the timeout. (A payment recorded but still `incomplete` is the timeout
 * answer.) The look-up names the attempt (`attemptId`): the session's latest recorded attempt may
 * be an earlier one, whose decline the page showed as this attempt's outcome.
 */
async function afterGivingUp(data: PageData, gaveUp: FlowEnd, attemptId: string): Promise<FlowEnd> {
  const since = flowEnd(await currentPayment(data, attemptId));
  return since.kind === 'answer' ? { ...since, gaveUp: true } : gaveUp;
}

/**
 * `onProcessing` for a page of its own (the payment request page, the vaulting app): the browser
 * asks before Back, Reload or closing the tab leaves a payment processing, as the modal asks on
 * the integrator's page (close_window_attempted). Back pressed during a 3DS challenge left it
 * unanswered without a word, and the booking took no payment until the challenge expired.
 */
export function confirmLeaving(processing: boolean): void {
  if (processing) window.addEventListener('beforeunload', holdLeaving);
  else window.removeEventListener('beforeunload', holdLeaving);
}

function holdLeaving(event: BeforeUnloadEvent): void {
  event.preventDefault();
  event.returnValue = '';
}

/** A new random name for one payment attempt (`attempt_id`): 32 hex digits. */
function newAttemptId(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * What a page says once it takes no more cards (rest_attempts_exhausted): its failed attempts ran
 * out, or the cards it may take did (`data.exhausted` 'captures'), where no attempt need have
 * failed and "three failed attempts" would be untrue.
 */
export function exhaustedLine(error: ApiErrorBody, company: string, t: Translate): string {
  return t(error.data.exhausted === 'captures' ? 'capturesExhausted' : 'rejected', { company });
}

/**
 * Why a refusal says the booking takes no payment now (`data.nothing_payable`), in the page
 * language, as the payment request link says it; while a 3DS challenge holds it, in how many
 * minutes at most it takes one again. Null when the refusal does not say.
 */
export function nothingPayableLine(error: ApiErrorBody, t: Translate): { kind: 'success' | 'info'; line: string } | null {
  const reason = error.data.nothing_payable;
  if (!reason || !Object.hasOwn(nothingPayableMessageKey, reason)) return null;
  const minutes = error.data.lapses_in_minutes;
  if (reason === 'in_progress' && minutes !== undefined) return { kind: 'info', line: t('paymentAwaitingBank', { minutes }) };
  return { kind: reason === 'paid' ? 'success' : 'info', line: t(nothingPayableMessageKey[reason], { company: error.data.company ?? '' }) };
}

/** The page payment API's refusal of a second payment while the page's one is done or in progress. */
function paymentUnderWay(result: { status: number; body: unknown }): boolean {
  const code = (result.body as Partial<ApiErrorBody> | null)?.code;
  return result.status === 409 && (code === 'rest_session_completed' || code === 'rest_payment_in_progress');
}

/** The page's latest payment, as the flow ends on it: after a challenge, after giving up waiting, or a reloaded modal frame whose earlier self paid. */
export async function paymentMade(data: PageData): Promise<FlowEnd> {
  return flowEnd(await currentPayment(data));
}

/** The page's latest payment: after its 3DS challenge, or when its first answer was lost; with `attemptId`, that attempt's only. */
function currentPayment(data: PageData, attemptId?: string): Promise<CallResult<PaymentAnswer | ApiErrorBody>> {
  const url = attemptId === undefined ? '/hosted/payments/current' : `/hosted/payments/current?attempt_id=${attemptId}`;
  return callApi<PaymentAnswer | ApiErrorBody>({ method: 'GET', url, session: data.session, timeoutMs: data.timeoutMs, keepsResume: true });
}

function flowEnd(result: CallResult<PaymentAnswer | ApiErrorBody>): FlowEnd {
  if (result.kind !== 'answer') return result;
  if (result.status >= 300) return { kind: 'refused', status: result.status, error: result.body as ApiErrorBody };
  return { kind: 'answer', answer: result.body as PaymentAnswer };
}

/**
 * Shows the bank's challenge page in an iframe of this page and resolves when the bank sends the
 * cardholder back to our 3DS return page inside it. Issuers' challenge pages (ACS) are built to
 * be framed (EMV 3-D Secure's browser flow runs the challenge in an iframe), and so is the
 * sandbox's, so this works in the modal too, where this page is itself framed by the integrator.
 *
 * Each challenge gets a new iframe, and the spent one is removed: the pages a challenge goes
 * through (the bank's, its form post, our return page) are entries of the browser's history
 * while their frame exists. With one lasting iframe, Back after paying stepped through them
 * unseen while the receipt stayed, and Back during a second challenge took its frame back to a
 * blank page, leaving the payer before an empty frame for good.
 */
function showChallenge(url: string, stopWaiting?: AbortSignal): Promise<void> {
  if (stopWaiting?.aborted) return Promise.resolve();
  const section = byId('challenge');
  const spent = byId<HTMLIFrameElement>('challenge-frame');
  const frame = spent.cloneNode(false) as HTMLIFrameElement;
  frame.src = url;
  spent.replaceWith(frame);
  const form = byId('card-form');
  return new Promise((resolve) => {
    const finish = () => {
      window.removeEventListener('message', listener);
      stopWaiting?.removeEventListener('abort', finish);
      section.hidden = true;
      form.hidden = false;
      const empty = frame.cloneNode(false) as HTMLIFrameElement;
      empty.removeAttribute('src');
      frame.replaceWith(empty);
      resolve();
    };
    const listener = (event: MessageEvent) => {
      // Only our own 3DS return page, loaded in this very iframe, may end the challenge.
      if (event.origin !== location.origin || event.source !== frame.contentWindow) return;
      if ((event.data as { type?: string } | null)?.type !== 'tf:3ds-complete') return;
      finish();
    };
    window.addEventListener('message', listener);
    stopWaiting?.addEventListener('abort', finish);
    form.hidden = true;
    section.hidden = false;
    byId('challenge-title').focus();
  });
}

/** Shows an outcome message in the page's outcome region and moves focus to it. */
export function showOutcome(kind: 'success' | 'failed' | 'info', lines: (string | [string, string])[]): void {
  const outcome = byId('outcome');
  outcome.replaceChildren();
  outcome.className = `outcome ${kind}`;
  const list = document.createElement('dl');
  for (const line of lines) {
    if (typeof line === 'string') {
      const paragraph = document.createElement('p');
      paragraph.textContent = line;
      outcome.append(paragraph);
    } else {
      const term = document.createElement('dt');
      term.textContent = line[0];
      const detail = document.createElement('dd');
      detail.textContent = line[1];
      list.append(term, detail);
    }
  }
  if (list.childElementCount > 0) outcome.append(list);
  outcome.hidden = false;
  outcome.focus();
}

/** The decline line, `<code> <reason>` in the page's language, or `fallback` when there is none. */
export function declineLine(t: Translate, answer: PaymentAnswer, fallback: string): string {
  return answer.decline ? t('declined', { code: answer.decline.code, reason: answer.decline.reason }) : t(fallback);
}

/** The form shows the expiry as one field; the capture endpoint names its month and year. */
const fieldOfParam: Record<string, string> = { expiry_month: 'expiry', expiry_year: 'expiry' };

/**
 * The message for a refused field, in the page language: the browser's own check when it fails
 * too; for a card number the browser found valid, the one refusal left, a card of the wrong kind
 * for the channel (a real card on a test page, a test card on a live one); for the expiry and
 * CVV the catalogue's field message (the server refuses an expiry by UTC, the browser checks by
 * local time). Anything else keeps the service's message.
 */
function fieldMessage(form: CardForm, t: Translate, field: string, message: string): string {
  const own = form.check(field);
  if (own) return own;
  if (field === 'card_number') return document.querySelector('.test-mode:not([hidden])') ? t('errorTestCardsOnly') : t('errorRealCardsOnly');
  if (field === 'expiry') return t('errorExpiry');
  return message;
}

/**
 * Sorts a refusal (400 rest_invalid_param and the like): the messages about a field of the form,
 * keyed by that field, and whether anything else was refused (`unplaced`: a parameter no field
 * shows, or a refusal without parameters).
 */
function fieldErrorsOf(error: ApiErrorBody, form: CardForm, t: Translate): { fields: Record<string, string>; unplaced: boolean } {
  const params = error.data.params;
  if (!params || Array.isArray(params)) return { fields: {}, unplaced: true };
  const fields: Record<string, string> = {};
  let unplaced = false;
  for (const [param, message] of Object.entries(params)) {
    const field = fieldOfParam[param] ?? param;
    if (form.hasField(field)) fields[field] ??= fieldMessage(form, t, field, message);
    else unplaced = true;
  }
  return { fields, unplaced };
}

/**
 * Shows a refusal: field errors next to their fields (and in the summary), the rest as one line
 * in the outcome box, in the page language: the service's English messages are for integrators (the modal hands
 * them to their callback). A refusal that is not about the data sent (too many requests, a live
 * channel without a processor, a server error: anything but a 400) says the service refused.
 */
export function showRefusal(error: ApiErrorBody, form: CardForm, t: Translate): void {
  // The page's session expired (30 minutes) or its authorisation was withdrawn: every retry would
  // be refused the same way, so the form goes.
  if (error.code === 'jwt_auth_invalid_request' || error.data?.status === 401) {
    form.form.hidden = true;
    return showOutcome('failed', [t('sessionExpired')]);
  }
  if (error.code === 'rest_session_completed') return showOutcome('info', [t('sessionCompleted')]);
  if (error.code === 'rest_payment_in_progress') return showOutcome('info', [t('paymentInProgress')]);
  if (error.data?.status !== 400) return showOutcome('failed', [t('serviceRefused')]);
  // The booking no longer takes the amount the page offered: another payment of it (or a
  // chargeback) came in since the page opened. Reloading the page shows what is due now.
  const params = error.data.params;
  if (params && !Array.isArray(params) && params.bookings) {
    form.form.hidden = true;
    // Why, when nothing can be paid now (paid in another tab...), as the link itself says it.
    const nothing = nothingPayableLine(error, t);
    return showOutcome(nothing?.kind ?? 'info', [nothing?.line ?? t('paymentInProgress')]);
  }
  // What is not about a field of the form (a card token that expired meanwhile, a parameter the
  // page itself sent) is the service's English for integrators, which the payer cannot act on:
  // nothing was taken, so the page says that, in its language, and lets them try again.
  const { fields, unplaced } = fieldErrorsOf(error, form, t);
  if (Object.keys(fields).length > 0) form.showErrors(fields);
  if (unplaced || Object.keys(fields).length === 0) showOutcome('failed', [t('unexpectedError')]);
}
