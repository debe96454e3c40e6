import { Type, type Static } from '@sinclair/typebox';
import { limits } from '../../limits.js';
import { Text } from '../../domain/text.js';

export const apiTokenRecordSchema = Type.Object(
  {
    id: Type.Integer(),
    tokenable_type: Type.String({ description: 'Always `user`.' }),
    tokenable_id: Type.Integer({ description: 'The user id.' }),
    name: Type.String(),
    abilities: Type.Array(Type.String()),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'ISO 8601 UTC; refreshed at most once a minute.' }),
    expires_at: Type.Union([Type.String({ format: 'date' }), Type.Null()], { description: 'The token works until 23:59:59 GMT that day.' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { description: 'API token record' },
);

// The spec's two input fields. Anything else is refused by name: a client asking for
// `abilities: ["read"]` must learn that tokens carry every ability of their user (`["*"]`), not
// receive a full-access token believing it read-only.
export const createApiTokenBody = Type.Object(
  {
    name: Text({ maxLength: limits.nameLengthMax, kind: 'name' }),
    // Bounded, but above a date-time's length: a client sending `2030-01-01T00:00:00Z` is told the
    // format it needs (createApiToken), not the schema's "must NOT have more than 10 characters".
    expires_at: Type.Optional(Type.Union([Type.String({ description: '`Y-m-d`, today or later (GMT). Required when the request is made with an API token that expires, and at most its `expires_at`: a token creates none that outlives it.', maxLength: 40 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateApiTokenBody = Static<typeof createApiTokenBody>;

export const createdApiTokenSchema = Type.Object({
  token: Type.String({ description: 'The API token (tfat_...). Shown only in this response.' }),
  expires_at: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
});

export const tokenIdParams = Type.Object({
  path: Type.String({ minLength: 1, maxLength: 63 }),
  // Text, so a malformed or over-long id is a 404 like an unknown one, as on every item route (ItemParams).
  token_id: Type.String(),
});

export const messageSchema = Type.Object({ message: Type.String() });
