-- Room on each page for the next version of its rows (issue 7, docs/performance.md session 15).
-- A payment updates its bookings twice (the attempt list, then the money and status) and its
-- booking shares once; none of the columns those updates change is indexed, so each can be a HOT
-- update (no new entry in any index, the old version pruned within the page) when the row's page
-- has room. At the default fillfactor (100) inserts fill every page, so the first update of a
-- booking moved it to another page and wrote an entry into each of its ten indexes: during bench
-- purchases 29% of the bookings' updates were not HOT. This applies to pages written from now on;
-- VACUUM FULL (or pg_repack) applies it to a table's older pages.
ALTER TABLE bookings SET (fillfactor = 80);
ALTER TABLE transaction_bookings SET (fillfactor = 80);
