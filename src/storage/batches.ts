/**
 * `<key> = ANY (ARRAY(<select>))`: the rows a sub-select picked, found by key, for the statement
 * that writes them. `ARRAY(<select>)` runs once, before the statement (an init plan), and the rows
 * are then read through the key's index: one plan, whatever the statistics say. Two uses:
 *
 * - **A queue's next batch** (`… ORDER BY … LIMIT n FOR UPDATE SKIP LOCKED`), for its UPDATE or
 *   DELETE. Never `<key> IN (<select>)` for this. When the table's statistics say it is empty (a
 *   queue analysed while it was drained, then filled again), PostgreSQL plans that as a nested
 *   loop that runs the sub-select once per row of the table: quadratic time, and with SKIP LOCKED
 *   each run locks and returns further rows, so the statement takes the whole table instead of its
 *   batch (measured on mail_requests: a batch of 500 took all 5,000 queued rows in 3.2 s; during
 *   the bench, 282 ms per batch of the mail job).
 * - **The rows a batch of requests names** (`SELECT id FROM <the batch's rows>`), next to the
 *   join with the batch. PostgreSQL guesses 100 rows for a set-returning function such as
 *   `json_to_recordset` (a batch is usually far smaller), so joined to the batch alone a table of
 *   a few thousand rows is cheaper to read whole and hash; the cached plan then keeps reading it
 *   whole as it grows (measured: the settlements' write read all 12,000 transactions and their
 *   shares for every batch of 18, 5 of its 8 ms).
 *
 * `key` is the table's primary key (or its leading column), or `ctid` for a queue keyed on several
 * columns (the sub-select's row lock keeps the row where it is until the statement ends).
 */
export function pickedBy(key: string, select: string): string {
  return `${key} = ANY (ARRAY(${select}))`;
}
