import { Type, type Static } from '@sinclair/typebox';
import { publicBookingStatuses } from '../../domain/booking-status.js';
import { currencyCodes } from '../../domain/money.js';
import { countryCodes, emailAddressPattern, languageCodes, supplierIdPattern } from '../../domain/reference-data.js';
import { CodeEnum, EnumList, IntegerIdList, StringEnum, ValueList, described, isoDateTimeParam, listQueryProperties, publishedFilters } from '../../http/pagination.js';
import { Text } from '../../domain/text.js';
import { limits } from '../../limits.js';
import { calendarDatePattern } from '../../domain/patterns.js';

const dateText = Type.String({ pattern: calendarDatePattern });
const personName = Text({ maxLength: limits.nameLengthMax, kind: 'name' });

const LinkSchema = Type.Object({ href: Type.String() });
const SelfLinkSchema = Type.Object({ href: Type.String(), payment_request: Type.Optional(Type.String()) });

export const BookingSchema = Type.Object({
  id: Type.Integer(),
  uuid: Type.String(),
  trust_id: Type.String(),
  internal_id: Type.Integer(),
  author: Type.String(),
  author_id: Type.Integer(),
  authorname: Type.String(),
  status: StringEnum(publicBookingStatuses),
  title: Type.String(),
  content: Type.String(),
  firstname: Type.String(),
  surname: Type.String(),
  email: Type.String(),
  date: Type.String(),
  date_start: Type.Union([Type.String(), Type.Null()]),
  pax: Type.Union([Type.Integer(), Type.Null()]),
  reference: Type.String(),
  total: Type.Integer(),
  total_unpaid: Type.Integer(),
  currencies: Type.String(),
  country: Type.String(),
  countries: Type.String(),
  transaction_ids: Type.Array(Type.Integer()),
  channels: Type.Integer(),
  language: CodeEnum(languageCodes),
  suppliers: Type.Array(Type.String()),
  created: Type.String(),
  modified: Type.String(),
  _links: Type.Object({ self: Type.Array(SelfLinkSchema), collection: Type.Array(LinkSchema) }),
});
export type BookingWire = Static<typeof BookingSchema>;

/** RO fields of the Booking table: accepted in bodies and ignored (decisions.md). */
const readOnlyFields = {
  id: Type.Optional(Type.Unknown()),
  uuid: Type.Optional(Type.Unknown()),
  trust_id: Type.Optional(Type.Unknown()),
  internal_id: Type.Optional(Type.Unknown()),
  author: Type.Optional(Type.Unknown()),
  author_id: Type.Optional(Type.Unknown()),
  authorname: Type.Optional(Type.Unknown()),
  status: Type.Optional(Type.Unknown()),
  title: Type.Optional(Type.Unknown()),
  total_unpaid: Type.Optional(Type.Unknown()),
  country: Type.Optional(Type.Unknown()),
  transaction_ids: Type.Optional(Type.Unknown()),
  created: Type.Optional(Type.Unknown()),
  modified: Type.Optional(Type.Unknown()),
  _links: Type.Optional(Type.Unknown()),
};

const required = {
  firstname: personName,
  surname: personName,
  email: Type.String({ pattern: emailAddressPattern, maxLength: limits.emailLengthMax }),
  date: dateText,
  total: Type.Integer({ minimum: 0, maximum: limits.amountCentsMax }),
  currencies: CodeEnum(currencyCodes),
  // The spec's list (as documented); a refusal says what a code looks like, not all 249 (describedEnum).
  countries: CodeEnum(countryCodes),
  channels: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
};

const optional = {
  content: Type.Optional(Text({ maxLength: limits.contentLengthMax, kind: 'lines' })),
  date_start: Type.Optional(Type.Union([dateText, Type.Null()])),
  pax: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: limits.paxMax }), Type.Null()])),
  reference: Type.Optional(Text({ maxLength: limits.nameLengthMax, kind: 'line' })),
  language: Type.Optional(CodeEnum(languageCodes)),
  suppliers: Type.Optional(Type.Array(Type.String({ pattern: supplierIdPattern }), { maxItems: limits.bookingSuppliersMax })),
  payment_request_url: Type.Optional(Type.Boolean()),
};

export const BookingCreateBody = Type.Object({ ...required, ...optional, ...readOnlyFields }, { additionalProperties: false });
export type BookingCreateBody = Static<typeof BookingCreateBody>;

export const BookingUpdateBody = Type.Object(
  {
    firstname: Type.Optional(required.firstname),
    surname: Type.Optional(required.surname),
    email: Type.Optional(required.email),
    date: Type.Optional(required.date),
    total: Type.Optional(required.total),
    currencies: Type.Optional(required.currencies),
    countries: Type.Optional(required.countries),
    channels: Type.Optional(required.channels),
    ...optional,
    ...readOnlyFields,
  },
  { additionalProperties: false },
);
export type BookingUpdateBody = Static<typeof BookingUpdateBody>;

/** `payment_request_url=true` may also come as a query parameter of POST/PUT. */
export const PaymentRequestQuery = Type.Object({ payment_request_url: Type.Optional(Type.Boolean()) });

export const bookingOrderbyFields = ['id', 'created', 'modified', 'date', 'date_start', 'total', 'surname', 'reference'] as const;
/** What a `search` should have been (pageRequest's refusal). */
export const bookingSearchFilters = 'surname, email or reference (exact)';

export const BookingListQuery = Type.Object({
  ...listQueryProperties(bookingOrderbyFields, bookingSearchFilters),
  ...publishedFilters,
  status: Type.Optional(described(EnumList(publicBookingStatuses), 'Bookings in these statuses (as `status` shows them), comma-separated.')),
  channels: Type.Optional(described(IntegerIdList, 'Bookings of these channel ids, comma-separated.')),
  countries: Type.Optional(described(ValueList('[A-Z]{2}', 'two-letter country codes in capitals', 2), 'Bookings of these countries (`countries`), comma-separated.')),
  surname: Type.Optional(Text({ maxLength: limits.nameLengthMax, kind: 'line', description: 'Exact surname, case-sensitive.' })),
  email: Type.Optional(Text({ maxLength: limits.emailLengthMax, kind: 'line', description: 'Exact email, A-Z in any case.' })),
  date_before: Type.Optional(described(isoDateTimeParam, 'End date (`date`) strictly before the day of this value.')),
  date_after: Type.Optional(described(isoDateTimeParam, 'End date (`date`) strictly after the day of this value.')),
  reference: Type.Optional(Text({ maxLength: limits.nameLengthMax, kind: 'line', description: 'Exact reference, case-sensitive (one; a reference may hold a comma).' })),
});
export type BookingListQuery = Static<typeof BookingListQuery>;
