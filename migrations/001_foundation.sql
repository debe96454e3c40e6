-- Tenants, people, access and the non-money resources. Every tenant-owned row carries site_id,
-- which is the sharding key if the service is ever distributed (see docs/scaling.md).

CREATE TABLE sites (
  id          bigserial PRIMARY KEY,
  path        text NOT NULL UNIQUE CHECK (path ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id                       bigserial PRIMARY KEY,
  username                 text NOT NULL UNIQUE,
  email                    text NOT NULL,
  display_name             text NOT NULL,
  password_hash            text NOT NULL,
  is_platform_admin        boolean NOT NULL DEFAULT false,
  can_sign_off_payout      boolean NOT NULL DEFAULT false,
  -- TOTP secret (base32), encrypted with the signing secret; confirmed once a code was accepted.
  totp_secret              text,
  two_factor_confirmed_at  timestamptz,
  failed_logins            integer NOT NULL DEFAULT 0,
  locked_until             timestamptz,
  -- SHA-256 of the current refresh token; null after DELETE token/refresh (a new one is issued at next login).
  refresh_token_hash       text,
  password_changed_at      timestamptz NOT NULL DEFAULT now(),
  created_at               timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
  site_id     bigint NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
  user_id     bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role        text NOT NULL CHECK (role IN ('member_admin', 'member')),
  read_only   boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

CREATE TABLE api_tokens (
  id            bigserial PRIMARY KEY,
  site_id       bigint NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
  user_id       bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name          text NOT NULL,
  token_hash    text NOT NULL UNIQUE,
  abilities     jsonb NOT NULL DEFAULT '["*"]',
  last_used_at  timestamptz,
  expires_at    date,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_tokens_user_idx ON api_tokens (site_id, user_id);

CREATE TABLE channels (
  id                            bigserial PRIMARY KEY,
  site_id                       bigint NOT NULL REFERENCES sites(id),
  uuid                          uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  name                          text NOT NULL,
  slug                          text NOT NULL,
  account_type                  text NOT NULL DEFAULT 'trust' CHECK (account_type IN ('protected-processing', 'trust')),
  account_mode                  text NOT NULL DEFAULT 'test' CHECK (account_mode IN ('test', 'draft', 'live', 'closed', 'affiliate')),
  protection_type               text NOT NULL DEFAULT 'trust-vendor-travel' CHECK (protection_type IN ('trust-vendor-travel', 'vendor-management')),
  currency                      char(3) NOT NULL,
  quote_code                    text,
  statement_period              text NOT NULL DEFAULT 'month' CHECK (statement_period IN ('biweek', 'week', 'month')),
  cardholder_present            boolean NOT NULL DEFAULT false,
  language                      text NOT NULL DEFAULT 'enGB',
  primary_mail                  text NOT NULL DEFAULT '',
  mail_bcc_transactional_mails  boolean NOT NULL DEFAULT false,
  mail_failures                 boolean NOT NULL DEFAULT false,
  receipt_label                 text,
  server_to_server              boolean NOT NULL DEFAULT false,
  vaultprovider_id              text NOT NULL DEFAULT '',
  vaultprovider_api_key         text NOT NULL DEFAULT '',
  beneficiary_id                text NOT NULL DEFAULT '',
  settlement_currency           char(3),
  external_id                   text NOT NULL DEFAULT '',
  chargeback_mail               text NOT NULL DEFAULT '',
  payout_minimum                bigint NOT NULL DEFAULT 0,
  descriptor                    text,
  channel_secret                text NOT NULL DEFAULT '',
  channel_status                text NOT NULL DEFAULT 'test',
  created_at                    timestamptz NOT NULL DEFAULT now(),
  modified_at                   timestamptz NOT NULL DEFAULT now(),
  deleted_at                    timestamptz
);
CREATE INDEX channels_site_idx ON channels (site_id, id) WHERE deleted_at IS NULL;

-- Suppliers are a platform-wide directory (imported by operators), readable by every site.
CREATE TABLE suppliers (
  id        text PRIMARY KEY CHECK (id ~ '^[A-Z]{2}-[0-9]{1,10}-[A-Z]{3}$'),
  name      text NOT NULL,
  url       text NOT NULL DEFAULT '',
  country   char(2) NOT NULL,
  category  text NOT NULL CHECK (category IN ('ACC', 'AIR', 'TRN', 'CRU', 'ACT', 'TOU', 'INS', 'OTH')),
  imported_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE channel_suppliers (
  channel_id   bigint NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  supplier_id  text NOT NULL REFERENCES suppliers(id) ON DELETE CASCADE,
  PRIMARY KEY (channel_id, supplier_id)
);

CREATE TABLE bookings (
  id               bigserial PRIMARY KEY,
  site_id          bigint NOT NULL REFERENCES sites(id),
  uuid             uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  channel_id       bigint NOT NULL REFERENCES channels(id),
  author_id        bigint NOT NULL REFERENCES users(id),
  status           text NOT NULL DEFAULT 'unpaid' CHECK (status IN ('draft', 'unpaid', 'partial-payment', 'authorized', 'paid', 'completed', 'locked')),
  content          text NOT NULL DEFAULT '',
  firstname        text NOT NULL,
  surname          text NOT NULL,
  email            text NOT NULL,
  date_end         date NOT NULL,
  date_start       date,
  pax              integer,
  reference        text NOT NULL DEFAULT '',
  total            bigint NOT NULL CHECK (total >= 0),
  currency         char(3) NOT NULL,
  country          char(2) NOT NULL,
  language         text NOT NULL DEFAULT 'enGB',
  suppliers        text[] NOT NULL DEFAULT '{}',
  -- Maintained by the payments code in the same database transaction as each money movement.
  total_paid       bigint NOT NULL DEFAULT 0,
  total_authorized bigint NOT NULL DEFAULT 0,
  transaction_ids  bigint[] NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL DEFAULT now(),
  modified_at      timestamptz NOT NULL DEFAULT now(),
  deleted_at       timestamptz
);
CREATE INDEX bookings_site_idx ON bookings (site_id, id) WHERE deleted_at IS NULL;
CREATE INDEX bookings_channel_idx ON bookings (channel_id);
