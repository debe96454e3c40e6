-- Performance (issue 7): the index behind "the adjustments of a transaction" (captures, voids,
-- refunds and chargebacks linked to it: the `adjustments` of every transaction view, and the
-- chargeback and allocation look-ups) holds those types only. Retained charges link to their
-- vault transaction too, and one vault transaction may have thousands of them: with them in
-- the index the planner expected thousands of matches per look-up and scanned the table
-- instead, and every retained charge paid for one more index entry.
DROP INDEX transactions_linked_idx;
CREATE INDEX transactions_adjustments_idx ON transactions (linked_id)
  WHERE type IN ('capture', 'void', 'refund', 'chargeback', 'chargeback-reversal', 'chargeback-override');
