-- Card vault and the sandbox payment processor (docs/vault.md, docs/sandbox.md).

-- One row per card per channel it was vaulted to. The PAN is stored only as AES-256-GCM
-- ciphertext under a per-record data key; the data key is stored wrapped by a key-encrypting
-- key from CARD_KEYS (key_id names it, so `trustfare keys rotate` can re-wrap). The CVV is
-- never stored anywhere.
CREATE TABLE cards (
  id              bigserial PRIMARY KEY,
  site_id         bigint NOT NULL REFERENCES sites(id),
  channel_id      bigint NOT NULL REFERENCES channels(id),
  -- The permanent vault token returned to integrators (vault redirect `token`).
  token           text NOT NULL UNIQUE CHECK (token ~ '^[A-Za-z0-9]{32}$'),
  -- HMAC-SHA256(CARD_FINGERPRINT_KEY, site id + PAN): finds the same card again on a channel.
  fingerprint     bytea NOT NULL,
  bin             char(6) NOT NULL CHECK (bin ~ '^[0-9]{6}$'),
  last_four       char(4) NOT NULL CHECK (last_four ~ '^[0-9]{4}$'),
  brand           text NOT NULL CHECK (brand IN ('visa', 'master', 'amex', 'jcb', 'diners', 'discover', 'other')),
  issuer_country  char(2),
  expiry_month    smallint NOT NULL CHECK (expiry_month BETWEEN 1 AND 12),
  expiry_year     smallint NOT NULL CHECK (expiry_year BETWEEN 2000 AND 2200),
  -- Currency and account type of the channel the card was vaulted to (spec: the card may only
  -- be used on channels with the same two values).
  currency        char(3) NOT NULL,
  account_type    text NOT NULL,
  is_test_card    boolean NOT NULL,
  holder_name     text,
  holder_email    text,
  holder_address  text,
  holder_city     text,
  holder_zip      text,
  holder_country  char(2),
  key_id          text NOT NULL,
  wrapped_key     bytea NOT NULL,
  pan_ciphertext  bytea NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (site_id, channel_id, fingerprint)
);
CREATE INDEX cards_site_idx ON cards (site_id, id);
CREATE INDEX cards_key_idx ON cards (key_id, id);

-- Capture tokens whose sealed CVV was already handed out (single use of the CVV). Holds only
-- the token's random nonce; rows are useless after expires_at and are purged lazily.
CREATE TABLE card_token_redemptions (
  nonce       bytea PRIMARY KEY,
  expires_at  timestamptz NOT NULL
);
CREATE INDEX card_token_redemptions_expiry_idx ON card_token_redemptions (expires_at);

-- The sandbox processor's own state: every call it received, keyed by the caller's reference
-- (idempotency), shared by all server processes.
CREATE TABLE sandbox_operations (
  reference             text PRIMARY KEY,
  processor_reference   text NOT NULL UNIQUE,
  kind                  text NOT NULL CHECK (kind IN ('authorise', 'capture', 'void', 'refund')),
  -- For capture/void/refund: the processor reference of the operation acted on.
  parent_reference      text REFERENCES sandbox_operations(processor_reference),
  mode                  text NOT NULL CHECK (mode IN ('test', 'live')),
  amount                bigint NOT NULL CHECK (amount >= 0),
  currency              char(3) NOT NULL,
  capture               boolean NOT NULL DEFAULT false,
  status                text NOT NULL CHECK (status IN ('approved', 'declined', 'challenge')),
  auth_code             char(6),
  code                  text,
  message               text NOT NULL,
  card_brand            text,
  card_last_four        char(4),
  -- The processor "answered" into the void: the call hangs, lookup tells the outcome.
  no_answer             boolean NOT NULL DEFAULT false,
  three_ds              text CHECK (three_ds IN ('frictionless', 'challenge')),
  -- 3DS challenge: the hosted page id, where the browser returns, and the bank's answer that
  -- applies once the cardholder authenticates.
  challenge_id          text UNIQUE,
  return_url            text,
  merchant_name         text,
  after_challenge       jsonb,
  challenge_result      text CHECK (challenge_result IN ('authenticated', 'failed')),
  captured_amount       bigint NOT NULL DEFAULT 0,
  refunded_amount       bigint NOT NULL DEFAULT 0,
  voided                boolean NOT NULL DEFAULT false,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sandbox_operations_parent_idx ON sandbox_operations (parent_reference);
