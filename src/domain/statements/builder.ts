import type { Queryable } from '../../storage/db.js';
import { limits } from '../../limits.js';
import { gmtDateTime, isCalendarDate } from '../gmt.js';

/**
 * A channel statement (docs/statements.md): every ledger entry of the channel posted in the
 * period [from 00:00:00, to 23:59:59] GMT, with opening and closing balances per account summed
 * from the ledger itself, so `closing = opening + credits - debits` for every account and the
 * closing balances equal the ledger's balances at the end of the period.
 */

/** The account whose credit balance is the money held for the channel (the headline balance). */
export const fundsAccount = 'channel_funds';

export interface StatementEntry {
  id: number;
  created: string;
  transaction_id: number;
  transaction_types: string;
  statement_date: string | null;
  account: string;
  currencies: string;
  direction: 'debit' | 'credit';
  amount: number;
  /** The account's balance (credits minus debits) after this entry. */
  balance: number;
  /** Forex transactions: the same amount in the currency the cardholder paid. */
  paid_currencies: string | null;
  paid_amount: number | null;
}

export interface AccountBalance {
  account: string;
  currencies: string;
  opening: number;
  credits: number;
  debits: number;
  closing: number;
}

export interface Statement {
  site: string;
  channels: number;
  channel_name: string;
  currencies: string;
  statement_period: string;
  from: string;
  to: string;
  /** Credits minus debits of `channel_funds` in the channel currency before and after the period. */
  opening_balance: number;
  closing_balance: number;
  accounts: AccountBalance[];
  entries: StatementEntry[];
}

export class StatementRefusal extends Error {
  override name = 'StatementRefusal';
}

const dayMs = 24 * 60 * 60 * 1000;

function dayStart(text: string, name: string): Date {
  if (!isCalendarDate(text)) throw new StatementRefusal(`--${name} must be a date YYYY-MM-DD`);
  return new Date(`${text}T00:00:00Z`);
}

interface EntryRow {
  [column: string]: unknown;
  id: number;
  created_at: Date;
  transaction_id: number;
  type: string;
  statement_date: string | null;
  account: string;
  currency: string;
  direction: 'debit' | 'credit';
  amount: number;
  paid_currency: string | null;
  paid_amount: number | null;
}

const signed = (direction: string, amount: number) => (direction === 'credit' ? amount : -amount);

export async function buildStatement(db: Queryable, options: { siteId: number; channelId: number; from: string; to: string }): Promise<Statement> {
  const from = dayStart(options.from, 'from');
  const end = new Date(dayStart(options.to, 'to').getTime() + dayMs);
  if (end <= from) throw new StatementRefusal('--to must not be before --from');
  if ((end.getTime() - from.getTime()) / dayMs > limits.statementDaysMax) throw new StatementRefusal(`a statement covers at most ${limits.statementDaysMax} days`);
  const channel = await db.maybeOne<{ name: string; currency: string; statement_period: string; path: string }>(
    'SELECT c.name, c.currency, c.statement_period, s.path FROM channels c JOIN sites s ON s.id = c.site_id WHERE c.id = $1 AND c.site_id = $2',
    [options.channelId, options.siteId],
  );
  if (!channel) throw new StatementRefusal(`channel ${options.channelId} is not a channel of this site`);
  // Callers run this in one REPEATABLE READ transaction so both queries see the same ledger.
  const opening = await db.query<{ account: string; currency: string; balance: number }>(
    `SELECT account, currency, sum(CASE WHEN direction = 'credit' THEN amount ELSE -amount END)::bigint AS balance
       FROM ledger_entries WHERE channel_id = $1 AND created_at < $2 GROUP BY account, currency`,
    [options.channelId, from],
  );
  const rows = await db.query<EntryRow>(
    `SELECT e.id, e.created_at, e.transaction_id, t.type, t.statement_date::text AS statement_date, e.account, e.currency, e.direction, e.amount,
            e.paid_currency, e.paid_amount
       FROM ledger_entries e JOIN transactions t ON t.id = e.transaction_id
      WHERE e.channel_id = $1 AND e.created_at >= $2 AND e.created_at < $3
      ORDER BY e.created_at, e.id LIMIT $4`,
    [options.channelId, from, end, limits.statementEntriesMax + 1],
  );
  if (rows.length > limits.statementEntriesMax) throw new StatementRefusal(`the period has more than ${limits.statementEntriesMax} entries; ask for a shorter one`);
  const balances = new Map<string, AccountBalance>();
  const keyOf = (account: string, currency: string) => `${currency.trim()}:${account}`;
  const balanceOf = (account: string, currency: string) => {
    const key = keyOf(account, currency);
    let balance = balances.get(key);
    if (!balance) {
      balance = { account, currencies: currency.trim(), opening: 0, credits: 0, debits: 0, closing: 0 };
      balances.set(key, balance);
    }
    return balance;
  };
  for (const row of opening) {
    const balance = balanceOf(row.account, row.currency);
    balance.opening = Number(row.balance);
    balance.closing = balance.opening;
  }
  const entries = rows.map((row): StatementEntry => {
    const balance = balanceOf(row.account, row.currency);
    if (row.direction === 'credit') balance.credits += row.amount;
    else balance.debits += row.amount;
    balance.closing += signed(row.direction, row.amount);
    return {
      id: row.id,
      created: gmtDateTime(row.created_at),
      transaction_id: row.transaction_id,
      transaction_types: row.type,
      statement_date: row.statement_date,
      account: row.account,
      currencies: row.currency.trim(),
      direction: row.direction,
      amount: row.amount,
      balance: balance.closing,
      paid_currencies: row.paid_currency?.trim() ?? null,
      paid_amount: row.paid_amount,
    };
  });
  const accounts = [...balances.values()].sort((a, b) => a.currencies.localeCompare(b.currencies) || a.account.localeCompare(b.account));
  const funds = balances.get(keyOf(fundsAccount, channel.currency));
  return {
    site: channel.path,
    channels: options.channelId,
    channel_name: channel.name,
    currencies: channel.currency.trim(),
    statement_period: channel.statement_period,
    from: options.from,
    to: options.to,
    opening_balance: funds?.opening ?? 0,
    closing_balance: funds?.closing ?? 0,
    accounts,
    entries,
  };
}

const csvColumns: (keyof StatementEntry)[] = ['id', 'created', 'transaction_id', 'transaction_types', 'statement_date', 'account', 'currencies', 'direction', 'amount', 'balance', 'paid_currencies', 'paid_amount'];

function csvField(value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * CSV: a header and one line per entry; the opening and closing balances of every account come
 * first and last as lines whose `account` is that account and whose `transaction_types` is
 * `opening` or `closing` (amount = the balance), so the file alone reconciles.
 */
export function statementCsv(statement: Statement): string {
  const lines = [csvColumns.join(',')];
  const summary = (kind: 'opening' | 'closing', balance: AccountBalance) =>
    csvColumns.map((column) => csvField({
      id: '', created: kind === 'opening' ? `${statement.from} 00:00:00` : `${statement.to} 23:59:59`, transaction_id: '', transaction_types: kind,
      statement_date: '', account: balance.account, currencies: balance.currencies, direction: '', amount: balance[kind], balance: balance[kind],
      paid_currencies: '', paid_amount: '',
    }[column])).join(',');
  for (const balance of statement.accounts) lines.push(summary('opening', balance));
  for (const entry of statement.entries) lines.push(csvColumns.map((column) => csvField(entry[column])).join(','));
  for (const balance of statement.accounts) lines.push(summary('closing', balance));
  return `${lines.join('\n')}\n`;
}
