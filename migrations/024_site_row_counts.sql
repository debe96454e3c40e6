-- Performance (issue 7, session 20): the totals of unfiltered bookings and transactions lists
-- (`X-Site-Total`, spec "pagination") kept by the database instead of counted on every page. An
-- index-only count visits every row of the site: 10 ms for 116,000 transactions, and growing with
-- the site, so a list page of a large site cost many times its twenty rows (docs/performance.md,
-- "List totals kept, not counted"). Filtered lists still count their matches.
--
-- The count of a (site, table) is the sum of its rows here. Each server connection adds to its own
-- slot (its backend pid modulo 256), so concurrent writers of one site almost never wait for each
-- other's row lock, and a slot's row lock is the only lock taken. The additions are written by
-- triggers in the writing statement's own transaction: a rolled-back insert is never counted, and
-- any snapshot sees a total that agrees with the rows it sees. Slots may go negative (a row
-- counted in one slot, its deletion in another); only the sum means anything. A writing
-- transaction holds its slot's row lock until it ends, so a connection that happens to share the
-- slot waits for it: every path writes bookings and transactions in short transactions, and a
-- long bulk write should go in several.
CREATE TABLE site_row_counts (
  site_id    bigint NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
  relation   text NOT NULL CHECK (relation IN ('bookings', 'transactions')),
  slot       integer NOT NULL CHECK (slot >= 0 AND slot < 256),
  row_count  bigint NOT NULL,
  PRIMARY KEY (site_id, relation, slot)
) WITH (fillfactor = 50);

-- Adds `sign` for each of `site_ids` (a site once per row) to this connection's slot, in site
-- order (two statements adding to the same slots take their row locks in one order, so they
-- cannot deadlock each other).
CREATE FUNCTION site_row_counts_add(relation text, site_ids bigint[], sign integer) RETURNS void LANGUAGE sql AS $$
  INSERT INTO site_row_counts AS c (site_id, relation, slot, row_count)
  SELECT site_id, relation, pg_backend_pid() % 256, sign * count(*)
    FROM unnest(site_ids) AS site_id
   GROUP BY site_id
   ORDER BY site_id
  ON CONFLICT (site_id, relation, slot) DO UPDATE SET row_count = c.row_count + excluded.row_count
$$;

-- Statement level, over the statement's rows (`changed`: inserted or deleted): one addition per
-- site and statement, however many rows it wrote (a batch of attempts inserts many transactions
-- in one statement). Bookings count while they are live (not soft-deleted), as the list shows them.
CREATE FUNCTION transactions_count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM site_row_counts_add('transactions', (SELECT array_agg(site_id) FROM changed), CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END);
  RETURN NULL;
END $$;
CREATE FUNCTION bookings_count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM site_row_counts_add('bookings', (SELECT array_agg(site_id) FROM changed WHERE deleted_at IS NULL), CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END);
  RETURN NULL;
END $$;
CREATE FUNCTION site_row_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM site_row_counts WHERE relation = TG_TABLE_NAME;
  RETURN NULL;
END $$;

-- A row that changes site, or a booking deleted or restored: row level, and only for updates
-- that name those columns (transition tables cannot be restricted to columns), so the payment
-- path's updates of bookings and transactions never run it.
CREATE FUNCTION site_row_counts_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME <> 'bookings' OR (to_jsonb(OLD) ->> 'deleted_at') IS NULL THEN PERFORM site_row_counts_add(TG_TABLE_NAME, ARRAY[OLD.site_id], -1); END IF;
  IF TG_TABLE_NAME <> 'bookings' OR (to_jsonb(NEW) ->> 'deleted_at') IS NULL THEN PERFORM site_row_counts_add(TG_TABLE_NAME, ARRAY[NEW.site_id], 1); END IF;
  RETURN NULL;
END $$;

-- The same three statement-level triggers on both tables (each with its own row function).
DO $$
DECLARE
  counted text;
BEGIN
  FOREACH counted IN ARRAY ARRAY['transactions', 'bookings'] LOOP
    EXECUTE format('CREATE TRIGGER %1$s_count_inserted AFTER INSERT ON %1$I REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION %1$s_count_rows()', counted);
    EXECUTE format('CREATE TRIGGER %1$s_count_deleted AFTER DELETE ON %1$I REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION %1$s_count_rows()', counted);
    EXECUTE format('CREATE TRIGGER %1$s_count_truncated AFTER TRUNCATE ON %1$I FOR EACH STATEMENT EXECUTE FUNCTION site_row_counts_truncated()', counted);
  END LOOP;
END $$;

CREATE TRIGGER transactions_count_moved AFTER UPDATE OF site_id ON transactions
  FOR EACH ROW WHEN (OLD.site_id IS DISTINCT FROM NEW.site_id) EXECUTE FUNCTION site_row_counts_moved();
CREATE TRIGGER bookings_count_moved AFTER UPDATE OF site_id, deleted_at ON bookings
  FOR EACH ROW WHEN (OLD.site_id IS DISTINCT FROM NEW.site_id OR (OLD.deleted_at IS NULL) IS DISTINCT FROM (NEW.deleted_at IS NULL))
  EXECUTE FUNCTION site_row_counts_moved();

-- Counts every site afresh into slot 0 (the rows already there; also an operator's repair, taking
-- both tables' write locks while it counts). The migration runs it once.
CREATE FUNCTION site_row_counts_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE bookings, transactions IN SHARE MODE;
  DELETE FROM site_row_counts;
  INSERT INTO site_row_counts (site_id, relation, slot, row_count)
  SELECT site_id, 'bookings', 0, count(*) FROM bookings WHERE deleted_at IS NULL GROUP BY site_id
  UNION ALL
  SELECT site_id, 'transactions', 0, count(*) FROM transactions GROUP BY site_id;
END $$;

SELECT site_row_counts_recount();
