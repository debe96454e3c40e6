-- A payment checks its bookings when it is prepared, without locks (prepare.ts: not deleted, on
-- the payment's channel); a DELETE, or a PUT moving the booking to another channel, could commit
-- between that check and the attempt's locks, since neither saw a transaction on the booking
-- yet. The payment was then recorded on a deleted booking (paid, and past any refund, which
-- names the booking) or on a booking now on another channel and currency. The attempt's own
-- statement (bookings_record_attempt, src/domain/transactions/bookings.ts) checks again under the
-- locks and refuses through this function (SQLSTATE TF002), rolling the attempt back.
CREATE FUNCTION refuse_changed_booking(booking_id bigint, change text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'booking % was % while the payment was being prepared', booking_id, change
    USING ERRCODE = 'TF002', DETAIL = json_build_object('booking_id', booking_id, 'change', change)::text;
END
$$;
