-- The over-funding refusal of a payment attempt, raised by the statement that counts it
-- (bookings_record_attempt, src/domain/transactions/bookings.ts) instead of by JavaScript reading
-- its answer: the attempt's COMMIT can then be sent right behind that statement, one round trip
-- less per attempt batch (issue 7, session 19). A COMMIT behind a failed statement only ends the
-- failed transaction, so a refused attempt still writes nothing. SQLSTATE TF001 is trustfare's
-- own (no standard class uses TF); DETAIL carries the booking and its total as JSON for the answer.
CREATE FUNCTION refuse_overfunding(booking_id bigint, booking_total bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'a payment would take booking % above its total', booking_id
    USING ERRCODE = 'TF001', DETAIL = json_build_object('booking_id', booking_id, 'total', booking_total)::text;
END
$$;
