import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { apiTokenPrefix, looksLikeJwt, verifyJwt } from '../../domain/credentials.js';
import { bearerToken } from '../../http/auth.js';
import { forbidden, invalidId, invalidToken, notLoggedIn } from '../../http/errors.js';

/** Who may post card data: a hosted page acting for one site. */
export interface CardCaptureCaller {
  siteId: number;
  userId: number;
  via: 'cardvaultuser';
}

/**
 * The one place deciding who may submit card data. Card data reaches the service only through
 * its own hosted pages, so only page credentials are accepted: today a `cardvaultuser` JWT of
 * the site in the URL (whose user is still a member). API tokens and user JWTs are refused with
 * 403 so an integrator's server can never hold card data. Hosted-page session tokens are added
 * here as another accepted credential.
 */
export async function authorizeCardCapture(request: FastifyRequest, context: AppContext): Promise<CardCaptureCaller> {
  const token = bearerToken(request);
  if (!token) throw notLoggedIn();
  const refusal = forbidden('Card details can only be submitted from the hosted card pages (vaulting app, payment modal, payment request page).');
  if (token.startsWith(apiTokenPrefix)) throw refusal;
  if (!looksLikeJwt(token)) throw invalidToken();
  const secret = context.config.secrets.jwtSecret;
  const claims = await verifyJwt(secret, token, 'cardvaultuser', context.now());
  if (!claims) {
    if (await verifyJwt(secret, token, 'user', context.now())) throw refusal;
    throw invalidToken();
  }
  const sitePath = (request.params as { path?: string }).path ?? '';
  const site = await context.db.maybeOne<{ id: number }>(
    'SELECT s.id FROM sites s JOIN memberships m ON m.site_id = s.id AND m.user_id = $2 WHERE s.path = $1',
    [sitePath, claims.userId],
  );
  // Another site's path, or a user no longer in the site: never confirm the site exists.
  if (!site || site.id !== claims.siteId) throw invalidId('site');
  return { siteId: site.id, userId: claims.userId, via: 'cardvaultuser' };
}
