-- Channels, bookings and suppliers: uniqueness and the indexes behind the list filters.

-- Slugs are unique among a site's live channels (createChannel retries on a race).
CREATE UNIQUE INDEX channels_site_slug_idx ON channels (site_id, slug) WHERE deleted_at IS NULL;
CREATE INDEX channels_site_external_idx ON channels (site_id, external_id) WHERE deleted_at IS NULL;

-- Booking filters that integrators look up by exact value.
CREATE INDEX bookings_site_surname_idx ON bookings (site_id, surname) WHERE deleted_at IS NULL;
CREATE INDEX bookings_site_email_idx ON bookings (site_id, lower(email)) WHERE deleted_at IS NULL;
CREATE INDEX bookings_site_reference_idx ON bookings (site_id, reference) WHERE deleted_at IS NULL;
CREATE INDEX bookings_site_created_idx ON bookings (site_id, created_at) WHERE deleted_at IS NULL;

CREATE INDEX suppliers_country_idx ON suppliers (country, category);

-- Tenant consistency: a booking's channel belongs to the booking's site.
ALTER TABLE channels ADD CONSTRAINT channels_site_id_id_key UNIQUE (site_id, id);
ALTER TABLE bookings ADD CONSTRAINT bookings_channel_same_site_fk FOREIGN KEY (site_id, channel_id) REFERENCES channels (site_id, id);
