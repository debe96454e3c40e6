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
