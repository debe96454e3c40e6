import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { apiTokenPrefix, looksLikeJwt, verifyJwt } from '../../domain/credentials.js';
import { checkCardVaultUser } from '../../domain/hosted/card-vault-user.js';
import { bearerToken } from '../../http/auth.js';
import { forbidden, invalidId, invalidParam, invalidSite, invalidToken, notLoggedIn } from '../../http/errors.js';
import { attemptRefusal, sessionExpired } from '../../domain/hosted/payments.js';
import { countCardCapture, findHostedSession, looksLikeHostedSessionToken } from '../../domain/hosted/sessions.js';
import { countCardVaultTokenCapture } from '../../domain/hosted/modal-auth-uses.js';
import { loadChannel } from '../../domain/channels.js';

/** Who may post card data: a hosted page acting for one site. */
export interface CardCaptureCaller {
  siteId: number;
  userId: number;
  via: 'cardvaultuser' | 'hosted_session';
}

/** Card capture takes page credentials only, never the API token or JWT the REST API's messages name. */
const cardCaptureNotLoggedIn = 'You are not currently logged in: the card pages send a vaulting-app JWT (from token/cardvaultuser) or their page session in the header Authorization: Bearer <token>.';
const cardCaptureInvalidToken = 'Invalid or expired token: get a new vaulting-app JWT from token/cardvaultuser and open the vaulting app again.';

/**
 * The one place deciding who may submit card data. Card data reaches the service only through
 * its own hosted pages, so only page credentials are accepted: a `cardvaultuser` JWT of the site
 * in the URL (checkCardVaultUser, the vaulting app's own check) or a hosted page session.
 * API tokens and user JWTs are refused with
 * 403 so an integrator's server can never hold card data. Hosted-page session tokens are added
 * here as another accepted credential.
 */
export async function authorizeCardCapture(request: FastifyRequest, context: AppContext): Promise<CardCaptureCaller> {
  const token = bearerToken(request);
  if (!token) throw notLoggedIn(cardCaptureNotLoggedIn);
  const refusal = forbidden('Card details can only be submitted from the hosted card pages (vaulting app, payment modal, payment request page).');
  if (token.startsWith(apiTokenPrefix)) throw refusal;
  if (looksLikeHostedSessionToken(token)) return authorizeHostedSession(request, context, token);
  if (!looksLikeJwt(token)) throw invalidToken(cardCaptureInvalidToken);
  const secret = context.config.secrets.jwtSecret;
  const sitePath = (request.params as { path?: string }).path ?? '';
  const user = await checkCardVaultUser(context.db, { jwtSecret: secret, token, now: context.now(), sitePath });
  if (user.ok) {
    await countTokenCapture(request, context, user);
    return { siteId: user.siteId, userId: user.userId, via: 'cardvaultuser' };
  }
  switch (user.reason) {
    case 'invalid_token':
      if (await verifyJwt(secret, token, 'user', context.now())) throw refusal;
      throw invalidToken(cardCaptureInvalidToken);
    case 'revoked':
      throw invalidToken(cardCaptureInvalidToken);
    // Another site's path, or a user no longer in the site: never confirm the site exists.
    case 'not_member':
      throw invalidSite();
    // Made read-only since the token was issued: capturing a card is a write.
    case 'read_only':
      throw forbidden('Read-only users may only read; card capture stores a card.');
  }
}

/**
 * Counts the card on the token's shared record before the card is looked at, accepted or not
 * (limits.cardVaultCapturesPerTokenMax): a token leaked from a vaulting app URL must not store
 * cards and mint capture tokens without end. The record names a channel, so the body's must be
 * the site's first (the answer captureCard gives another site's channel).
 */
async function countTokenCapture(request: FastifyRequest, context: AppContext, user: { siteId: number; tokenId: string; issuedAt: number }): Promise<void> {
  const channelId = (request.body as { channels: number }).channels;
  if (!(await loadChannel(context.db, { siteId: user.siteId, id: channelId }))) throw invalidId('channel ID');
  const counted = await countCardVaultTokenCapture(context.db, { tokenId: user.tokenId, issuedAt: user.issuedAt, channelId }, context.now());
  if (!counted) throw attemptRefusal('token_captures_exhausted');
}

/**
 * A hosted page session (vaulting app, modal frame, payment request page; `hps_...`): valid only
 * for the site in the URL and for the one channel the page was opened for.
 */
async function authorizeHostedSession(request: FastifyRequest, context: AppContext, token: string): Promise<CardCaptureCaller> {
  const session = await findHostedSession(context.db, token, context.now());
  // The answer the page payment API gives an expired session: the pages capture before they pay,
  // so this is where a page left open past its session learns it (and the modal fires token_error).
  if (!session || session.userId === null) throw sessionExpired();
  const site = await context.db.maybeOne<{ id: number }>('SELECT id FROM sites WHERE path = $1', [(request.params as { path?: string }).path ?? '']);
  if (!site || site.id !== session.siteId) throw invalidSite();
  const channels = (request.body as { channels?: unknown } | undefined)?.channels;
  if (channels !== session.channelId) throw invalidParam('channels', 'This page may only capture cards for the channel it was opened for.');
  // Counted before the card is looked at: an anonymous page (a payment link) must not store
  // cards and mint capture tokens without end, valid card or not.
  const refusal = await countCardCapture(context.db, session.id, context.now());
  if (refusal) throw attemptRefusal(refusal);
  return { siteId: session.siteId, userId: session.userId, via: 'hosted_session' };
}
