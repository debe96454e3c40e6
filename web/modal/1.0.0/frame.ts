// The payment modal's frame: our page inside the integrator's overlay. Receives the modal options
// from the host page (exact origin and window checked), exchanges the auth string for a modal
// session, takes the card and reports every step to the host as the spec's callbacks.
import { callApi } from '../../shared/api.js';
import { CardForm } from '../../shared/card-form.js';
import { byId, readPageData, translator, type PageData } from '../../shared/page-data.js';
import { declineLine, exhaustedLine, nothingPayableLine, paymentMade, resumePayment, runPayment, showOutcome, showRefusal, type ApiErrorBody, type FlowEnd, type PaymentAnswer } from '../../shared/payment-flow.js';
import { frameSource, hostSource, type CallbackName, type HostMessage, type ModalInit } from './protocol.js';

interface FrameData {
  hostOrigin: string;
  /** The catalogue's language code (`deDE`) the frame is shown in, as the session names its own. */
  language: string;
  /** BCP 47 (`de-DE`), for Intl, as every page's (PageData). */
  locale: string;
  messages: Record<string, string>;
  timeoutMs: number;
}

interface SessionAnswer {
  session: string;
  booking_event: 'booking_logged' | 'booking_exists';
  booking: { id: number } & Record<string, unknown>;
  amount_formatted: string;
  attempts_left: number;
  company: string;
  test_mode: boolean;
  site_path: string;
  channels: number;
  language: string;
  cardholder: { name?: string; email?: string };
  /** The frame was reloaded after its earlier session paid: show that payment, take no card. */
  payment_made: boolean;
  /** The frame was reloaded during its earlier session's 3DS challenge: show that challenge again, take no card. */
  payment_pending: boolean;
  /** No attempts left: the auth string used them up in an earlier modal. */
  rejected?: { message: string };
}

const data = readPageData<FrameData>();
let t = translator(data.messages);
const timeoutMessage = 'The request timed out.';
let started = false;
/** The host closed the modal while the payment was processing: this frame, hidden, reports the outcome without waiting for a challenge nobody sees. */
const closedByHost = new AbortController();

function post(message: Record<string, unknown>): void {
  window.parent.postMessage({ source: frameSource, ...message }, data.hostOrigin);
}

function emit(name: CallbackName, argument: unknown): void {
  post({ type: 'event', name, argument });
}

function fatal(text: string, kind: 'failed' | 'info' | 'success' = 'failed'): void {
  byId('loading').hidden = true;
  byId('payment').hidden = true;
  const box = byId('fatal');
  box.className = `outcome ${kind}`;
  box.textContent = text;
  box.hidden = false;
}

window.addEventListener('message', (event) => {
  if (event.origin !== data.hostOrigin || event.source !== window.parent) return;
  const message = event.data as HostMessage | null;
  if (!message || message.source !== hostSource) return;
  if (message.type === 'focus') return focusFirst();
  if (message.type === 'closed') return closedByHost.abort();
  if (message.type !== 'init' || started) return;
  started = true;
  void start(message.options);
});

/** The first control a Tab would reach, as if focus had come round to the top of this page. */
function focusFirst(): void {
  const controls = document.querySelectorAll<HTMLElement>('a[href], button, input, select, textarea, iframe, [tabindex]');
  [...controls].find((element) => element.tabIndex >= 0 && !(element as HTMLInputElement).disabled && element.getClientRects().length > 0)?.focus();
}
// The host focuses this frame when it opens, so Escape is typed here, not on the host page:
// ask the host to close the overlay (docs/modal.md: Escape and the × button close it).
window.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') post({ type: 'close' });
});
post({ type: 'ready' });

async function start(options: ModalInit): Promise<void> {
  const opened = await callApi<SessionAnswer | ApiErrorBody>({ method: 'POST', url: '/hosted/modal/sessions', body: { ...options, origin: data.hostOrigin }, timeoutMs: data.timeoutMs });
  if (opened.kind !== 'answer') {
    emit('transaction_error', opened.error);
    return fatal(t('networkError'));
  }
  if (opened.status !== 201) {
    const error = opened.body as ApiErrorBody;
    if (error.code === 'jwt_auth_invalid_request') {
      emit('token_error', error);
      return fatal(t('sessionExpired'));
    }
    // booking_error is for erroneous booking data (a 400); the service refusing for another reason
    // (too many requests, a server error) is "any reason other than the bank's" (spec, Events).
    if (opened.status !== 400) {
      // It answered, so the connection is fine: say so, in the page language (the service's own
      // message goes to the integrator's callback).
      emit('transaction_error', { name: 'Error', message: error.message ?? `The payment service answered ${opened.status}.` });
      return fatal(t('serviceRefused'));
    }
    emit('booking_error', error);
    // The booking takes no payment now at all (paid, a payment still in progress): said as the
    // payment request page says it, not as booking details that are not valid.
    const nothing = nothingPayableLine(error, t);
    if (nothing) return fatal(nothing.line, nothing.kind);
    // The payer is shown which fields, in the frame's language; the service's English explanation
    // of each goes to the integrator's booking_error callback above (it was shown here too).
    return fatal(bookingInvalidLine(Object.keys(error.data.params ?? {})));
  }
  const session = opened.body as SessionAnswer;
  emit(session.booking_event, session.booking);
  if (session.language !== data.language) await showIn(session.language);
  showForm(session);
}

/**
 * The page's own words (its catalogue's labels) for the booking fields a payer knows from the
 * booking: the API's names ("firstname, email") were put into a sentence in the payer's language.
 */
const bookingFieldLabel: Record<string, string> = {
  booking_id: 'bookingId', firstname: 'leadTraveller', surname: 'leadTraveller', email: 'email', date: 'travelDates', date_start: 'travelDates',
  reference: 'reference', countries: 'country', total: 'amountDue',
};

/** Which booking details were refused, named in the page language; a field with no label for the payer is not named. */
function bookingInvalidLine(fields: string[]): string {
  const labels = [...new Set(fields.flatMap((field) => (Object.hasOwn(bookingFieldLabel, field) ? [t(bookingFieldLabel[field]!)] : [])))];
  if (labels.length === 0) return t('bookingDataInvalid');
  return t('bookingInvalid', { message: new Intl.ListFormat(data.locale, { type: 'unit' }).format(labels) });
}

/**
 * The frame is rendered before the session names its language: without the integrator's
 * `language` the session takes the booking's (docs/modal.md), in which the service formats the
 * amount and gives decline reasons. The frame follows it: this same page in that language
 * replaces this one's text, and the host names the dialog in it. Without that, the payer read a
 * German amount and decline in an English form. If the page cannot be had, the frame stays as it is.
 */
async function showIn(language: string): Promise<void> {
  const url = new URL(location.href);
  url.searchParams.set('language', language);
  const fresh = await fetch(url, { credentials: 'omit', cache: 'no-store', signal: AbortSignal.timeout(data.timeoutMs) })
    .then(async (response) => (response.ok ? new DOMParser().parseFromString(await response.text(), 'text/html') : null))
    .catch(() => null);
  const main = fresh?.getElementById('main');
  const freshData = fresh?.getElementById('page-data')?.textContent;
  if (!fresh || !main || !freshData) return;
  const shown = JSON.parse(freshData) as FrameData;
  Object.assign(data, { language: shown.language, locale: shown.locale, messages: shown.messages });
  t = translator(shown.messages);
  document.documentElement.lang = fresh.documentElement.lang;
  document.title = fresh.title;
  byId('main').replaceWith(document.adoptNode(main));
  post({ type: 'language', value: shown.language });
}

function showForm(session: SessionAnswer): void {
  const pageData: PageData = {
    kind: 'modal', session: session.session, sitePath: session.site_path, channelId: session.channels, locale: data.locale, messages: data.messages,
    attemptsLeft: session.attempts_left, timeoutMs: data.timeoutMs, company: session.company, bookingId: session.booking.id,
  };
  byId('payee').textContent = t('paymentTo', { company: session.company });
  byId('booking-id').textContent = String(session.booking.id);
  byId('amount').textContent = session.amount_formatted;
  byId('test-mode').hidden = !session.test_mode;
  const submit = byId('submit');
  submit.textContent = t('payAmount', { amount: session.amount_formatted });
  const form = new CardForm(t);
  const nameInput = form.form.querySelector<HTMLInputElement>('[name="name"]');
  const emailInput = form.form.querySelector<HTMLInputElement>('[name="email"]');
  if (nameInput && session.cardholder.name) nameInput.value = session.cardholder.name;
  if (emailInput && session.cardholder.email) emailInput.value = session.cardholder.email;
  byId('loading').hidden = true;
  byId('payment').hidden = false;
  if (session.payment_made) {
    // Reloaded after paying: the receipt and transaction_logged (the host fires it once), no form.
    // Then processing is over (settled): a frame reloaded mid-payment left the host processing,
    // which fired close_window_attempted and kept a closed modal's frame after the payment was made.
    form.form.hidden = true;
    void paymentMade(pageData).then((end) => settled(end, pageData, form));
    return;
  }
  if (session.payment_pending) {
    // Reloaded during the challenge: the same challenge again, and its outcome reported as usual.
    form.form.hidden = true;
    post({ type: 'processing', value: true });
    void resumePayment(pageData, { stopWaiting: closedByHost.signal }).then((end) => {
      form.form.hidden = false;
      settled(end, pageData, form);
    });
    return;
  }
  if (session.rejected) {
    // A card typed now would be stored and then refused, as the payment request page and the
    // vaulting app show no form once no attempt is left.
    form.form.hidden = true;
    emit('transaction_rejected', session.rejected);
    // Nothing can be processing (a frame reloaded while its last attempt was with the bank left the host processing).
    post({ type: 'processing', value: false });
    return showOutcome('failed', [t('rejected', { company: session.company })]);
  }
  byId('card_number').focus();

  // Processing ends once the outcome is reported, not before: a modal closed meanwhile keeps this
  // frame (hidden) until then, so the outcome's callbacks still fire (docs/modal.md).
  form.payOnSubmit({
    pay: (card) => runPayment(pageData, card, {}, { onProcessing: (value) => value && post({ type: 'processing', value }), stopWaiting: closedByHost.signal }),
    settled: (end) => settled(end, pageData, form),
  });
}

function settled(end: FlowEnd, page: PageData, form: CardForm): void {
  try {
    report(end, page, form);
  } finally {
    post({ type: 'processing', value: false });
  }
}

function timeoutArgument(bookingId: number | undefined) {
  return { booking_id: bookingId ?? null, message: `${timeoutMessage} Booking ID: ${bookingId}.`, name: 'TimeoutError' };
}

function report(end: FlowEnd, page: PageData, form: CardForm): void {
  const unknown = end.kind === 'timeout' || (end.kind === 'answer' && end.answer.outcome === 'timeout');
  // The frame gave up waiting (the spec's timeout "between the service and the modal request"),
  // so the integrator hears transaction_timeout, whatever the payment turned out to be; when that
  // is known, transaction_logged or transaction_failed follows, as the receipt or decline is shown.
  if (unknown || (end.kind === 'answer' && end.gaveUp)) emit('transaction_timeout', timeoutArgument(page.bookingId));
  if (unknown) {
    form.form.hidden = true;
    return showOutcome('failed', [t('timeout', { bookingId: page.bookingId ?? '', company: page.company })]);
  }
  if (end.kind === 'network') {
    emit('transaction_error', end.error);
    return showOutcome('failed', [t('networkError')]);
  }
  if (end.kind === 'refused') return refused(end.error, page, form);
  answered(end.answer, page, form);
}

function answered(answer: PaymentAnswer, page: PageData, form: CardForm): void {
  if (answer.outcome === 'complete') {
    emit('transaction_logged', answer.transaction);
    form.form.hidden = true;
    byId('amount-label').textContent = t('amountPaid');
    return showOutcome('success', [t('paymentSuccess'), [t('amountPaid'), byId('amount').textContent ?? ''], [t('transactionId'), String(answer.transaction.id)], [t('bookingId'), String(page.bookingId)]]);
  }
  emit('transaction_failed', answer.transaction);
  const decline = declineLine(t, answer, 'unexpectedError');
  if (answer.rejected) {
    emit('transaction_rejected', answer.rejected);
    form.form.hidden = true;
    return showOutcome('failed', [decline, t('rejected', { company: page.company })]);
  }
  showOutcome('failed', [decline, t('attemptsLeft', { count: answer.attempts_left })]);
  form.clearCard();
}

function refused(error: ApiErrorBody, page: PageData, form: CardForm): void {
  // The page shows it as every page does (showRefusal); the integrator hears of it as the spec says.
  if (error.code === 'jwt_auth_invalid_request') {
    emit('token_error', error);
    return showRefusal(error, form, t);
  }
  if (error.code === 'rest_attempts_exhausted') {
    emit('transaction_rejected', { message: error.message });
    form.form.hidden = true;
    return showOutcome('failed', [exhaustedLine(error, page.company, t)]);
  }
  emit('transaction_error', { name: 'Error', message: error.message });
  showRefusal(error, form, t);
}
