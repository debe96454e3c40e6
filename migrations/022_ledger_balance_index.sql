-- The commit-time balance check (ledger_entries_assert_balanced, migration 005) sums the entries of
-- one transaction, channel and currency for every entry inserted. With indexes on (transaction_id)
-- and (channel_id, currency, account), PostgreSQL chose the channel's index whenever the table had
-- no statistics yet (a new installation, before its first ANALYZE): each check then read every
-- entry of the channel, so each payment cost more than the one before (4,000 entries written in
-- one statement took 1.25 s; docs/performance.md session 17). An index on all three columns
-- answers the check from the transaction's own entries whatever the statistics say, and still
-- serves every look-up by transaction.
CREATE INDEX ledger_entries_transaction_balance_idx ON ledger_entries (transaction_id, channel_id, currency);
DROP INDEX ledger_entries_transaction_idx;
