-- What the kept list totals (migration 024) must equal, defined once: the recount writes it and
-- `trustfare totals verify` (src/storage/site-totals.ts) compares with it, so the two cannot
-- disagree about which rows count (bookings while live, every transaction).
CREATE VIEW site_rows_counted AS
  SELECT site_id, 'bookings'::text AS relation, count(*)::bigint AS counted FROM bookings WHERE deleted_at IS NULL GROUP BY site_id
  UNION ALL
  SELECT site_id, 'transactions'::text, count(*)::bigint FROM transactions GROUP BY site_id;

CREATE OR REPLACE FUNCTION site_row_counts_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE bookings, transactions IN SHARE MODE;
  DELETE FROM site_row_counts;
  INSERT INTO site_row_counts (site_id, relation, slot, row_count) SELECT site_id, relation, 0, counted FROM site_rows_counted;
END $$;
