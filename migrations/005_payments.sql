-- Payments core: transactions, their booking shares, the append-only double-entry ledger and
-- idempotency keys (docs/payments.md, docs/ledger.md).

CREATE TABLE transactions (
  id                   bigserial PRIMARY KEY,
  site_id              bigint NOT NULL REFERENCES sites(id),
  -- Our reference at the processor: every processor call for this row is made with it.
  uuid                 uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  channel_id           bigint NOT NULL,
  -- Null only for operator (CLI) records such as chargebacks.
  author_id            bigint REFERENCES users(id),
  -- Who created it: api, modal, vault_app, payment_request, cli.
  source               text NOT NULL DEFAULT 'api',
  type                 text NOT NULL CHECK (type IN ('authorize', 'capture', 'chargeback', 'chargeback-reversal', 'chargeback-override', 'purchase',
                                                     'refund', 'retained_authorize', 'retained_purchase', 'vault', 'void')),
  status               text NOT NULL CHECK (status IN ('complete', 'expired', 'failed', 'incomplete', 'locked', 'pending')),
  total                bigint NOT NULL CHECK (total >= 0),
  currency             char(3) NOT NULL,
  -- Still available for refund, capture, void or reversal; see docs/payments.md.
  total_remaining      bigint NOT NULL DEFAULT 0 CHECK (total_remaining >= 0),
  -- Amount taken from the linked transaction's total_remaining when this row was inserted;
  -- given back if the processor declines (so concurrent follow-ups never over-commit).
  reserved_total       bigint NOT NULL DEFAULT 0 CHECK (reserved_total >= 0),
  linked_id            bigint REFERENCES transactions(id),
  card_id              bigint REFERENCES cards(id),
  token                text,
  processor_reference  text,
  auth_code            text,
  -- The payment gateway's response message (and decline code).
  content              text NOT NULL DEFAULT '',
  decline_code         text,
  psp                  text,
  payment_method       text,
  payee_name           text,
  payee_surname        text,
  payee_email          text,
  country              char(2),
  ip_address           text,
  language             text NOT NULL DEFAULT 'enGB',
  statement_date       date,
  -- Card facts copied at creation (the card row may later be re-vaulted or rotated).
  card_brand           text,
  bin_number           text,
  last_four            text,
  issuer_country       char(2),
  attempt_3ds          boolean NOT NULL DEFAULT false,
  redirect_url         text,
  three_ds_status      text CHECK (three_ds_status IN ('frictionless', 'challenge', 'authenticated', 'failed', 'not_attempted')),
  challenge_url        text,
  -- Reconciliation: look-ups made while the outcome was unknown.
  lookup_attempts      integer NOT NULL DEFAULT 0,
  created_at           timestamptz NOT NULL DEFAULT now(),
  modified_at          timestamptz NOT NULL DEFAULT now(),
  settled_at           timestamptz,
  FOREIGN KEY (site_id, channel_id) REFERENCES channels (site_id, id)
);
CREATE INDEX transactions_site_idx ON transactions (site_id, id);
CREATE INDEX transactions_site_created_idx ON transactions (site_id, created_at);
CREATE INDEX transactions_linked_idx ON transactions (linked_id) WHERE linked_id IS NOT NULL;
CREATE INDEX transactions_channel_idx ON transactions (channel_id);
-- The jobs look only at these two small sets.
CREATE INDEX transactions_pending_idx ON transactions (created_at) WHERE status = 'pending';
CREATE INDEX transactions_incomplete_idx ON transactions (created_at) WHERE status = 'incomplete';

-- The share of a transaction that pays (or refunds) each booking.
CREATE TABLE transaction_bookings (
  transaction_id  bigint NOT NULL REFERENCES transactions(id),
  booking_id      bigint NOT NULL REFERENCES bookings(id),
  total           bigint NOT NULL CHECK (total >= 0),
  -- Of this share: still refundable, capturable or reversible (the per-booking total_remaining).
  total_remaining bigint NOT NULL CHECK (total_remaining >= 0),
  position        smallint NOT NULL,
  PRIMARY KEY (transaction_id, booking_id)
);
CREATE INDEX transaction_bookings_booking_idx ON transaction_bookings (booking_id);

-- Count of linked transactions currently locked by a chargeback (booking status `locked`).
ALTER TABLE bookings ADD COLUMN locked_transactions integer NOT NULL DEFAULT 0 CHECK (locked_transactions >= 0);

-- The ledger: one row per side of a posting. Each money movement writes entries whose debits
-- equal their credits per channel and currency; rows are never changed or removed.
CREATE TABLE ledger_entries (
  id              bigserial PRIMARY KEY,
  site_id         bigint NOT NULL REFERENCES sites(id),
  transaction_id  bigint NOT NULL REFERENCES transactions(id),
  channel_id      bigint NOT NULL REFERENCES channels(id),
  currency        char(3) NOT NULL,
  account         text NOT NULL CHECK (account ~ '^[a-z_]{1,40}$'),
  direction       text NOT NULL CHECK (direction IN ('debit', 'credit')),
  amount          bigint NOT NULL CHECK (amount > 0),
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_entries_transaction_idx ON ledger_entries (transaction_id);
CREATE INDEX ledger_entries_account_idx ON ledger_entries (channel_id, currency, account);

CREATE FUNCTION ledger_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are append-only (% refused)', TG_OP USING ERRCODE = 'restrict_violation';
END $$;

CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_append_only();

-- Checked at commit: the entries of a transaction balance per channel and currency, whatever
-- code wrote them. A second line of defence behind the application's own assertion.
CREATE FUNCTION ledger_entries_assert_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  difference bigint;
BEGIN
  SELECT sum(CASE WHEN direction = 'debit' THEN amount ELSE -amount END) INTO difference
    FROM ledger_entries
   WHERE transaction_id = NEW.transaction_id AND channel_id = NEW.channel_id AND currency = NEW.currency;
  IF difference <> 0 THEN
    RAISE EXCEPTION 'ledger entries of transaction % do not balance for channel % %: debits - credits = %',
      NEW.transaction_id, NEW.channel_id, NEW.currency, difference USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_entries_assert_balanced();

-- Idempotency-Key records, per site (docs/payments.md "Idempotency").
CREATE TABLE idempotency_keys (
  site_id          bigint NOT NULL REFERENCES sites(id),
  key              text NOT NULL,
  -- sha256 of method, route and canonical body: the same key with another request is a conflict.
  request_hash     text NOT NULL,
  status           text NOT NULL CHECK (status IN ('in_flight', 'done')),
  response_status  integer,
  response_headers jsonb,
  response_body    text,
  -- The transaction created under this key, set in the same database transaction as its row.
  transaction_id   bigint REFERENCES transactions(id),
  created_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz,
  PRIMARY KEY (site_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
