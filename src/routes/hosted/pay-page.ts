import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { loadBooking, loadBookingFunding, bookingTotalUnpaid, nothingPayableReason, payableNow, type BookingFunding, type BookingRecord } from '../../domain/bookings.js';
import { nothingPayableMessageKey } from '../../domain/hosted/nothing-payable.js';
import { loadChannel, noPaymentsReason, receiptLabelOf, type ChannelRecord } from '../../domain/channels.js';
import { paymentCurrencyOptions, type PaymentCurrencyOption } from '../../domain/hosted/currencies.js';
import { createHostedSession, attemptsLeft, payRequestCapturesExhausted, type HostedSession } from '../../domain/hosted/sessions.js';
import { payRequestAttemptsExhausted, minutesUntilChallengesLapse } from '../../domain/hosted/payments.js';
import { formatMoney } from '../../domain/money.js';
import { dateTimeFormat } from '../../i18n/formatters.js';
import { authenticPaymentRequestToken, verifyPaymentRequestToken } from '../../domain/payment-request-link.js';
import { isTestMode } from '../../domain/vault/index.js';
import { localeOf, parseLanguage, type LanguageCode } from '../../i18n/catalogue.js';
import { limits } from '../../limits.js';
import { assetResponse, errorResponses, htmlResponse, noCredential } from '../../http/openapi.js';
import { sendAsset, sharedAssets } from './assets.js';
import { html, sendPage, type SafeHtml } from './html.js';
import { sitePathOf } from './vault-app.js';
import { keptSession, payResumeCookie } from './resume-cookie.js';
import { cardFormView, errorPage, hostedPage, noticeView, pageMessages, secureNoteView, translatorFor, type Translator } from './views.js';
import { cardholderNameOf } from '../../domain/hosted/vault-app.js';

/**
 * The payment request page behind a booking's `payment_request` link (`/pay/<token>`): booking
 * summary, the amount due, a choice of payment currencies, the card form, 3DS and a receipt.
 * The signed link is the authority; the page opens a session for exactly the amount due.
 */
const payCsp = { frameAncestors: "'none'", frameSrc: "'self'" } as const;

/** A booking's `YYYY-MM-DD` day in the page's language (the calendar day as written: no time zone shifts it). */
function dayText(day: string, locale: string): string {
  return dateTimeFormat(locale, { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
}

function summaryView(t: Translator, booking: BookingRecord, locale: string): SafeHtml {
  const end = dayText(booking.dateEnd, locale);
  const dates = booking.dateStart ? `${dayText(booking.dateStart, locale)} – ${end}` : end;
  return html`<h2>${t('bookingSummary')}</h2>
<dl class="summary">
<dt>${t('bookingId')}</dt><dd>${booking.id}</dd>
${booking.reference ? html`<dt>${t('reference')}</dt><dd>${booking.reference}</dd>` : ''}
<dt>${t('leadTraveller')}</dt><dd>${booking.firstname} ${booking.surname}</dd>
<dt>${t('travelDates')}</dt><dd>${dates}</dd>
<dt>${t('totalPrice')}</dt><dd>${formatMoney(booking.total, booking.currency, locale)}</dd>
</dl>`;
}

function currencyChoiceView(t: Translator, options: PaymentCurrencyOption[]): SafeHtml {
  if (options.length < 2) return html``;
  return html`<div class="field currency-choice">
<label for="currency">${t('payIn')}</label>
<select id="currency" name="currency">
${options.map((option) => html`<option value="${option.currency}" data-amount="${option.formatted}">${option.currency} · ${option.formatted}</option>`)}
</select>
<p class="converted" id="converted" aria-live="polite"></p>
</div>`;
}

/**
 * Why a booking with an unpaid total offers nothing to pay now (nothingPayableReason): a payment
 * still being processed (a 3DS challenge left open, a processor's late answer) settles within
 * minutes, either way; money under a chargeback is for the company to settle.
 */
async function nothingDueMessage(context: AppContext, t: Translator, booking: BookingRecord, funding: BookingFunding, company: string): Promise<string> {
  const reason = nothingPayableReason(booking, funding) ?? 'held';
  // A 3DS challenge this browser cannot show again (pay-page resume): say until when it holds the booking.
  const minutes = reason === 'in_progress' ? await minutesUntilChallengesLapse(context.db, booking.id, context.now()) : null;
  if (minutes !== null) return t('paymentAwaitingBank', { minutes });
  return t(nothingPayableMessageKey[reason], { company });
}

interface PayFormInput {
  header: { language: LanguageCode; title: string; heading: string; subheading: string; style: string };
  t: Translator;
  language: LanguageCode;
  booking: BookingRecord;
  channel: ChannelRecord;
  company: string;
  token: string;
  session: HostedSession;
  /** The session's payment awaits its 3DS challenge: the page shows it again instead of the form. */
  resume: boolean;
}

/** The card form page for a session; its amount due is the session's. */
async function payFormPage(context: AppContext, input: PayFormInput): Promise<string> {
  const { t, language, booking, channel, session } = input;
  const locale = localeOf(language);
  const due = session.amount!;
  const options = await paymentCurrencyOptions(context, { channel, amount: due, locale });
  return hostedPage({
    ...input.header,
    script: sharedAssets.payScript,
    content: html`${summaryView(t, booking, locale)}
<div id="due">
<p class="amount-label">${t('amountDue')}</p>
<p class="amount-due" id="amount-due">${formatMoney(due, channel.currency, locale)}</p>
${currencyChoiceView(t, options)}
</div>
${secureNoteView(t, isTestMode(channel.accountMode))}
${cardFormView({ t, language, holderFields: ['name', 'email'], prefill: session.options.cardholder ?? {}, submitLabel: t('payAmount', { amount: formatMoney(due, channel.currency, locale) }) })}`,
    data: {
      kind: 'pay',
      session: input.token,
      sitePath: await sitePathOf(context, booking.siteId),
      channelId: channel.id,
      locale,
      messages: pageMessages(language),
      attemptsLeft: attemptsLeft(session),
      timeoutMs: limits.hostedPaymentTimeoutMs,
      company: input.company,
      bookingId: booking.id,
      currencies: options,
      ...(input.resume ? { resume: true } : {}),
    },
  });
}

const assetSchema = {
  operationId: 'getHostedAsset', summary: "The hosted pages' shared stylesheet and scripts (pages.css, pay.js, 3ds-return.js)",
  tags: ['Hosted pages'],
  security: noCredential,
  response: { 200: assetResponse('The file'), ...errorResponses(404, 429) },
};

// The signed link is the authority: no credential.
const payPageSchema = {
  operationId: 'getPaymentRequestPage', summary: "The payment request page of a booking's `payment_request` link (query: language)",
  tags: ['Hosted pages'],
  security: noCredential,
  response: {
    200: htmlResponse('The payment page, or the booking summary when nothing can be paid online'),
    404: htmlResponse('Error page: the link is invalid or expired, or its booking is gone'),
    ...errorResponses(429),
  },
};

// A Map, not an object: a file named `constructor` or `__proto__` is no file (an object's
// prototype would answer it, and the handler fail with 500 instead of 404).
const sharedAssetFiles = new Map([['pages.css', 'hosted/pages.css'], ['pay.js', 'hosted/pay.js'], ['3ds-return.js', 'hosted/3ds-return.js']]);

export async function payPageRoutes(app: App, context: AppContext): Promise<void> {
  app.get('/hosted/assets/:file', { schema: assetSchema }, async (request, reply) => {
    const { file } = request.params as { file: string };
    const known = sharedAssetFiles.get(file);
    const sent = known ? sendAsset(reply, known) : null;
    return sent ?? reply.code(404).send({ code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } });
  });

  app.get('/pay/:token', { schema: payPageSchema }, async (request, reply) => {
    const { token } = request.params as { token: string };
    const now = context.now();
    // Signed by this service, expired or not: an expired link is still the merchant's own, so its
    // page speaks the booking's language and names whom to ask for a new one.
    const secret = context.config.secrets.signingSecret;
    const valid = verifyPaymentRequestToken(secret, token, now);
    const authentic = valid ?? authenticPaymentRequestToken(secret, token);
    const expired = valid === null && authentic !== null;
    const booking = authentic ? await loadBooking(context.db, { siteId: authentic.siteId, id: authentic.bookingId }) : undefined;
    const channel = booking ? await loadChannel(context.db, { siteId: booking.siteId, id: booking.channelId }) : undefined;
    const queryLanguage = parseLanguage((request.query as { language?: string }).language);
    if (!booking || !channel || expired) {
      const language = queryLanguage ?? parseLanguage(booking?.language) ?? 'enGB';
      const t = translatorFor(language);
      const message = booking && channel ? t('invalidLink', { company: receiptLabelOf(channel) }) : t('unknownLink');
      return sendPage(reply, 404, errorPage({ language, style: sharedAssets.style, message }), payCsp);
    }
    const language: LanguageCode = queryLanguage ?? parseLanguage(booking.language) ?? 'enGB';
    const locale = localeOf(language);
    const t = translatorFor(language);
    const company = receiptLabelOf(channel);
    const unpaid = bookingTotalUnpaid(booking);
    // What the page may take: what can be paid on the booking now, less than the unpaid total
    // while authorisations hold part of it, a payment of it is still being processed, or a
    // chargeback took it back and the dispute is open (the payments core refuses more).
    const funding = await loadBookingFunding(context.db, booking.id);
    const due = payableNow(funding);
    const header = { language, title: t('titlePayRequest'), heading: t('titlePayRequest'), subheading: t('paymentTo', { company }), style: sharedAssets.style };
    // A zero total is `unpaid` in the API (booking-status.ts), so its page says nothing is due, in
    // the neutral style, not "fully paid" in the success one (session 29).
    const fullyPaid = booking.total > 0 && unpaid <= 0;
    // The booking's room is held by this browser's own payment awaiting its challenge: show that
    // (before the checks below, whose answer it overrides; the browser kept it, resume-cookie.ts).
    const resumable = fullyPaid ? undefined : keptSession(context, request, payResumeCookie(booking.id));
    const resumed = resumable ? await resumable((session) => session.kind === 'pay' && session.siteId === booking.siteId && session.bookingId === booking.id) : null;
    if (resumed) return sendPage(reply, 200, await payFormPage(context, { header, t, language, booking, channel, company, ...resumed, resume: true }), payCsp);
    // A page whose cards would be refused shows no form: its booking's pages used up their failed
    // attempts or their card captures (payRequestCapturesPerBookingMax).
    const notOnline = noPaymentsReason(channel) !== null || (await payRequestAttemptsExhausted(context, booking.id)) || (await payRequestCapturesExhausted(context.db, booking.id, now));
    const nothingToPay = fullyPaid ? t('fullyPaid') : unpaid <= 0 ? t('nothingToPay') : notOnline ? t('notPayableOnline', { company }) : due > 0 ? null : await nothingDueMessage(context, t, booking, funding, company);
    if (nothingToPay !== null) {
      const outcome = fullyPaid ? 'success' : 'info';
      return sendPage(reply, 200, hostedPage({ ...header, content: html`${summaryView(t, booking, locale)}${noticeView({ kind: outcome, message: nothingToPay })}` }), payCsp);
    }
    // The card form's prefill and the session's cardholder: one value, so the two never differ.
    const cardholder = { name: cardholderNameOf(booking), email: booking.email };
    const { token: sessionToken, session } = await createHostedSession(context.db, {
      kind: 'pay', siteId: booking.siteId, channelId: channel.id, userId: booking.authorId, bookingId: booking.id, amount: due, currency: channel.currency, language,
      options: { cardholder },
    }, now);
    return sendPage(reply, 200, await payFormPage(context, { header, t, language, booking, channel, company, token: sessionToken, session, resume: false }), payCsp);
  });
}
