-- The over-funding refusal names what can still be paid on the booking now (its total less the
-- money held on it before this attempt: fundingHeldSql's sum without the refused attempt's own
-- share), so the answer says how much a payment may take instead of describing a sum the client
-- would have to work out (src/domain/transactions/bookings.ts, bookings_record_attempt). The
-- two-argument form of migration 023 is dropped: only that statement called it.
CREATE FUNCTION refuse_overfunding(booking_id bigint, booking_total bigint, payable bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'a payment would take booking % above its total', booking_id
    USING ERRCODE = 'TF001', DETAIL = json_build_object('booking_id', booking_id, 'total', booking_total, 'payable', payable)::text;
END
$$;

DROP FUNCTION refuse_overfunding(bigint, bigint);
