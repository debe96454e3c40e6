import { Type, type Static } from '@sinclair/typebox';
import { AllocationInputListSchema, AllocationInputSchema, AllocationOutputSchema, ForexItemSchema, percentTotalRule } from '../../domain/allocations/index.js';
import { currencyCodes } from '../../domain/money.js';
import { countryCodePattern, emailAddressPattern, languageCodes } from '../../domain/reference-data.js';
import { cardBrands } from '../../processor/connector.js';
import { paymentMethods, transactionStatuses, transactionTypes } from '../../domain/transactions/index.js';
import { CodeEnum, EnumList, IntegerIdList, StringEnum, ValueList, described, listQueryProperties, publishedFilters, statementDateParam } from '../../http/pagination.js';
import { limits } from '../../limits.js';
import { describedPattern } from '../../domain/patterns.js';
import { Text } from '../../domain/text.js';

const text = (maxLength: number) => Text({ maxLength, kind: 'line' });
const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const amountOptions = { minimum: 0, maximum: limits.amountCentsMax };
const amount = Type.Integer(amountOptions);
/**
 * Every integer id of a body: ids are bigint in the database, numbers here; beyond
 * Number.MAX_SAFE_INTEGER two ids read as the same number, so such an id is bad input (400 naming
 * the field), never a look-up. Query strings are bounded by their 15-digit pattern (pagination.ts).
 */
const idOptions = { minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const id = Type.Integer(idOptions);

export const TransactionBookingInput = Type.Object(
  { id, currencies: CodeEnum(currencyCodes), total: amount },
  { additionalProperties: false },
);

// The spec's "Allocation input item" with its channel id bounded like the others.
const allocationInputList = Type.Array(Type.Object({ ...AllocationInputSchema.properties, channels: id }, { additionalProperties: false, ...percentTotalRule }), {
  maxItems: AllocationInputListSchema.maxItems,
  description: 'Parts of the payment credited to other channels: `channels`, `currencies`, `total`, `operator` (`flat` cents, or `percent` in basis points).',
});

/** RO fields of the Transaction table: accepted in bodies and ignored (decisions.md). */
const readOnlyFields = Object.fromEntries(
  ['id', 'uuid', 'trust_id', 'author', 'author_id', 'authorname', 'status', 'created', 'modified', 'title', 'total_remaining', 'card_type',
    'card_types', 'statement_date', 'last_four_digits', 'forex', 'forex_id', 'forex_rate', 'payment_ids', 'adjustments', 'content',
    'transaction_type', 'issuer_countries', 'auth_code', 'hash', '_links', 'bin_number'].map((name) => [name, Type.Optional(Type.Unknown())]),
);

/** What POST /transactions needs by type, for the API reference (docs/payments.md "Request bodies"). */
export const transactionCreateDescription = [
  'Which fields each `transaction_types` needs (the missing ones are 400 `rest_missing_callback_param`, naming them):',
  '- `vault`: `channels`, `currencies` (the channel\'s), `total` = 0, `token` (from a hosted page; on test channels a sandbox token such as `tok_visa`).',
  '- `purchase`, `authorize`: `channels`, `currencies`, `total` > 0, `bookings`, `token`.',
  '- `retained_purchase`, `retained_authorize`: `channels`, `currencies`, `total`, `bookings`, and `linked_id` (the vault transaction) or `token` (its vault token).',
  '- `capture`: `channels`, `currencies`, `total` (up to the authorisation\'s `total_remaining`, once), `bookings`, `linked_id` (the authorisation).',
  '- `void`: `channels`, `currencies`, `total` (the authorisation\'s whole `total_remaining`), `bookings`, `linked_id` (the authorisation).',
  '- `refund`: `channels`, `currencies`, `total` (up to the payment\'s `total_remaining`), `bookings`, `linked_id` (a purchase, retained purchase or capture).',
  '- `chargeback`, `chargeback-reversal`, `chargeback-override`: platform operators only (403 otherwise).',
  'Forex: `bookings[].currencies` is the channel currency; the top-level `currencies` is what the cardholder pays in, and `total` the bookings\' total times the rate offered in the channel\'s `forex_feed`.',
].join('\n');

/**
 * POST /transactions. One schema for every type: which fields a type requires is checked by
 * the domain (rest_missing_callback_param naming them), so errors read the same for all types.
 */
export const TransactionCreateBody = Type.Object(
  {
    transaction_types: StringEnum(transactionTypes),
    channels: Type.Optional(Type.Integer({ ...idOptions, description: 'The channel the money moves through.' })),
    currencies: Type.Optional(CodeEnum(currencyCodes, { description: 'The currency the cardholder pays in: the channel currency, or another it offers (forex).' })),
    total: Type.Optional(Type.Integer({ ...amountOptions, description: 'Integer cents of `currencies`: the bookings\' total, times the forex rate when the currencies differ; 0 for a vault.' })),
    bookings: Type.Optional(Type.Array(TransactionBookingInput, { maxItems: limits.bookingsPerTransactionMax, description: 'The bookings paid: `id`, `currencies` (the channel currency) and `total` (cents of it) each.' })),
    linked_id: Type.Optional(Type.Integer({ ...idOptions, description: 'The transaction this one acts on: the vault transaction (retained types), the authorisation (capture, void), the payment (refund).' })),
    // Every kind of card token (capture, vault: 32, sandbox) fits a capture token's bound.
    token: Type.Optional(Type.String({ minLength: 1, maxLength: limits.captureTokenLengthMax, pattern: describedPattern('^[A-Za-z0-9_.~-]+$', 'a token of letters, digits and . _ ~ -'), description: 'The card: a capture token from a hosted page, a vault token (retained types only, instead of `linked_id`), or on test channels a sandbox token such as `tok_visa`. Refused on capture, void and refund, which act on the linked transaction\'s card.' })),
    language: Type.Optional(CodeEnum(languageCodes, { description: 'Language of the receipt; default the linked transaction\'s, else the first booking\'s, else the channel\'s.' })),
    payee_name: Type.Optional(Text({ maxLength: limits.nameLengthMax, kind: 'line', description: 'The payer\'s given name, as on receipts.' })),
    payee_surname: Type.Optional(Text({ maxLength: limits.nameLengthMax, kind: 'line', description: 'The payer\'s surname (the list filter `payee_surname` matches it exactly).' })),
    payee_email: Type.Optional(Type.String({ pattern: emailAddressPattern, maxLength: limits.emailLengthMax, description: 'Where the receipt goes.' })),
    countries: Type.Optional(Type.String({ pattern: countryCodePattern, description: 'The payer\'s country, ISO 3166-1 alpha-2.' })),
    psp: Type.Optional(Text({ maxLength: 100, kind: 'line', description: 'The integrator\'s name for the payment service provider, recorded as sent.' })),
    payment_methods: Type.Optional(StringEnum(paymentMethods, { description: 'credit-card (the default): every transaction created here moves money by card; bank-transfer is refused' })),
    ip_address: Type.Optional(Type.String({ anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }], maxLength: 45, description: 'The cardholder\'s address; default the caller\'s.' } as Parameters<typeof Type.String>[0])),
    attempt_3ds: Type.Optional(Type.Boolean({ description: 'Ask for 3-D Secure (purchase, authorize, vault); refused on retained charges, which are merchant-initiated, and on capture, void and refund' })),
    redirect_url: Type.Optional(Text({ maxLength: limits.redirectUrlLengthMax, kind: 'line', description: 'Where the cardholder\'s browser goes after a 3-D Secure challenge, with `transaction_id` and `status` added.' })),
    // Issue 4: the spec's "Allocation input item" (docs/allocations.md).
    allocations: Type.Optional(allocationInputList),
    ...readOnlyFields,
  },
  { additionalProperties: false },
);
export type TransactionCreateBodyWire = Static<typeof TransactionCreateBody>;

const href = Type.Array(Type.Object({ href: Type.String() }));

export const TransactionSchema = Type.Object({
  id: Type.Integer(),
  uuid: Type.String(),
  trust_id: Type.String(),
  author: nullable(Type.Integer()),
  author_id: nullable(Type.Integer()),
  authorname: Type.String(),
  status: StringEnum(transactionStatuses),
  created: Type.String(),
  modified: Type.String(),
  title: Type.String(),
  total_remaining: Type.Integer(),
  card_type: nullable(StringEnum(cardBrands)),
  card_types: nullable(StringEnum(cardBrands)),
  statement_date: nullable(Type.String()),
  last_four_digits: nullable(Type.String()),
  forex: Type.Array(ForexItemSchema),
  forex_id: nullable(Type.Integer()),
  forex_rate: nullable(Type.String()),
  payment_ids: Type.Array(Type.Integer()),
  adjustments: Type.Array(Type.Integer()),
  content: Type.String(),
  language: CodeEnum(languageCodes),
  channels: Type.Integer(),
  currencies: Type.String(),
  total: Type.Integer(),
  transaction_type: StringEnum(transactionTypes),
  transaction_types: StringEnum(transactionTypes),
  allocations: Type.Array(AllocationOutputSchema),
  bookings: Type.Array(Type.Object({ id: Type.Integer(), total: Type.Integer(), reference: Type.String(), country: Type.String(), channels: Type.String(), currencies: Type.String() })),
  psp: nullable(Type.String()),
  payment_methods: nullable(StringEnum(paymentMethods)),
  payee_name: nullable(Type.String()),
  payee_surname: nullable(Type.String()),
  payee_email: nullable(Type.String()),
  countries: nullable(Type.String()),
  issuer_countries: nullable(Type.String()),
  token: nullable(Type.String()),
  ip_address: nullable(Type.String()),
  bin_number: nullable(Type.String()),
  attempt_3ds: Type.Boolean(),
  redirect_url: nullable(Type.String()),
  linked_id: nullable(Type.Integer()),
  auth_code: nullable(Type.String()),
  hash: Type.String(),
  '3ds_response': nullable(Type.Object({ status: Type.String(), challenge_url: nullable(Type.String()) })),
  api_urls: Type.Object({ self: Type.String(), collection: Type.String() }),
  statement_batches: Type.Array(Type.Unknown()),
  _links: Type.Object({ self: href, collection: href, challenge: Type.Optional(href) }),
});

/** What a `search` should have been (pageRequest's refusal). */
export const transactionSearchFilters = 'payee_surname, payee_email, reference (exact) or last_four_digits';

export const TransactionListQuery = Type.Object({
  ...listQueryProperties(['id', 'date', 'created', 'modified', 'total', 'status', 'statement_date'] as const, transactionSearchFilters),
  ...publishedFilters,
  status: Type.Optional(described(EnumList(transactionStatuses), 'Transactions in these statuses, comma-separated.')),
  channels: Type.Optional(described(IntegerIdList, 'Transactions of these channel ids, comma-separated.')),
  channels_exclude: Type.Optional(described(IntegerIdList, 'Not of these channel ids, comma-separated.')),
  // A card keeps at most its first six digits in clear (shownBinOf): a longer BIN would match
  // nothing, so it is refused rather than answered with [].
  bin_number: Type.Optional(described(
    ValueList('[0-9]{3,6}', 'BINs of 3 to 6 digits as transactions show them (of an 8-digit BIN, send its first six)', 6),
    'Exact `bin_number` (as the transaction shows it: the card\'s first six digits, fewer for a short card number), comma-separated. Of an 8-digit BIN send the first six; 7 or 8 digits are refused, as no stored BIN has them.',
  )),
  countries: Type.Optional(described(ValueList('[A-Z]{2}', 'two-letter country codes in capitals', 2), 'The payer\'s country sent as `countries` with the transaction (not the booking\'s), comma-separated.')),
  currencies: Type.Optional(described(ValueList('[A-Z]{3}', 'three-letter currency codes in capitals', 3), 'Paid in these currencies (`currencies`), comma-separated.')),
  currencies_exclude: Type.Optional(described(ValueList('[A-Z]{3}', 'three-letter currency codes in capitals', 3), 'Not paid in these currencies, comma-separated.')),
  last_four_digits: Type.Optional(described(ValueList('[0-9]{4}', 'last four digits', 4), 'Cards ending in these four digits, comma-separated.')),
  payment_methods: Type.Optional(described(EnumList(paymentMethods), 'These payment methods, comma-separated.')),
  transaction_types: Type.Optional(described(EnumList(transactionTypes), 'These types, comma-separated.')),
  payee_surname: Type.Optional(Text({ maxLength: limits.nameLengthMax, kind: 'line', description: 'Exact `payee_surname`, case-sensitive.' })),
  payee_email: Type.Optional(Text({ maxLength: limits.emailLengthMax, kind: 'line', description: 'Exact `payee_email`, A-Z in any case.' })),
  // Exact, as the bookings list's `reference`: a booking reference may hold commas, so several
  // are asked for by repeating the parameter (`reference=A&reference=B,C`), never split on commas.
  reference: Type.Optional(Type.Array(text(limits.nameLengthMax), {
    maxItems: limits.listFilterValuesMax,
    description: 'Transactions paying a booking with exactly this reference; repeat the parameter for several, as a reference may hold a comma.',
  })),
  statement_date_after: Type.Optional(described(statementDateParam, 'In statements from this day on (its `statement_date` on or after it); an ISO 8601 date or Unix seconds.')),
  statement_date_before: Type.Optional(described(statementDateParam, 'In statements up to this day (its `statement_date` on or before it); an ISO 8601 date or Unix seconds.')),
});
