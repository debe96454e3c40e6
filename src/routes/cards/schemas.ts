import { Type, type Static } from '@sinclair/typebox';
import { describedPattern } from '../../domain/patterns.js';
import { countryCodePattern, emailAddressPattern } from '../../domain/reference-data.js';
import { Text } from '../../domain/text.js';
import { holderFieldLengthMax } from '../../domain/hosted/vault-app.js';

const text = (maxLength: number) => Type.Optional(Text({ maxLength, kind: 'line' }));

/** Card details from a hosted page. Never logged (app.ts redacts card_number and cvv too). */
export const CaptureCardBody = Type.Object(
  {
    channels: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Channel the card is vaulted to' }),
    card_number: Type.String({ minLength: 12, maxLength: 23, pattern: describedPattern('^[0-9][0-9 -]*[0-9]$', 'the card number: digits, spaces and dashes allowed'), description: 'Digits; spaces and dashes ignored' }),
    expiry_month: Type.Union([Type.Integer({ minimum: 1, maximum: 12 }), Type.String({ pattern: describedPattern('^(0?[1-9]|1[0-2])$', 'a month from 1 to 12') })]),
    expiry_year: Type.Union([Type.Integer({ minimum: 0, maximum: 2200 }), Type.String({ pattern: describedPattern('^([0-9]{2}|[0-9]{4})$', 'a year of 2 or 4 digits') })]),
    cvv: Type.String({ pattern: describedPattern('^[0-9]{3,4}$', '3 or 4 digits') }),
    name: text(holderFieldLengthMax.name),
    email: Type.Optional(Type.String({ maxLength: holderFieldLengthMax.email, pattern: emailAddressPattern })),
    address: text(holderFieldLengthMax.address),
    city: text(holderFieldLengthMax.city),
    zip: text(holderFieldLengthMax.zip),
    country: Type.Optional(Type.String({ pattern: countryCodePattern })),
  },
  { additionalProperties: false },
);
export type CaptureCardBody = Static<typeof CaptureCardBody>;

export const CapturedCardReply = Type.Object({
  token: Type.String({ description: 'Short-lived capture token; send it as `token` when creating the transaction' }),
  expires_at: Type.String({ format: 'date-time' }),
  card: Type.Object({
    bin: Type.String(),
    last_four: Type.String(),
    card_type: Type.String(),
    expiry_month: Type.String({ description: 'two digits' }),
    expiry_year: Type.Integer(),
    issuer_countries: Type.Union([Type.String(), Type.Null()]),
  }),
});

export const SitePathParams = Type.Object({ path: Type.String({ maxLength: 63 }) });
