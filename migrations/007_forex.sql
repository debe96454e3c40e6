-- Forex rate quotes, cross-site allocation grants (issue 4). See docs/forex.md and
-- docs/allocations.md.

-- One quoted rate: `rate` units of `currency` buy one unit of `base`. The id is the `quote_id`
-- integrators see in forex_feed and on forex transactions; rows are never updated, so a
-- transaction's quote stays readable after newer quotes arrive. Operator-loaded quotes (any
-- provider name but 'sandbox') take precedence; the sandbox provider writes one row per pair and
-- GMT day for test channels.
CREATE TABLE rate_quotes (
  id           bigserial PRIMARY KEY,
  base         char(3) NOT NULL,
  currency     char(3) NOT NULL,
  rate         numeric NOT NULL CHECK (rate > 0),
  provider     text NOT NULL CHECK (provider ~ '^[a-z0-9][a-z0-9_.-]{0,39}$'),
  expires_at   timestamptz NOT NULL,
  modified_at  timestamptz NOT NULL DEFAULT now(),
  CHECK (base <> currency),
  CHECK (expires_at > modified_at)
);
-- The current quote of a pair is the newest loaded row.
CREATE INDEX rate_quotes_pair_idx ON rate_quotes (base, currency, id DESC) WHERE provider <> 'sandbox';
CREATE UNIQUE INDEX rate_quotes_sandbox_day_idx ON rate_quotes (base, currency, modified_at) WHERE provider = 'sandbox';

-- Operator-recorded consent: channels of from_site may allocate funds to channels of to_site.
-- Within one site no grant is needed.
CREATE TABLE allocation_grants (
  from_site_id  bigint NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
  to_site_id    bigint NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (from_site_id, to_site_id),
  CHECK (from_site_id <> to_site_id)
);
CREATE INDEX allocation_grants_to_idx ON allocation_grants (to_site_id);

-- Forex facts of a transaction (all null without forex): the quote and rate used, and the
-- same money in the channel currency (`total`/`currency` stay what the cardholder paid).
ALTER TABLE transactions
  ADD COLUMN forex_quote_id    bigint REFERENCES rate_quotes(id),
  ADD COLUMN forex_rate        numeric CHECK (forex_rate > 0),
  ADD COLUMN channel_currency  char(3),
  ADD COLUMN channel_total     bigint CHECK (channel_total >= 0),
  ADD CONSTRAINT transactions_forex_all_or_none CHECK (
    (forex_rate IS NULL) = (channel_total IS NULL) AND (forex_rate IS NULL) = (channel_currency IS NULL) AND (forex_rate IS NULL) = (forex_quote_id IS NULL));

-- Ledger entries of a forex transaction also keep the amount in the paid currency.
ALTER TABLE ledger_entries
  ADD COLUMN paid_currency  char(3),
  ADD COLUMN paid_amount    bigint CHECK (paid_amount >= 0),
  ADD CONSTRAINT ledger_entries_paid_both CHECK ((paid_currency IS NULL) = (paid_amount IS NULL));

-- Allocations of a transaction's money to other channels, and their reversals.
CREATE TABLE allocations (
  id                bigserial PRIMARY KEY,
  site_id           bigint NOT NULL REFERENCES sites(id),
  transaction_id    bigint NOT NULL REFERENCES transactions(id),
  from_channel_id   bigint NOT NULL REFERENCES channels(id),
  to_channel_id     bigint NOT NULL REFERENCES channels(id),
  -- Set on a reversal row (written by a refund or void): the allocation it takes money back from.
  reverses_id       bigint REFERENCES allocations(id),
  -- false: planned on an authorisation and moved no money; its capture writes applied rows.
  applied           boolean NOT NULL,
  operator          text NOT NULL CHECK (operator IN ('flat', 'percent')),
  value             bigint NOT NULL CHECK (value > 0),
  currency          char(3) NOT NULL,
  total             bigint NOT NULL CHECK (total >= 0),
  paid_currency     char(3) NOT NULL,
  paid_total        bigint NOT NULL CHECK (paid_total >= 0),
  channel_currency  char(3) NOT NULL,
  channel_total     bigint NOT NULL CHECK (channel_total >= 0),
  -- On an applied allocation: how much has been moved back so far (channel and own currency).
  channel_reversed  bigint NOT NULL DEFAULT 0 CHECK (channel_reversed >= 0 AND channel_reversed <= channel_total),
  total_reversed    bigint NOT NULL DEFAULT 0 CHECK (total_reversed >= 0 AND total_reversed <= total),
  reversed          boolean NOT NULL DEFAULT false,
  title             text NOT NULL DEFAULT '',
  reference         text NOT NULL DEFAULT '',
  description       text NOT NULL DEFAULT '',
  statement_date    date,
  created_at        timestamptz NOT NULL DEFAULT now(),
  CHECK (from_channel_id <> to_channel_id)
);
CREATE INDEX allocations_transaction_idx ON allocations (transaction_id, id);
CREATE INDEX allocations_to_channel_idx ON allocations (to_channel_id, id);
CREATE INDEX allocations_reverses_idx ON allocations (reverses_id) WHERE reverses_id IS NOT NULL;
