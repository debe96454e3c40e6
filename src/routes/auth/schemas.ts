import { Type, type Static } from '@sinclair/typebox';
import { limits } from '../../limits.js';
import { describedPattern } from '../../domain/patterns.js';

export const roleSchema = Type.Union([Type.Literal('member_admin'), Type.Literal('member')]);

// No length bounds: a path no site can have (empty, as in `//site-json/...`, or longer than 63
// characters) names no site and is answered as an unknown one (401 at login, 404 at refresh), as
// the REST routes answer it, not with a 400 that would tell such paths apart.
export const sitePathParams = Type.Object({
  path: Type.String({ description: 'The site path (a site has one of 1 to 63 characters).' }),
});

// Unknown fields are refused as in every other body (docs/resources.md): a misspelt `otp` is
// told so instead of answered as if no code had been sent.
export const credentialsBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: limits.emailLengthMax }),
    password: Type.String({ minLength: 1, maxLength: limits.passwordLengthMax }),
    otp: Type.Optional(Type.String({ pattern: describedPattern('^[0-9]{6}$', 'a code of 6 digits'), description: 'Current 6-digit code of the authenticator app; required once two-factor authentication is confirmed.' })),
  },
  { additionalProperties: false },
);
export type CredentialsBody = Static<typeof credentialsBody>;

/** The spec's "Authenticated user object", field for field. */
export const userObjectSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    username: Type.String(),
    user_email: Type.String(),
    user_nicename: Type.String(),
    user_display_name: Type.String(),
    usertype: roleSchema,
    type: roleSchema,
    read_only: Type.Boolean(),
    can_sign_off_payout: Type.Boolean(),
    default_site: Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      path: Type.String(),
      permissions: Type.Array(Type.String(), { description: 'What the membership allows, `<resource>:<read|write>`.' }),
      channel_count: Type.Integer(),
      usertype: roleSchema,
    }),
    site_count: Type.Integer(),
    two_factor_confirmed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    sites: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() })),
    token: Type.String({ description: 'User JWT, valid 15 minutes.' }),
    refresh_token: Type.String({ description: 'Refresh JWT; no expiry, valid until DELETE token/refresh or a password change.' }),
  },
  { description: 'Authenticated user object' },
);

export const cardVaultTokenSchema = Type.Object({ token: Type.String({ description: 'JWT for the vaulting app (`auth` query parameter), valid 15 minutes.' }) });

export const deletedSchema = Type.Object({ deleted: Type.Boolean() });
