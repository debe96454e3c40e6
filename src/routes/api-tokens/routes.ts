import { Type } from '@sinclair/typebox';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { createApiToken, deleteAllApiTokens, deleteApiToken, listApiTokens } from '../../domain/users/api-tokens.js';
import { AccountError } from '../../domain/users/errors.js';
import { principalOf, requireAccess } from '../../http/auth.js';
import { ApiError, invalidId, invalidParam, invalidToken } from '../../http/errors.js';
import { errorResponses } from '../../http/openapi.js';
import { parseItemId } from '../../http/pagination.js';
import { sitePathParams } from '../auth/schemas.js';
import { apiTokenRecordSchema, createApiTokenBody, createdApiTokenSchema, messageSchema, tokenIdParams } from './schemas.js';

const tags = ['API tokens'];

/**
 * The user's own API tokens in the site of the URL. member_admins only (decisions.md: they
 * manage API tokens); read-only users may list but not create or delete.
 */
export async function apiTokenRoutes(app: App, context: AppContext): Promise<void> {
  const { db } = context;
  // onRequest, as every other route: the credential is checked before the body or parameters, so
  // a caller without one learns nothing of this route's validation (401/403 before any 400).
  const onRequest = requireAccess({ db, jwtSecret: context.config.secrets.jwtSecret }, { roles: ['member_admin'] });
  const errors = errorResponses(400, 401, 403, 404, 429);

  app.get(
    '/:path/api-tokens',
    { onRequest, schema: { operationId: 'listApiTokens', summary: "List the caller's API tokens", tags, params: sitePathParams, response: { 200: Type.Array(apiTokenRecordSchema), ...errors } } },
    async (request) => {
      const principal = principalOf(request);
      return listApiTokens(db, { siteId: principal.siteId, userId: principal.userId });
    },
  );

  app.post(
    '/:path/api-tokens',
    {
      onRequest,
      // The answer is the new token in clear: never stored for an Idempotency-Key (the header is
      // ignored; a retry creates another token, the lost one can be listed and deleted).
      config: { idempotencyExempt: true },
      schema: { operationId: 'createApiToken', summary: 'Create an API token (shown once)', tags, params: sitePathParams, body: createApiTokenBody, response: { 201: createdApiTokenSchema, ...errors } },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      try {
        const created = await createApiToken(db, { siteId: principal.siteId, userId: principal.userId, name: request.body.name, expiresAt: request.body.expires_at, now: context.now(), creatorTokenId: principal.apiTokenId });
        void reply.header('cache-control', 'no-store');
        return reply.code(201).send({ token: created.token, expires_at: created.expires_at });
      } catch (error) {
        throw toApiError(error);
      }
    },
  );

  app.delete(
    '/:path/api-tokens/:token_id',
    { onRequest, schema: { operationId: 'deleteApiToken', summary: 'Delete one of your API tokens', tags, params: tokenIdParams, response: { 200: messageSchema, ...errors } } },
    async (request) => {
      const principal = principalOf(request);
      const id = parseItemId(request.params.token_id);
      const deleted = id !== undefined && (await deleteApiToken(db, { siteId: principal.siteId, userId: principal.userId }, id));
      if (!deleted) throw invalidId('API token ID');
      return { message: 'The API token has been deleted.' };
    },
  );

  app.delete(
    '/:path/api-tokens',
    { onRequest, schema: { operationId: 'deleteApiTokens', summary: 'Delete all your API tokens in this site', tags, params: sitePathParams, response: { 200: messageSchema, ...errors } } },
    async (request) => {
      const principal = principalOf(request);
      const count = await deleteAllApiTokens(db, { siteId: principal.siteId, userId: principal.userId });
      return { message: `All your API tokens have been deleted (${count}).` };
    },
  );
}

function toApiError(error: unknown): unknown {
  if (!(error instanceof AccountError)) return error;
  if (error.reason === 'limit') return new ApiError(400, 'rest_invalid_param', error.message, { params: { api_tokens: error.message } });
  if (error.reason === 'invalid') return invalidParam(error.param ?? 'body', error.message);
  // The API token making the request was deleted while it ran: the credential is no longer valid.
  if (error.reason === 'not_found' && error.param === 'token') return invalidToken();
  return error;
}
