import { Type } from '@sinclair/typebox';
import type { FastifySerializerCompiler } from 'fastify';
import { bookingStatuses } from '../../domain/booking-status.js';
import { StringEnum } from '../../http/pagination.js';
import { BookingSchema } from '../bookings/schemas.js';
import { TransactionSchema } from '../transactions/schemas.js';

/**
 * The answers of the hosted pages' JSON API (the vaulting app, the modal frame and the payment
 * request page call it), for the OpenAPI document. These routes send their answers as built
 * (`documentedOnly`): the pages read every field, and a field missing from a schema must not be
 * dropped silently; test/http/openapi.test.ts checks real answers against these schemas.
 */
export const documentedOnly: FastifySerializerCompiler<unknown> = () => (data) => JSON.stringify(data);

const HostedDeclineSchema = Type.Object({
  code: Type.String({ description: "The gateway's decline code" }),
  message: Type.String({ description: "The gateway's English message, without the code" }),
  reason: Type.String({ description: "The catalogue's reason for the code, in the session's language" }),
});

/** `HostedPaymentAnswer` (src/domain/hosted/payments.ts). */
export const HostedPaymentReply = Type.Object({
  outcome: StringEnum(['complete', 'failed', 'challenge', 'timeout'] as const),
  transaction: TransactionSchema,
  attempts_left: Type.Integer({ minimum: 0 }),
  booking_id: Type.Union([Type.Integer(), Type.Null()]),
  rejected: Type.Optional(Type.Object({ message: Type.String() }, { description: 'Present once the last attempt failed: no further attempts' })),
  challenge_url: Type.Optional(Type.String({ description: 'The 3-D Secure challenge to show (outcome challenge)' })),
  redirect_url: Type.Optional(Type.String({ description: "Vaulting app: where to send the cardholder (the app's `redirect` with the outcome)" })),
  decline: Type.Optional(HostedDeclineSchema),
});

/** `PaymentCurrencyOption` (src/domain/hosted/currencies.ts). */
export const PaymentCurrenciesReply = Type.Object({
  currencies: Type.Array(
    Type.Object({
      currency: Type.String(),
      amount: Type.Integer({ description: 'Minor units of `currency`: what the page sends as `total`' }),
      formatted: Type.String(),
      rate: Type.Union([Type.String(), Type.Null()], { description: 'Units of `currency` per unit of the channel currency; null for the channel currency' }),
      quote_id: Type.Union([Type.Integer(), Type.Null()]),
    }),
  ),
});

/** The modal session opened by the frame (docs/modal.md); its booking may still be a `draft` (unlike the REST API's). */
export const ModalSessionReply = Type.Object({
  session: Type.String({ description: 'The hosted page session (hps_...) for card capture and POST /hosted/payments' }),
  booking_event: StringEnum(['booking_logged', 'booking_exists'] as const),
  booking: Type.Object({ ...BookingSchema.properties, status: StringEnum(bookingStatuses) }),
  amount: Type.Integer(),
  currencies: Type.String(),
  amount_formatted: Type.String(),
  attempts_left: Type.Integer({ minimum: 0 }),
  company: Type.String(),
  test_mode: Type.Boolean(),
  site_path: Type.String(),
  channels: Type.Integer(),
  language: Type.String(),
  cardholder: Type.Record(Type.String(), Type.String()),
  /** A reloaded frame whose earlier session paid the booking: the page reads that payment (GET /hosted/payments/current) instead of taking a card. */
  payment_made: Type.Boolean(),
  /** A reloaded frame whose earlier session's payment awaits its 3DS challenge: the page shows that challenge again (GET /hosted/payments/current) instead of taking a card. */
  payment_pending: Type.Boolean(),
  /** No attempts left (its auth string used them up in earlier sessions): the frame shows the rejection, takes no card and fires transaction_rejected. */
  rejected: Type.Optional(Type.Object({ message: Type.String() })),
});
