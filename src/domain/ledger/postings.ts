import type { Queryable } from '../../storage/db.js';

/**
 * The double-entry ledger (docs/ledger.md). A posting is one side of a money movement on one
 * account of one channel in one currency; the postings of a transaction balance (debits equal
 * credits) per channel and currency. Entries are append-only: the database refuses UPDATE,
 * DELETE and TRUNCATE, and re-checks the balance at commit.
 */

/** Accounts of a channel's books. Allocations and forex add theirs (docs/ledger.md). */
export const ledgerAccounts = {
  /** Asset: money the processor owes us for captured card payments, net of refunds. */
  processorClearing: 'processor_clearing',
  /** Liability: money held for the channel (captured payments net of refunds and chargebacks). */
  channelFunds: 'channel_funds',
  /** Memo asset: amounts ring-fenced on cardholders' cards by uncaptured authorisations. */
  authorizationHolds: 'authorization_holds',
  /** Memo liability: the channel's authorised, not yet captured or voided, money. */
  authorizedFunds: 'authorized_funds',
  /** Asset: money the processor took back by a chargeback while the dispute is open. */
  chargebacksDisputed: 'chargebacks_disputed',
  /** Liability contra: the channel's funds set aside against open chargebacks. */
  chargebackReserve: 'chargeback_reserve',
} as const;

export type Direction = 'debit' | 'credit';

export interface Posting {
  channelId: number;
  currency: string;
  account: string;
  direction: Direction;
  /** Minor units, > 0. */
  amount: number;
  /** Forex (issue 4): the same amount in the currency the cardholder paid (docs/forex.md). */
  paidCurrency?: string;
  paidAmount?: number;
}

export class UnbalancedPostingsError extends Error {}

/** Two postings moving `amount` from `credit` to `debit` on one channel and currency. */
export function transfer(options: { channelId: number; currency: string; debit: string; credit: string; amount: number }): Posting[] {
  if (options.amount === 0) return [];
  const base = { channelId: options.channelId, currency: options.currency, amount: options.amount };
  return [
    { ...base, account: options.debit, direction: 'debit' },
    { ...base, account: options.credit, direction: 'credit' },
  ];
}

/** Debits minus credits per `channel:currency`; every value is 0 when the postings balance. */
export function imbalances(postings: readonly Pick<Posting, 'channelId' | 'currency' | 'direction' | 'amount'>[]): Map<string, number> {
  const sums = new Map<string, number>();
  for (const posting of postings) {
    const key = `${posting.channelId}:${posting.currency}`;
    sums.set(key, (sums.get(key) ?? 0) + (posting.direction === 'debit' ? posting.amount : -posting.amount));
  }
  return sums;
}

/** Programmer-error check: amounts are positive integers and each channel/currency balances. */
export function assertBalanced(postings: readonly Posting[]): void {
  for (const posting of postings) {
    if (!Number.isSafeInteger(posting.amount) || posting.amount <= 0) throw new UnbalancedPostingsError(`posting amount must be a positive integer, got ${posting.amount}`);
  }
  for (const [key, difference] of imbalances(postings)) {
    if (difference !== 0) throw new UnbalancedPostingsError(`postings do not balance for ${key}: debits - credits = ${difference}`);
  }
}

/** The entries of one transaction: its postings, written at `at`. */
export interface TransactionEntries {
  siteId: number;
  transactionId: number;
  at: Date;
  postings: readonly Posting[];
}

/**
 * The INSERT of the entries of any number of transactions over ten numbered array parameters
 * starting at `$first` (per posting: site, transaction, time, then the posting's seven columns;
 * `entryParameters`), returning what the read-back check needs. `appendEntries` runs it alone;
 * settlements run it inside their status update (one round trip for a batch, issue 7).
 */
export function entriesInsertSql(first: number): string {
  const p = (offset: number) => `$${first + offset}`;
  return `INSERT INTO ledger_entries (site_id, transaction_id, created_at, channel_id, currency, account, direction, amount, paid_currency, paid_amount)
     SELECT * FROM unnest(${p(0)}::bigint[], ${p(1)}::bigint[], ${p(2)}::timestamptz[], ${p(3)}::bigint[], ${p(4)}::text[], ${p(5)}::text[], ${p(6)}::text[],
                          ${p(7)}::bigint[], ${p(8)}::text[], ${p(9)}::bigint[])
     RETURNING id, transaction_id, channel_id, currency, direction, amount`;
}

/** The parameters of `entriesInsertSql`, once each transaction's postings are proven balanced. */
export function entryParameters(entries: readonly TransactionEntries[]): unknown[] {
  for (const item of entries) assertBalanced(item.postings);
  const each = <T>(value: (item: TransactionEntries, posting: Posting) => T): T[] => entries.flatMap((item) => item.postings.map((posting) => value(item, posting)));
  return [
    each((item) => item.siteId),
    each((item) => item.transactionId),
    each((item) => item.at),
    each((_, p) => p.channelId),
    each((_, p) => p.currency),
    each((_, p) => p.account),
    each((_, p) => p.direction),
    each((_, p) => p.amount),
    each((_, p) => p.paidCurrency ?? null),
    each((_, p) => p.paidAmount ?? null),
  ];
}

export interface EntryReadBack {
  id: number;
  transaction_id: number;
  channel_id: number;
  currency: string;
  direction: Direction;
  amount: number;
}

/**
 * The entries as the database stored them must balance too, each transaction's on its own;
 * returns the ids of each transaction's entries, ascending.
 */
export function checkEntriesReadBack(rows: readonly EntryReadBack[]): Map<number, number[]> {
  const byTransaction = new Map<number, EntryReadBack[]>();
  for (const row of rows) {
    const id = Number(row.transaction_id);
    const list = byTransaction.get(id);
    if (list) list.push(row);
    else byTransaction.set(id, [row]);
  }
  const ids = new Map<number, number[]>();
  for (const [transactionId, list] of byTransaction) {
    const readBack = list.map((row) => ({ channelId: row.channel_id, currency: row.currency.trim(), direction: row.direction, amount: row.amount }));
    for (const [key, difference] of imbalances(readBack)) {
      if (difference !== 0) throw new UnbalancedPostingsError(`entries of transaction ${transactionId} read back do not balance for ${key}`);
    }
    ids.set(transactionId, list.map((row) => row.id).sort((a, b) => a - b));
  }
  return ids;
}

const appendStatement = { name: 'ledger_append', text: entriesInsertSql(1) };

/**
 * Appends the postings of one transaction, inside the caller's database transaction (the same
 * one that changes the transaction's status). Asserts the balance before writing and again on
 * what was read back. Returns the entry ids (the transaction's `payment_ids`).
 */
export async function appendEntries(tx: Queryable, options: { siteId: number; transactionId: number; at: Date }, postings: readonly Posting[]): Promise<number[]> {
  if (postings.length === 0) return [];
  const rows = await tx.query<EntryReadBack & Record<string, unknown>>(appendStatement, entryParameters([{ ...options, postings }]));
  return checkEntriesReadBack(rows).get(options.transactionId) ?? [];
}

/** Balance (debits minus credits) of one account of a channel in a currency. */
export async function accountBalance(db: Queryable, options: { channelId: number; currency: string; account: string }): Promise<number> {
  const row = await db.one<{ balance: number }>(
    `SELECT coalesce(sum(CASE WHEN direction = 'debit' THEN amount ELSE -amount END), 0)::bigint AS balance
       FROM ledger_entries WHERE channel_id = $1 AND currency = $2 AND account = $3`,
    [options.channelId, options.currency, options.account],
  );
  return Number(row.balance);
}
