import type { FastifyReply } from 'fastify';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { signJwt } from '../../domain/credentials.js';
import { logIn, type LoginResult } from '../../domain/users/login.js';
import { loadProfile, type UserProfile } from '../../domain/users/profile.js';
import { refreshTokenOfLogin, revokeRefreshTokens, verifyRefreshToken } from '../../domain/users/refresh-tokens.js';
import { authenticate, bearerToken } from '../../http/auth.js';
import { ApiError, forbidden, invalidSite, invalidToken, notLoggedIn } from '../../http/errors.js';
import { errorResponses, refreshTokenSecurity } from '../../http/openapi.js';
import { loginRateLimit } from '../../http/rate-limit.js';
import { cardVaultTokenSchema, credentialsBody, deletedSchema, sitePathParams, userObjectSchema, type CredentialsBody } from './schemas.js';

const prefix = '/:path/site-json/jwt-auth/v1';
const tags = ['Authentication'];

/** The JWT endpoints of the spec ("Token endpoints"); decisions in docs/auth.md. */
export async function authRoutes(app: App, context: AppContext): Promise<void> {
  const { db, config } = context;
  const jwtSecret = config.secrets.jwtSecret;
  const loginLimit = loginRateLimit(context);
  const errors = errorResponses(400, 401, 429);

  const checkCredentials = async (sitePath: string, body: CredentialsBody): Promise<{ userId: number; siteId: number; passwordStamp: string; passwordAt: number }> => {
    const result = await logIn(db, { username: body.username, password: body.password, otp: body.otp, sitePath, now: context.now(), signingSecret: config.secrets.signingSecret });
    if (!result.ok) throw loginError(result, sitePath);
    return result;
  };

  // `passwordAt`: the password state the login or refresh token checked; the JWT works while it stands.
  const userObject = async (profile: UserProfile, refreshToken: string, passwordAt: number) => ({
    ...profile,
    token: await signJwt(jwtSecret, { userId: profile.id, kind: 'user', passwordAt }, context.now()),
    refresh_token: refreshToken,
  });

  app.post(
    `${prefix}/token`,
    {
      schema: { operationId: 'createToken', summary: 'Log in: user object with a user JWT and a refresh token', tags, security: [], params: sitePathParams, body: credentialsBody, response: { 200: userObjectSchema, ...errors } },
      onRequest: loginLimit,
    },
    async (request, reply) => {
      const { userId, passwordStamp, passwordAt } = await checkCredentials(request.params.path, request.body);
      const profile = await loadProfile(db, userId, request.params.path);
      if (!profile) throw badCredentials();
      noStore(reply);
      return userObject(profile, await refreshTokenOfLogin(db, { jwtSecret, userId, passwordStamp, now: context.now() }), passwordAt);
    },
  );

  app.post(
    `${prefix}/token/refresh`,
    {
      schema: {
        operationId: 'refreshToken', summary: 'A new user JWT for a refresh token (sent as the bearer token)',
        tags,
        security: refreshTokenSecurity,
        params: sitePathParams,
        response: { 200: userObjectSchema, ...errorResponses(400, 401, 404, 429) },
      },
      onRequest: loginLimit,
    },
    async (request, reply) => {
      const refreshToken = bearerToken(request);
      // No credential at all is the REST API's "not logged in" (decisions.md), as DELETE answers it;
      // a credential that is not a live refresh token is an invalid token.
      if (!refreshToken) throw notLoggedIn('Send the refresh token as the Bearer credential.');
      const holder = await verifyRefreshToken(db, { jwtSecret, token: refreshToken, now: context.now() });
      if (holder === null) throw invalidToken('The refresh token is invalid or has been revoked.');
      const profile = await loadProfile(db, holder.userId, request.params.path);
      if (!profile) throw invalidSite();
      noStore(reply);
      return userObject(profile, refreshToken, holder.passwordAt);
    },
  );

  app.delete(
    `${prefix}/token/refresh`,
    {
      schema: { operationId: 'revokeRefreshTokens', summary: 'Revoke refresh tokens (a new one is issued at the next login)', tags, params: sitePathParams, response: { 200: deletedSchema, ...errorResponses(400, 401, 404, 429) } },
    },
    async (request) => {
      // Any credential of a member may log itself out, read-only users included.
      const principal = await authenticate(request, { db, jwtSecret });
      await revokeRefreshTokens(db, principal.userId);
      return { deleted: true };
    },
  );

  app.post(
    `${prefix}/token/cardvaultuser`,
    {
      schema: { operationId: 'createCardVaultUserToken', summary: 'A JWT for the vaulting app, bound to the site, valid 15 minutes', tags, security: [], params: sitePathParams, body: credentialsBody, response: { 200: cardVaultTokenSchema, ...errorResponses(400, 401, 403, 429) } },
      onRequest: loginLimit,
    },
    async (request, reply) => {
      const { userId, siteId, passwordAt } = await checkCredentials(request.params.path, request.body);
      // The vaulting app writes (stores cards, records vault transactions): not for read-only users.
      const membership = await db.maybeOne<{ read_only: boolean }>('SELECT read_only FROM memberships WHERE site_id = $1 AND user_id = $2', [siteId, userId]);
      if (!membership || membership.read_only) throw forbidden('Read-only users may only read; the vaulting app stores cards.');
      noStore(reply);
      return { token: await signJwt(jwtSecret, { userId, kind: 'cardvaultuser', siteId, passwordAt }, context.now()) };
    },
  );
}

function noStore(reply: FastifyReply): void {
  void reply.header('cache-control', 'no-store');
}

function badCredentials(): ApiError {
  return new ApiError(401, 'rest_not_logged_in', 'The username or password is incorrect.');
}

function loginError(result: Exclude<LoginResult, { ok: true }>, sitePath: string): ApiError {
  switch (result.reason) {
    case 'bad_credentials':
      return badCredentials();
    case 'locked': {
      const minutes = Math.ceil(result.retryAfterSeconds / 60);
      return new ApiError(429, 'rest_too_many_requests', `Too many failed logins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, {}, { 'retry-after': String(result.retryAfterSeconds) });
    }
    case 'otp_required':
      return new ApiError(
        401,
        'rest_not_logged_in',
        // Only a member_admin who is not read-only may create API tokens (docs/auth.md "Roles"): others get theirs from the operator.
        `Two-factor authentication is enabled for this user: send the 6-digit code of the authenticator app as "otp". For integrations, use an API token instead (${result.createsApiTokens ? `POST /${sitePath}/api-tokens` : 'ask the operator: trustfare token create'}).`,
        { two_factor_required: true },
      );
    case 'otp_invalid':
      return new ApiError(401, 'rest_not_logged_in', 'The two-factor code is incorrect, expired or already used.', { two_factor_required: true });
  }
}
