-- A capture of a card already in the vault used to overwrite the record's expiry and holder
-- fields (ON CONFLICT ... DO UPDATE): nobody had verified them, yet every later charge by the old
-- vault token or linked_id went to the bank with them, and a capture token minted before the
-- second capture was charged with the other capture's expiry. A stored card is now never changed
-- by a capture: the same card entered again on the same channel finds its record only when every
-- detail a charge sends or shows (expiry and holder fields) is the same; otherwise it gets a
-- record (and vault token) of its own, verified by its own vault (docs/vault.md "Duplicates").
--
-- The details are compared through a digest, since the holder fields together are too long for
-- an index entry. md5 only stands for equality of values that are not secret (the PAN is in the
-- fingerprint): quote_nullable keeps NULL apart from any text and the ':' separators apart from
-- the values, and each function here is immutable, as a generated column needs.
ALTER TABLE cards ADD COLUMN details_digest text NOT NULL GENERATED ALWAYS AS (md5(
  expiry_month::text || ':' || expiry_year::text || ':' || quote_nullable(holder_name) || ':' || quote_nullable(holder_email) || ':' ||
  quote_nullable(holder_address) || ':' || quote_nullable(holder_city) || ':' || quote_nullable(holder_zip) || ':' || quote_nullable(holder_country::text)
)) STORED;
ALTER TABLE cards DROP CONSTRAINT cards_same_card_key;
ALTER TABLE cards ADD CONSTRAINT cards_same_card_key UNIQUE (site_id, channel_id, fingerprint, currency, account_type, details_digest);
