import { Type, type Static } from '@sinclair/typebox';
import { accountModes, accountTypes, channelStatuses, protectionTypes, selfServiceAccountModes, settlementCurrencies, statementPeriods } from '../../domain/channels.js';
import { currencyCodes } from '../../domain/money.js';
import { emailListPattern, languageCodes } from '../../domain/reference-data.js';
import { CodeEnum, EnumList, StringEnum, ValueList, described, listQueryProperties, wildcardDescription } from '../../http/pagination.js';
import { Text } from '../../domain/text.js';
import { limits } from '../../limits.js';

const text = (maxLength: number) => Text({ maxLength, kind: 'line' });
const emailList = Type.String({ pattern: emailListPattern, maxLength: limits.emailListLengthMax });

export const ForexRateSchema = Type.Object({
  symbol: Type.String(),
  quote_id: Type.Integer(),
  rate: Type.Number(),
  provider: Type.String(),
  expires: Type.String(),
  modified: Type.String(),
});

export const ForexFeedSchema = Type.Object({
  base: Type.String(),
  symbol: Type.Object({ grapheme: Type.String(), template: Type.String(), rtl: Type.Boolean() }),
  rates: Type.Record(Type.String(), ForexRateSchema),
});

export const ChannelSchema = Type.Object({
  id: Type.Integer(),
  uuid: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  account_type: StringEnum(accountTypes),
  account_mode: StringEnum(accountModes),
  protection_type: StringEnum(protectionTypes),
  currencies: Type.String(),
  quote_code: Type.String(),
  statement_period: StringEnum(statementPeriods),
  cardholder_present: Type.Boolean(),
  forex_feed: ForexFeedSchema,
  language: CodeEnum(languageCodes),
  primary_mail: Type.String(),
  mail_bcc_transactional_mails: Type.Boolean(),
  mail_failures: Type.Boolean(),
  receipt_label: Type.String(),
  server_to_server: Type.Boolean(),
  vaultprovider_id: Type.String(),
  vaultprovider_api_key: Type.String(),
  beneficiary_id: Type.String(),
  settlement_currency: Type.Union([CodeEnum(settlementCurrencies), Type.Null()]),
  external_id: Type.String(),
  chargeback_mail: Type.String(),
  payout_minimum: Type.Integer(),
  descriptor: Type.Union([Type.String(), Type.Null()]),
  channel_secret: Type.String(),
  channel_status: StringEnum(channelStatuses),
  suppliers: Type.Array(Type.String()),
});
export type ChannelWire = Static<typeof ChannelSchema>;

/** RO fields of the Channel table: accepted in bodies and ignored (decisions.md). */
const readOnlyFields = {
  id: Type.Optional(Type.Unknown()),
  uuid: Type.Optional(Type.Unknown()),
  slug: Type.Optional(Type.Unknown()),
  account_type: Type.Optional(Type.Unknown()),
  protection_type: Type.Optional(Type.Unknown()),
  quote_code: Type.Optional(Type.Unknown()),
  statement_period: Type.Optional(Type.Unknown()),
  cardholder_present: Type.Optional(Type.Unknown()),
  forex_feed: Type.Optional(Type.Unknown()),
  server_to_server: Type.Optional(Type.Unknown()),
  beneficiary_id: Type.Optional(Type.Unknown()),
  settlement_currency: Type.Optional(Type.Unknown()),
  payout_minimum: Type.Optional(Type.Unknown()),
  descriptor: Type.Optional(Type.Unknown()),
  channel_secret: Type.Optional(Type.Unknown()),
  channel_status: Type.Optional(Type.Unknown()),
  suppliers: Type.Optional(Type.Unknown()),
};

const writableFields = {
  name: Text({ maxLength: limits.nameLengthMax, kind: 'name' }),
  currencies: CodeEnum(currencyCodes),
  account_mode: StringEnum(selfServiceAccountModes),
  language: CodeEnum(languageCodes),
  primary_mail: emailList,
  mail_bcc_transactional_mails: Type.Boolean(),
  mail_failures: Type.Boolean(),
  // null (or an empty string) restores the default, the site name.
  receipt_label: Type.Union([text(limits.nameLengthMax), Type.Null()]),
  external_id: text(limits.nameLengthMax),
  chargeback_mail: emailList,
  vaultprovider_id: text(limits.nameLengthMax),
  vaultprovider_api_key: Text({ maxLength: limits.nameLengthMax, kind: 'line', description: 'Answers show it masked (`****` and its last four characters, `****` for a key under 12); the mask sent back leaves the stored key as it is, `""` clears it.' }),
};

export const ChannelCreateBody = Type.Object(
  {
    name: writableFields.name,
    currencies: writableFields.currencies,
    account_mode: Type.Optional(writableFields.account_mode),
    language: Type.Optional(writableFields.language),
    primary_mail: Type.Optional(writableFields.primary_mail),
    mail_bcc_transactional_mails: Type.Optional(writableFields.mail_bcc_transactional_mails),
    mail_failures: Type.Optional(writableFields.mail_failures),
    receipt_label: Type.Optional(writableFields.receipt_label),
    external_id: Type.Optional(writableFields.external_id),
    chargeback_mail: Type.Optional(writableFields.chargeback_mail),
    vaultprovider_id: Type.Optional(writableFields.vaultprovider_id),
    vaultprovider_api_key: Type.Optional(writableFields.vaultprovider_api_key),
    ...readOnlyFields,
  },
  { additionalProperties: false },
);
export type ChannelCreateBody = Static<typeof ChannelCreateBody>;

export const ChannelUpdateBody = Type.Partial(ChannelCreateBody, { additionalProperties: false });
export type ChannelUpdateBody = Static<typeof ChannelUpdateBody>;

export const channelOrderbyFields = ['id', 'name', 'slug', 'currencies', 'account_mode', 'external_id'] as const;
/** What a `search` should have been (pageRequest's refusal). */
export const channelSearchFilters = 'name (wildcard), external_id or currencies';

export const ChannelListQuery = Type.Object({
  ...listQueryProperties(channelOrderbyFields, channelSearchFilters),
  account_mode: Type.Optional(described(EnumList(accountModes), 'Channels in these modes, comma-separated.')),
  account_type: Type.Optional(described(EnumList(accountTypes), 'Channels of these account types, comma-separated.')),
  currencies: Type.Optional(described(ValueList('[A-Za-z]{1,3}', 'currency codes or parts of them (1 to 3 letters)', 3), 'Base currency containing this text, any case (`US` finds `USD`); several comma-separated.')),
  external_id: Type.Optional(Text({ maxLength: limits.nameLengthMax, kind: 'line', description: 'Exact `external_id`.' })),
  name: Type.Optional(Text({ maxLength: limits.nameLengthMax, kind: 'line', description: wildcardDescription('name') })),
  statement_period: Type.Optional(described(EnumList(statementPeriods), 'Channels with these statement periods, comma-separated.')),
});
export type ChannelListQuery = Static<typeof ChannelListQuery>;
