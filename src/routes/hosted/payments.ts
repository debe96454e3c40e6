import { Type } from '@sinclair/typebox';
import type { FastifyRequest, FastifySchema } from 'fastify';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { findHostedSession, type HostedSession } from '../../domain/hosted/sessions.js';
import { currentPayment, payWithSession, sessionExpired } from '../../domain/hosted/payments.js';
import { paymentCurrencyOptions } from '../../domain/hosted/currencies.js';
import { loadChannel } from '../../domain/channels.js';
import { localeOf, parseLanguage } from '../../i18n/catalogue.js';
import { limits } from '../../limits.js';
import { bearerToken } from '../../http/auth.js';
import { threeDsReturnFrameAncestors } from '../../http/security-headers.js';
import { ApiError, invalidParam, renamedParam } from '../../http/errors.js';
import { errorResponses, hostedSessionSecurity, htmlResponse, noCredential } from '../../http/openapi.js';
import { sharedAssets } from './assets.js';
import { html, page, sendPage } from './html.js';
import { translatorFor } from './views.js';
import { keepForResume } from './resume-cookie.js';
import { currencyCodePattern } from '../../domain/patterns.js';
import { HostedPaymentReply, PaymentCurrenciesReply, documentedOnly } from './schemas.js';


export async function requireSession(context: AppContext, request: FastifyRequest): Promise<HostedSession> {
  return (await requireSessionAndToken(context, request)).session;
}

async function requireSessionAndToken(context: AppContext, request: FastifyRequest): Promise<{ session: HostedSession; token: string }> {
  const token = bearerToken(request);
  const session = token ? await findHostedSession(context.db, token, context.now()) : null;
  if (!session || !token) throw sessionExpired();
  return { session, token };
}

/**
 * The page's own name for one payment attempt, random, new for each: a page that gave up waiting
 * for the attempt's answer asks `GET /hosted/payments/current?attempt_id=` for that attempt's
 * outcome, never an earlier attempt's.
 */
const AttemptId = Type.String({ pattern: `^[A-Za-z0-9_-]{16,${limits.hostedAttemptIdLengthMax}}$`, description: "The page's name for this attempt (random, new for each)" });

const PayBody = Type.Object(
  {
    card_token: Type.String({ minLength: 1, maxLength: limits.captureTokenLengthMax }),
    currencies: Type.Optional(Type.String({ pattern: currencyCodePattern })),
    /** Payment request page: the amount it showed in `currencies` (minor units). */
    total: Type.Optional(Type.Integer({ minimum: 1, maximum: limits.amountCentsMax })),
    attempt_id: Type.Optional(AttemptId),
  },
  { additionalProperties: false },
);

const CurrentQuery = Type.Object({ attempt_id: Type.Optional(AttemptId) }, { additionalProperties: false });

const tags = ['Hosted pages'];
// An unknown or expired session is 403 (sessionExpired), not 401: the page cannot log in again.
const sessionErrors = errorResponses(403, 404, 429);

// Typed loosely: the Transaction schema is too deep for the type provider's inference.
const paySchema: FastifySchema = {
  operationId: 'createHostedPayment', summary: "Pay with the card the page captured: the session's booking and amount (one attempt)",
  tags,
  security: hostedSessionSecurity,
  body: PayBody,
  response: { 201: HostedPaymentReply, ...errorResponses(400, 403, 409, 429) },
};
const currenciesSchema = {
  operationId: 'listHostedPaymentCurrencies', summary: 'The payment request page: the currencies it may pay in, with current quotes',
  tags,
  security: hostedSessionSecurity,
  response: { 200: PaymentCurrenciesReply, ...sessionErrors },
};
const currentSchema: FastifySchema = {
  operationId: 'getHostedPayment', summary: "The session's latest payment attempt (after 3-D Secure, or on reload); with attempt_id, that attempt's; 404 before it is recorded",
  tags,
  security: hostedSessionSecurity,
  querystring: CurrentQuery,
  response: { 200: HostedPaymentReply, ...sessionErrors },
};
const threeDsReturnSchema = {
  operationId: 'returnHostedThreeDSecure', summary: "Where the bank's 3-D Secure page returns inside the page's challenge frame; tells the page, which reads the outcome (query: language)",
  tags,
  security: noCredential,
  response: { 200: htmlResponse('A page whose script notifies the hosted page'), ...errorResponses(429) },
};

/**
 * The page payment API: what the vaulting app, the modal frame and the payment request page
 * call with their session token after capturing the card. Not part of the REST API: it exists
 * only for our own pages (same origin, no CORS).
 */
export async function hostedPaymentRoutes(app: App, context: AppContext): Promise<void> {
  app.post('/hosted/payments', { schema: paySchema, serializerCompiler: documentedOnly }, async (request, reply) => {
    const { session, token } = await requireSessionAndToken(context, request);
    const body = request.body as { card_token: string; currencies?: string; total?: number; attempt_id?: string };
    if (session.kind !== 'pay') {
      if (body.currencies !== undefined && body.currencies !== session.currency) throw invalidParam('currencies', 'This page pays in the currency it was opened with.');
      if (body.total !== undefined && body.total !== (session.amount ?? 0)) throw invalidParam('total', 'This page pays the amount it was opened with.');
    }
    const answer = await payWithSession(context, session, {
      cardToken: body.card_token,
      ...(body.currencies ? { currency: body.currencies } : {}),
      ...(body.total !== undefined ? { total: body.total } : {}),
      ...(body.attempt_id !== undefined ? { attemptId: body.attempt_id } : {}),
      ipAddress: request.ip,
    }).catch((error: unknown) => {
      throw renamedParam(error, 'token', 'card_token');
    });
    keepForResume(context, reply, session, token, answer);
    return reply.code(201).header('cache-control', 'no-store').send(answer);
  });

  // The payment request page's currency choice, again: after the payments core refused the
  // converted total it showed because the quote changed (400 on `total`).
  app.get('/hosted/payments/currencies', { schema: currenciesSchema, serializerCompiler: documentedOnly }, async (request, reply) => {
    const session = await requireSession(context, request);
    if (session.kind !== 'pay' || session.amount === null) throw new ApiError(404, 'rest_no_route', 'This page pays in one currency only.');
    const channel = await loadChannel(context.db, { siteId: session.siteId, id: session.channelId });
    if (!channel) throw sessionExpired();
    const currencies = await paymentCurrencyOptions(context, { channel, amount: session.amount, locale: localeOf(parseLanguage(session.language) ?? 'enGB') });
    return reply.header('cache-control', 'no-store').send({ currencies });
  });

  app.get('/hosted/payments/current', { schema: currentSchema, serializerCompiler: documentedOnly }, async (request, reply) => {
    const { session, token } = await requireSessionAndToken(context, request);
    const { attempt_id: attemptId } = request.query as { attempt_id?: string };
    const answer = await currentPayment(context, session, attemptId);
    if (!answer) throw new ApiError(404, 'rest_post_invalid_id', attemptId === undefined ? 'This page has made no payment yet.' : 'This attempt has no recorded outcome yet.');
    keepForResume(context, reply, session, token, answer);
    return reply.header('cache-control', 'no-store').send(answer);
  });

  // Where the bank's 3DS page sends the cardholder back (through /3ds/return), inside the page's
  // challenge iframe: a script tells the page (same origin only), which reads the outcome from the
  // server. Framed by any http(s) page (threeDsReturnFrameAncestors): it also posts only to our own
  // origin. It says the payment is being processed in the page's language (`language`, set by
  // transactionInputOf).
  app.get('/hosted/3ds-return', { schema: threeDsReturnSchema }, async (request, reply) => {
    const { language: asked } = request.query as { language?: unknown };
    const language = parseLanguage(typeof asked === 'string' ? asked : undefined) ?? 'enGB';
    const body = page({
      lang: localeOf(language),
      title: '3-D Secure',
      styles: [sharedAssets.style],
      scripts: [sharedAssets.threeDsReturnScript],
      body: html`<main class="card"><p role="status">${translatorFor(language)('processing')}</p></main>`,
    });
    return sendPage(reply, 200, body, { frameAncestors: threeDsReturnFrameAncestors });
  });
}
