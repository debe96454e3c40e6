import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { currentBookingStatus, currentBookingStatusSql, gmtDate } from '../../domain/booking-status.js';
import {
  bookingFrom, bookingFromJsonRow, bookingFromRow, bookingJsonSelect, bookingSelect, bookingTitle, bookingTotalUnpaid, bookingTrustId, createBooking, deleteBooking, loadBooking, updateBooking,
  type BookingJsonRow, type BookingPatch, type BookingRecord, type BookingRow,
} from '../../domain/bookings.js';
import { paymentRequestUrl } from '../../domain/payment-request-link.js';
import type { Queryable } from '../../storage/db.js';
import { AuthorNameMemory } from '../../domain/users/author-names.js';
import { siteApiErrors } from '../../http/openapi.js';
import { principalOf, requireAccess, requireAccessWithRead } from '../../http/auth.js';
import { conflict, invalidId, invalidParams } from '../../http/errors.js';
import { createdForKey, type ResourceAnswer } from '../../http/idempotency.js';
import {
  ItemParams, SiteParams, WhereBuilder, apiPrefix, codePointOrder, fetchPage, integerIds, isoCalendarDate, listValues, orderBySql, pageRequest, parseItemId, publishedRange, setPaginationHeaders, createdLocationHeader, siteApiUrl,
} from '../../http/pagination.js';
import { BookingCreateBody, BookingListQuery, bookingSearchFilters, BookingSchema, BookingUpdateBody, PaymentRequestQuery, type BookingWire } from './schemas.js';

const tags = ['Bookings'];
const errors = siteApiErrors;

const DeletedSchema = Type.Object({ deleted: Type.Boolean() });

const orderColumns: Record<string, string> = {
  id: 'b.id',
  created: 'b.created_at',
  modified: 'b.modified_at',
  date: 'b.date_end',
  date_start: 'b.date_start',
  total: 'b.total',
  surname: codePointOrder('b.surname'),
  reference: codePointOrder('b.reference'),
};

export async function bookingRoutes(app: App, context: AppContext): Promise<void> {
  const auth = { db: context.db, jwtSecret: context.config.secrets.jwtSecret };
  // Members and member_admins read and write; read-only users are held to GET by requireAccess.
  const access = requireAccess(auth);
  // GET bookings/{id} authenticates and reads the booking in one statement (issue 7).
  // The booking comes as one JSON column (bookingJsonSelect): the cheapest row to parse. Its
  // author's names come from this process's memory, valid for the epoch the statement read.
  const accessWithBooking = requireAccessWithRead<BookingJsonRow>(auth, {
    name: 'booking_json_by_id',
    sql: `SELECT b.site_id AS booking_site_id, ${bookingJsonSelect} FROM bookings b WHERE b.id = $3 AND b.deleted_at IS NULL`,
    // Another site's booking is not found (404), exactly like a missing one.
    on: 'item.booking_site_id = auth.auth_site_id',
    // A malformed id reads nothing (id 0 never exists) and answers 404 like an unknown one.
    values: (request) => [parseItemId((request.params as { id?: string }).id ?? '') ?? 0],
    found: (row) => row.booking !== null,
  });
  const authorNames = new AuthorNameMemory();
  const base = `${apiPrefix}/bookings`;
  const today = () => gmtDate(context.now());

  app.get(base, { onRequest: access, schema: { operationId: 'listBookings', summary: 'List bookings', tags, params: SiteParams, querystring: BookingListQuery, response: { ...errors, 200: Type.Array(BookingSchema) } } }, async (request, reply) => {
    const principal = principalOf(request);
    const query = request.query;
    const page = pageRequest(query, bookingSearchFilters);
    const where = new WhereBuilder().and`b.site_id = ${principal.siteId}`.and`b.deleted_at IS NULL`.scope();
    const published = publishedRange(query);
    where
      .andIf(integerIds('include', query.include), (w, ids) => w.and`b.id = ANY(${ids}::bigint[])`)
      .andIf(integerIds('exclude', query.exclude), (w, ids) => w.and`b.id <> ALL(${ids}::bigint[])`)
      .andIf(published.beforeUntil, (w, instant) => w.and`b.created_at < ${instant}`)
      .andIf(published.afterFrom, (w, instant) => w.and`b.created_at >= ${instant}`)
      .andIf(listValues('status', query.status), (w, statuses) => w.raw(`${currentBookingStatusSql('b', w.param(today()))} = ANY(${w.param(statuses)}::text[])`))
      .andIf(integerIds('channels', query.channels), (w, ids) => w.and`b.channel_id = ANY(${ids}::bigint[])`)
      .andIf(listValues('countries', query.countries), (w, countries) => w.and`b.country = ANY(${countries}::text[])`)
      // Compared in "C", as they sort (codePointOrder): the same equality, and the index of both (migration 056).
      .andIf(query.surname, (w, surname) => w.and`b.surname COLLATE "C" = ${surname}`)
      .andIf(query.email, (w, email) => w.and`lower(b.email COLLATE "C") = lower(${email}::text COLLATE "C")`)
      .andIf(isoCalendarDate('date_before', query.date_before), (w, date) => w.and`b.date_end < ${date}::date`)
      .andIf(isoCalendarDate('date_after', query.date_after), (w, date) => w.and`b.date_end > ${date}::date`)
      .andIf(query.reference, (w, reference) => w.and`b.reference COLLATE "C" = ${reference}`);
    const result = await fetchPage<BookingRow>(context.db, {
      select: bookingSelect,
      from: bookingFrom,
      // Every booking has its author (a NOT NULL foreign key): the join cannot change the count.
      countFrom: 'bookings b',
      pageKey: 'b.id',
      siteTotal: { relation: 'bookings', siteId: principal.siteId },
      where,
      orderBy: orderBySql(orderColumns, query.orderby ?? 'id', page.order, 'b.id'),
      page,
    });
    setPaginationHeaders(reply, request, { baseUrl: context.config.baseUrl, total: result.total, page });
    return result.rows.map((row) => bookingToWire(context, request, bookingFromRow(row)));
  });

  app.get(`${base}/:id`, { onRequest: accessWithBooking.hook, schema: { operationId: 'getBooking', summary: 'Get a booking', tags, params: ItemParams, response: { ...errors, 200: BookingSchema } } }, async (request) => {
    const read = accessWithBooking.readOf(request);
    if (!read) throw invalidId('booking ID');
    const authorId = read.row.booking.author_id;
    const author = authorNames.known(authorId, read.epoch) ?? (await authorNames.read(context.db, authorId));
    return bookingToWire(context, request, bookingFromJsonRow(read.row, author));
  });

  const wantsLink = (request: FastifyRequest) => {
    const { body, query } = request as FastifyRequest<{ Body: { payment_request_url?: boolean }; Querystring: { payment_request_url?: boolean } }>;
    return body.payment_request_url === true || query.payment_request_url === true;
  };
  // A key left in flight after the booking was created is answered with the booking as it is now.
  const createdBooking: ResourceAnswer = async (request, reply, id) => {
    const booking = await loadBooking(context.db, { siteId: principalOf(request).siteId, id });
    if (!booking) return undefined;
    const wire = bookingToWire(context, request, booking, { paymentRequest: wantsLink(request) });
    return answerCreated(reply, wire).serialize(wire) as string;
  };
  app.post(
    base,
    {
      onRequest: access,
      config: { idempotencyResource: createdBooking, idempotencyEffectNoted: true },
      schema: { operationId: 'createBooking', summary: 'Create a booking', tags, params: SiteParams, querystring: PaymentRequestQuery, body: BookingCreateBody, response: { ...errors, 201: { ...BookingSchema, headers: createdLocationHeader } } },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      const fields: BookingBodyFields = body;
      const input = {
        firstname: body.firstname.trim(),
        surname: body.surname.trim(),
        email: body.email,
        dateEnd: body.date,
        total: body.total,
        currency: body.currencies,
        country: body.countries,
        channelId: body.channels,
        ...bookingPatch(fields),
      };
      // One statement (createBooking): no explicit transaction, no extra round trips, unless an
      // Idempotency-Key is to be told what it created (createdForKey).
      const create = (db: Queryable) => createBooking(db, { siteId: principal.siteId, authorId: principal.userId, input });
      const result = await createdForKey(context.db, request, create, (created) => ('params' in created ? undefined : created.id));
      if ('params' in result) throw invalidParams(result.params);
      const wire = bookingToWire(context, request, result, { paymentRequest: wantsLink(request) });
      return answerCreated(reply, wire).send(wire);
    },
  );

  app.put(
    `${base}/:id`,
    { onRequest: access, schema: { operationId: 'updateBooking', summary: 'Update a booking', tags, params: ItemParams, querystring: PaymentRequestQuery, body: BookingUpdateBody, response: { ...errors, 200: BookingSchema } } },
    async (request) => {
      const principal = principalOf(request);
      const id = parseItemId(request.params.id);
      const body = request.body;
      const fields: BookingBodyFields = body;
      const patch: BookingPatch = {
        ...bookingPatch(fields),
        ...(body.firstname !== undefined ? { firstname: body.firstname.trim() } : {}),
        ...(body.surname !== undefined ? { surname: body.surname.trim() } : {}),
        ...(body.email !== undefined ? { email: body.email } : {}),
        ...(body.date !== undefined ? { dateEnd: body.date } : {}),
        ...(body.total !== undefined ? { total: body.total } : {}),
        ...(body.currencies !== undefined ? { currency: body.currencies } : {}),
        ...(body.countries !== undefined ? { country: body.countries } : {}),
        ...(body.channels !== undefined ? { channelId: body.channels } : {}),
      };
      const result = id === undefined ? undefined : await context.db.transaction((tx) => updateBooking(tx, { siteId: principal.siteId, id, patch, today: today() }));
      if (!result) throw invalidId('booking ID');
      if ('params' in result) throw invalidParams(result.params);
      const wantsLink = body.payment_request_url === true || request.query.payment_request_url === true;
      return bookingToWire(context, request, result, { paymentRequest: wantsLink });
    },
  );

  app.delete(`${base}/:id`, { onRequest: access, schema: { operationId: 'deleteBooking', summary: 'Delete a booking without transactions', tags, params: ItemParams, response: { ...errors, 200: DeletedSchema } } }, async (request) => {
    const principal = principalOf(request);
    const id = parseItemId(request.params.id);
    const result = id === undefined ? 'not_found' : await context.db.transaction((tx) => deleteBooking(tx, { siteId: principal.siteId, id }));
    if (result === 'not_found') throw invalidId('booking ID');
    if (result === 'has_transactions') throw conflict('rest_booking_has_transactions', 'The booking has transactions and is kept as their record; it cannot be deleted.');
    return { deleted: true };
  });
}

/** Optional fields both bodies share, as a plain type (keeps the type provider's inference shallow). */
interface BookingBodyFields {
  content?: string;
  date_start?: string | null;
  pax?: number | null;
  reference?: string;
  language?: string;
  suppliers?: string[];
}

function bookingPatch(body: BookingBodyFields): BookingPatch {
  const patch: BookingPatch = {};
  if (body.content !== undefined) patch.content = body.content;
  if (body.date_start !== undefined) patch.dateStart = body.date_start;
  if (body.pax !== undefined) patch.pax = body.pax;
  if (body.reference !== undefined) patch.reference = body.reference;
  if (body.language !== undefined) patch.language = body.language;
  if (body.suppliers !== undefined) patch.suppliers = body.suppliers;
  return patch;
}

/** 201 naming the new booking in `Location`, as the first answer and a replayed key's give it. */
function answerCreated(reply: FastifyReply, booking: BookingWire): FastifyReply {
  return reply.code(201).header('location', booking._links.self[0]!.href);
}

/** The Booking table on the wire, with `_links` (and a payment request link when asked for). */
export function bookingToWire(context: AppContext, request: FastifyRequest, booking: BookingRecord, options: { paymentRequest?: boolean; showDraft?: boolean } = {}): BookingWire {
  const principal = principalOf(request);
  const collection = siteApiUrl({ baseUrl: context.config.baseUrl, sitePath: principal.sitePath, collection: 'bookings' });
  const self: BookingWire['_links']['self'][number] = { href: `${collection}/${booking.id}` };
  if (options.paymentRequest) {
    self.payment_request = paymentRequestUrl({ baseUrl: context.config.baseUrl, secret: context.config.secrets.signingSecret, siteId: booking.siteId, bookingId: booking.id, dateEnd: booking.dateEnd, issuedAt: context.now() });
  }
  return {
    id: booking.id,
    uuid: booking.uuid,
    trust_id: bookingTrustId(booking),
    internal_id: booking.id,
    author: booking.authorUsername,
    author_id: booking.authorId,
    authorname: booking.authorName,
    // `draft` goes out only to the modal's callbacks (showDraft), outside BookingSchema's REST enum.
    status: currentBookingStatus(booking.status, booking.dateEnd, gmtDate(context.now()), { showDraft: options.showDraft ?? false }) as BookingWire['status'],
    title: bookingTitle(booking),
    content: booking.content,
    firstname: booking.firstname,
    surname: booking.surname,
    email: booking.email,
    date: booking.dateEnd,
    date_start: booking.dateStart,
    pax: booking.pax,
    reference: booking.reference,
    total: booking.total,
    total_unpaid: bookingTotalUnpaid(booking),
    currencies: booking.currency,
    country: booking.country,
    countries: booking.country,
    transaction_ids: booking.transactionIds,
    channels: booking.channelId,
    language: booking.language,
    suppliers: booking.suppliers,
    created: booking.created,
    modified: booking.modified,
    _links: { self: [self], collection: [{ href: collection }] },
  };
}
