import { Type } from '@sinclair/typebox';
import type { FastifyRequest, FastifySchema } from 'fastify';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { openModalBooking, parseModalBookingId, verifyModalAuth } from '../../domain/hosted/modal.js';
import type { SignedValue } from '../../domain/hosted/auth-string.js';
import { attemptsLeft } from '../../domain/hosted/sessions.js';
import type { BookingInput } from '../../domain/bookings.js';
import { formatMoney } from '../../domain/money.js';
import { isTestMode } from '../../domain/vault/index.js';
import { ApiError, forbidden, invalidParams, toApiError } from '../../http/errors.js';
import { errorResponses, htmlResponse, noCredential } from '../../http/openapi.js';
import { validatorCompiler } from '../../http/validation.js';
import { localeOf, parseLanguage, type LanguageCode } from '../../i18n/catalogue.js';
import { limits } from '../../limits.js';
import { parsedUrl } from '../../net.js';
import { BookingCreateBody } from '../bookings/schemas.js';
import { bookingToWire } from '../bookings/routes.js';
import { sendAsset, sharedAssets } from './assets.js';
import { html, sendPage } from './html.js';
import { ModalSessionReply, documentedOnly } from './schemas.js';
import { nothingPayableData, rejectedMessage, sessionExpired } from '../../domain/hosted/payments.js';
import { sitePathOf } from './vault-app.js';
import { cardFormView, errorPage, hostedPage, pageMessages, secureNoteView, translatorFor } from './views.js';

/**
 * The embeddable payment modal. `payment-modal.js` runs on the integrator's page and opens
 * `frame` (our page) in an iframe overlay; the frame exchanges the integrator's auth string for
 * a modal session and takes the card, so card data never touches the host page. Versions live
 * side by side like the vaulting app's (docs/modal.md).
 */
export const modalVersions: ReadonlyMap<string, { files: string[] }> = new Map([['1.0.0', { files: ['payment-modal.js', 'frame.js'] }]]);

/** `https://shop.example` exactly: scheme, host, optional port, nothing else. */
export function parseOrigin(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 200) return null;
  const url = parsedUrl(value);
  return url && (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value ? value : null;
}

const SessionBody = Type.Object(
  {
    path: Type.Unknown(),
    channels: Type.Unknown(),
    currencies: Type.Unknown(),
    total: Type.Unknown(),
    auth: Type.Unknown(),
    verify: Type.Optional(Type.Unknown()),
    booking: Type.Optional(Type.Unknown()),
    signed: Type.Optional(Type.Unknown()),
    language: Type.Optional(Type.Unknown()),
    origin: Type.Unknown(),
    /** The frame was reloaded: the booking its first session opened (payment-modal.js; openModalBooking). */
    resume_booking_id: Type.Optional(Type.Unknown()),
    /** The frame was reloaded before the host heard of a booking (openModalBooking `reloaded`). */
    reloaded: Type.Optional(Type.Unknown()),
    /** The random name payment-modal.js gives each modal it opens: only that modal's reload reopens its booking (openModalBooking `opener`). */
    opener: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const validateBooking = validatorCompiler({ schema: BookingCreateBody, httpPart: 'body', method: 'POST', url: '' }) as ((data: unknown) => boolean) & { errors?: unknown[] };

/** The booking data of a new booking, in the REST API's own POST /bookings rules. */
function newBookingInput(data: Record<string, unknown>, defaults: { channels: number; currencies: string; total: number }): BookingInput {
  const { booking_id: _ignored, ...fields } = data;
  const body = { channels: defaults.channels, currencies: defaults.currencies, total: defaults.total, ...fields };
  if (!validateBooking(body)) {
    const error = toApiError(Object.assign(new Error('invalid booking'), { validation: validateBooking.errors, validationContext: 'booking' }));
    const params = error.data.params;
    // Missing fields are reported like invalid ones: booking_error carries params keyed by name.
    throw Array.isArray(params) ? invalidParams(Object.fromEntries(params.map((name: string) => [name, 'is required']))) : error;
  }
  const valid = body as unknown as Record<string, unknown> & { firstname: string; surname: string; email: string; date: string; total: number; currencies: string; countries: string; channels: number };
  return {
    firstname: valid.firstname,
    surname: valid.surname,
    email: valid.email,
    dateEnd: valid.date,
    total: valid.total,
    currency: valid.currencies,
    country: valid.countries,
    channelId: valid.channels,
    ...(typeof valid.date_start === 'string' ? { dateStart: valid.date_start } : {}),
    ...(typeof valid.pax === 'number' ? { pax: valid.pax } : {}),
    ...(typeof valid.reference === 'string' ? { reference: valid.reference } : {}),
    ...(typeof valid.content === 'string' ? { content: valid.content } : {}),
    ...(typeof valid.language === 'string' ? { language: valid.language } : {}),
    ...(Array.isArray(valid.suppliers) ? { suppliers: valid.suppliers as string[] } : {}),
  };
}

interface SessionRequest {
  path: string;
  channels: number;
  currencies: string;
  total: number;
  auth: string;
  verify: string[];
  booking: Record<string, unknown>;
  /** Signed fields the modal's options gave outside `booking`. */
  signed: Record<string, unknown>;
  language: string | undefined;
  origin: string;
  resumeBookingId: number | null;
  reloaded: boolean;
  opener: string | null;
}

const modalOpenerPattern = /^[A-Za-z0-9_-]{22,64}$/;

/** Anything wrong with what the auth string covers is a token error; the rest is the booking's. */
function parseSessionBody(body: Record<string, unknown>): SessionRequest {
  const verify = body.verify ?? [];
  const booking = body.booking ?? {};
  const signed = body.signed ?? {};
  const ok =
    typeof body.path === 'string' && /^[a-z0-9][a-z0-9-]{0,62}$/.test(body.path) &&
    Number.isSafeInteger(body.channels) && (body.channels as number) > 0 &&
    typeof body.currencies === 'string' && /^[A-Z]{3}$/.test(body.currencies) &&
    Number.isSafeInteger(body.total) && (body.total as number) >= 0 && (body.total as number) <= limits.amountCentsMax &&
    typeof body.auth === 'string' && body.auth.length <= 100 &&
    Array.isArray(verify) && verify.length <= limits.modalVerifyFieldsMax && verify.every((name) => typeof name === 'string' && /^[a-z][a-z0-9_]{0,40}$/.test(name));
  if (!ok) throw sessionExpired();
  const origin = parseOrigin(body.origin);
  if (!origin) throw invalidParams({ origin: 'must be the origin of the page opening the modal' });
  if (typeof booking !== 'object' || booking === null || Array.isArray(booking)) throw invalidParams({ booking: 'must be an object of booking fields' });
  if (typeof signed !== 'object' || signed === null || Array.isArray(signed)) throw sessionExpired();
  // Only our host script sends it, with the ID the service gave: anything else is not the string's to open.
  const resumeBookingId = body.resume_booking_id === undefined ? null : parseModalBookingId(body.resume_booking_id);
  if (resumeBookingId === 0 || (body.resume_booking_id !== undefined && resumeBookingId === null)) throw sessionExpired();
  // Also only our host script's: a random name, 22 to 64 base64url characters (payment-modal.js `openerName`).
  if (body.opener !== undefined && !(typeof body.opener === 'string' && modalOpenerPattern.test(body.opener))) throw sessionExpired();
  return {
    path: body.path as string, channels: body.channels as number, currencies: body.currencies as string, total: body.total as number, auth: body.auth as string,
    verify: verify as string[], booking: booking as Record<string, unknown>, signed: signed as Record<string, unknown>, language: typeof body.language === 'string' ? body.language : undefined, origin,
    resumeBookingId,
    reloaded: body.reloaded === true,
    opener: typeof body.opener === 'string' ? body.opener : null,
  };
}

/**
 * The names `verify` may list: the booking's own fields (`booking_id` among them) and the modal's
 * `language`. The auth string hashes the signed values in the order of their names, not the names
 * themselves (decisions.md), so a name of the browser's choosing let it carry a signed value under
 * another key: `verify: ['d', 'q']` with the signed email and reference as `d` and `q` matched the
 * string and left the booking's real email and reference free, and a signed `booking_id` moved to
 * `a` opened a new booking with any data (session 29's audit). Known names only: a value can move
 * to another known field only where that keeps the order and passes the field's checks. Closing it
 * fully needs a string that hashes the names too: a format change for integrators (owner).
 */
const verifiableNames: ReadonlySet<string> = new Set([...Object.keys(BookingCreateBody.properties), 'booking_id', 'language']);

/** The signed optional fields: each named in `verify` and present in the booking data (or given beside it, `signed`). */
function verifiedValues(request: SessionRequest): Record<string, SignedValue> {
  const values: Record<string, SignedValue> = {};
  for (const name of request.verify) {
    if (!verifiableNames.has(name)) throw sessionExpired();
    // Own fields only: a `verify` name such as `constructor` must not find Object.prototype's.
    const value = (Object.hasOwn(request.booking, name) ? request.booking[name] : undefined) ?? (Object.hasOwn(request.signed, name) ? request.signed[name] : undefined);
    if (!(typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || Array.isArray(value))) throw sessionExpired();
    values[name] = value as SignedValue;
  }
  return values;
}

function bookingIdOf(booking: Record<string, unknown>): number {
  const id = parseModalBookingId(booking.booking_id ?? booking.id ?? 0);
  if (id === null) throw invalidParams({ booking_id: 'must be a booking ID, or 0 to create the booking' });
  return id;
}

/**
 * A modal session of a site with no member that is not read-only: its bookings and payments would
 * have no author (docs/modal.md). `membership remove` keeps one; SQL, or a site never given one, may not.
 */
const noSiteActorMessage = 'This site cannot take payments in the payment modal: it has no member who is not read-only to make the booking and payment as. The site operator must add one.';

const tags = ['Payment modal'];

const modalFileSchema = {
  operationId: 'getModalFile', summary: "The modal's script (payment-modal.js, for the integrator's page), the frame's script, or the frame page itself (`frame`, query: origin, language)",
  tags,
  security: noCredential,
  response: {
    200: {
      description: 'The script (cacheable for a year), or the frame page',
      content: { 'text/javascript': { schema: Type.String() }, 'text/html': { schema: Type.String() } },
    },
    400: htmlResponse('Frame page without a valid `origin`: an error page'),
    ...errorResponses(404, 429),
  },
};

// The integrator's auth string (in the body) is the authority, not a credential header.
const sessionSchema: FastifySchema = {
  operationId: 'createModalSession', summary: "Open a modal session: checks the integrator's auth string, finds or creates the booking",
  tags,
  security: noCredential,
  body: SessionBody,
  response: { 201: ModalSessionReply, ...errorResponses(400, 403, 429) },
};

export async function modalRoutes(app: App, context: AppContext): Promise<void> {
  app.get('/modal/:version/:file', { schema: modalFileSchema }, async (request, reply) => {
    const { version, file } = request.params as { version: string; file: string };
    const release = modalVersions.get(version);
    if (release && file === 'frame') return framePage(context, request, reply, version);
    if (release?.files.includes(file)) {
      const sent = sendAsset(reply, `modal/${version}/${file}`, { immutable: true, crossOrigin: file === 'payment-modal.js' });
      if (sent) return sent;
    }
    return reply.code(404).send(new ApiError(404, 'rest_no_route', 'No route was found matching the URL and request method.').toJSON());
  });

  app.post('/hosted/modal/sessions', { schema: sessionSchema, serializerCompiler: documentedOnly }, async (request, reply) => {
    const body = request.body as Record<string, unknown>;
    const parsed = parseSessionBody(body);
    const verified = verifiedValues(parsed);
    const now = context.now();
    const auth = await verifyModalAuth(context.db, { sitePath: parsed.path, channelId: parsed.channels, currency: parsed.currencies, total: parsed.total, auth: parsed.auth, verified, now });
    if (!auth.ok) {
      request.log.info({ reason: auth.reason, channel: parsed.channels }, 'modal auth string refused');
      throw sessionExpired();
    }
    const bookingId = parsed.resumeBookingId ?? bookingIdOf(parsed.booking);
    const newBooking = bookingId === 0 ? newBookingInput(parsed.booking, { channels: parsed.channels, currencies: parsed.currencies, total: parsed.total }) : null;
    // One database transaction: a refused amount must not leave a created booking behind.
    const opened = await context.db.transaction(async (tx) => {
      const result = await openModalBooking(tx, { channel: auth.channel, auth: parsed.auth, signedAt: auth.signedAt, total: parsed.total, currency: parsed.currencies, bookingId, resumed: parsed.resumeBookingId !== null, reloaded: parsed.reloaded, opener: parsed.opener, newBooking, language: parsed.language, hostOrigin: parsed.origin, verified, now });
      if (!result.ok && 'tokenError' in result) {
        // Reopening beyond the bound, or a booking the string does not sign, needs a new auth
        // string: the token_error the spec names (the same answer as a wrong hash).
        request.log.info({ reason: result.tokenError, channel: parsed.channels }, 'modal auth string refused');
        throw sessionExpired();
      }
      if (!result.ok && 'noSiteActor' in result) {
        // The site's own set-up, not the auth string's nor the booking data's: a refusal in the
        // error shape (the frame fires transaction_error with its message), for the operator to fix.
        request.log.warn({ site: auth.channel.siteId, channel: parsed.channels }, 'modal session refused: the site has no member to act for');
        throw forbidden(noSiteActorMessage);
      }
      // A booking that takes no payment at all (paid, a payment in progress): the frame tells the
      // payer so in their language, where "the booking details are not valid: total" was shown.
      if (!result.ok) {
        const nothingPayable = result.nothingPayable;
        throw invalidParams(result.params, nothingPayable ? await nothingPayableData(tx, { ...nothingPayable, company: auth.channel.company, now }) : {});
      }
      return result;
    });
    const sitePath = await sitePathOf(context, auth.channel.siteId);
    const principalLike = { principal: { sitePath } } as unknown as FastifyRequest;
    const language = opened.session.language as LanguageCode;
    const attempts = attemptsLeft(opened.session);
    const paymentMade = opened.session.transactionId !== null;
    return reply.code(201).header('cache-control', 'no-store').send({
      session: opened.token,
      booking_event: opened.event,
      booking: bookingToWire(context, principalLike, opened.booking, { showDraft: true }),
      amount: parsed.total,
      currencies: parsed.currencies,
      amount_formatted: formatMoney(parsed.total, parsed.currencies, localeOf(language)),
      attempts_left: attempts,
      company: auth.channel.company,
      test_mode: isTestMode(auth.channel.accountMode),
      site_path: sitePath,
      channels: auth.channel.id,
      language,
      cardholder: opened.session.options.cardholder ?? {},
      payment_made: paymentMade,
      // Reloaded during the same modal's 3DS challenge: the frame shows that challenge again.
      payment_pending: opened.session.pendingTransactionId !== null,
      // Its auth string used up its failed attempts in an earlier modal: the frame takes no card.
      ...(attempts === 0 && !paymentMade && opened.session.pendingTransactionId === null ? { rejected: { message: rejectedMessage } } : {}),
    });
  });
}

/** The page inside the modal's iframe; only the origin named in `origin` may frame it. */
async function framePage(context: AppContext, request: FastifyRequest, reply: Parameters<typeof sendPage>[0], version: string) {
  const query = request.query as Record<string, unknown>;
  const language: LanguageCode = parseLanguage(typeof query.language === 'string' ? query.language : undefined) ?? 'enGB';
  const t = translatorFor(language);
  const hostOrigin = parseOrigin(query.origin);
  if (!hostOrigin) {
    return sendPage(reply, 400, errorPage({ language, style: sharedAssets.style, message: t('invalidRequest', { params: 'origin' }) }), { frameAncestors: "'none'" });
  }
  const body = hostedPage({
    language,
    title: t('titleModal'),
    heading: t('titleModal'),
    style: sharedAssets.style,
    script: `/modal/${version}/frame.js`,
    bodyClass: 'modal-frame',
    content: html`<p id="loading" class="status" role="status">${t('loading')}</p>
<div id="payment" hidden>
<p class="subheading" id="payee"></p>
<dl class="summary"><dt>${t('bookingId')}</dt><dd id="booking-id"></dd><dt id="amount-label">${t('amountDue')}</dt><dd id="amount"></dd></dl>
${secureNoteView(t, false)}
<p class="test-mode" id="test-mode" hidden>${t('testMode')}</p>
${cardFormView({ t, language, holderFields: ['name', 'email'], prefill: {}, submitLabel: t('payAmount', { amount: '' }) })}
</div>
<section id="fatal" class="outcome failed" role="alert" hidden></section>`,
    data: { kind: 'modal', hostOrigin, language, locale: localeOf(language), messages: pageMessages(language), timeoutMs: limits.hostedPaymentTimeoutMs },
  });
  // Framed only by the page that opened it: the browser enforces that the embedding origin is
  // the one the frame will talk to with postMessage.
  return sendPage(reply, 200, body, { frameAncestors: hostOrigin, frameSrc: "'self'" });
}
