/**
 * `<key> = ANY (ARRAY(<select>))`: the rows a bounded sub-select picked (`… ORDER BY … LIMIT n
 * FOR UPDATE SKIP LOCKED`, a queue's next batch), for the UPDATE or DELETE of those rows.
 *
 * Never `<key> IN (<select>)` for this. When the table's statistics say it is empty (a queue
 * analysed while it was drained, then filled again), PostgreSQL plans that as a nested loop
 * that runs the sub-select once per row of the table: quadratic time, and with SKIP LOCKED each
 * run locks and returns further rows, so the statement takes the whole table instead of its
 * batch (measured on mail_requests: a batch of 500 took all 5,000 queued rows in 3.2 s; during
 * the bench, 282 ms per batch of the mail job). `ARRAY(<select>)` runs once, before the
 * statement, and the rows are then found by key: one plan, whatever the statistics say.
 * `key` is the table's primary key, or `ctid` for a table keyed on several columns (the
 * sub-select's row lock keeps the row where it is until the statement ends).
 */
export function pickedBy(key: string, select: string): string {
  return `${key} = ANY (ARRAY(${select}))`;
}
