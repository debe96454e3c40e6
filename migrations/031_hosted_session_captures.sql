-- Cards a hosted page session has submitted to the capture endpoint (POST .../cards with its
-- token), counted before the card is looked at, so parallel requests cannot pass the bound
-- (limits.hostedCardCapturesPerSessionMax; for the payment request pages of one booking together,
-- limits.payRequestCapturesPerBookingMax). Without it an anonymous page (a payment link) could
-- store cards and mint capture tokens without end.
ALTER TABLE hosted_sessions ADD COLUMN captures integer NOT NULL DEFAULT 0 CHECK (captures >= 0);
