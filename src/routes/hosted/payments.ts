import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { findHostedSession, type HostedSession } from '../../domain/hosted/sessions.js';
import { currentPayment, payWithSession } from '../../domain/hosted/payments.js';
import { bearerToken } from '../../http/auth.js';
import { ApiError, invalidParam } from '../../http/errors.js';
import { sharedAssets } from './assets.js';
import { html, page, sendPage } from './html.js';

/** The modal's token_error argument and the answer to any unknown or expired page session. */
export function sessionExpired(): ApiError {
  return new ApiError(403, 'jwt_auth_invalid_request', 'Your session has expired or the authorisation is invalid. Please reopen the payment page.');
}

export async function requireSession(context: AppContext, request: FastifyRequest): Promise<HostedSession> {
  const token = bearerToken(request);
  const session = token ? await findHostedSession(context.db, token, context.now()) : null;
  if (!session) throw sessionExpired();
  return session;
}

const PayBody = Type.Object(
  {
    card_token: Type.String({ minLength: 1, maxLength: 2048 }),
    currencies: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$' })),
  },
  { additionalProperties: false },
);

/**
 * The page payment API: what the vaulting app, the modal frame and the payment request page
 * call with their session token after capturing the card. Not part of the REST API: it exists
 * only for our own pages (same origin, no CORS).
 */
export async function hostedPaymentRoutes(app: App, context: AppContext): Promise<void> {
  app.post('/hosted/payments', { schema: { body: PayBody } }, async (request, reply) => {
    const session = await requireSession(context, request);
    const body = request.body as { card_token: string; currencies?: string };
    if (body.currencies !== undefined && session.kind !== 'pay' && body.currencies !== session.currency) {
      throw invalidParam('currencies', 'This page pays in the currency it was opened with.');
    }
    const answer = await payWithSession(context, session, { cardToken: body.card_token, ...(body.currencies ? { currency: body.currencies } : {}), ipAddress: request.ip });
    return reply.code(201).header('cache-control', 'no-store').send(answer);
  });

  app.get('/hosted/payments/current', async (request, reply) => {
    const session = await requireSession(context, request);
    const answer = await currentPayment(context, session);
    if (!answer) throw new ApiError(404, 'rest_post_invalid_id', 'This page has made no payment yet.');
    return reply.header('cache-control', 'no-store').send(answer);
  });

  // Where the bank's 3DS page sends the cardholder back (inside the page's challenge iframe or
  // the modal's challenge window): a script tells the page, which reads the outcome.
  app.get('/hosted/3ds-return', async (_request, reply) => {
    const body = page({
      lang: 'en',
      title: '3-D Secure',
      styles: [sharedAssets.style],
      scripts: [sharedAssets.threeDsReturnScript],
      body: html`<main class="card"><p role="status">…</p></main>`,
    });
    return sendPage(reply, 200, body, { frameAncestors: "'self'" });
  });
}
