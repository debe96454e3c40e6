import { randomBytes } from 'node:crypto';
import { isCurrencyCode } from './money.js';
import { currencySymbolOf } from './forex/symbols.js';
// The rates of a feed are the forex module's (channelRates); this module only frames them.
import type { ForexFeedRate } from './forex/forex.js';
import { defaultLanguage, isLanguageCode, normaliseEmailList } from './reference-data.js';
import type { Queryable } from '../storage/db.js';
import { canonicalText } from './text.js';

/**
 * Channels: the accounts money is processed through. Plain functions over the database; the
 * routes map wire names (`currencies`) to these camelCase records and back.
 */

export const accountModes = ['test', 'draft', 'live', 'closed', 'affiliate'] as const;
export type AccountMode = (typeof accountModes)[number];
/** Modes a site's own users may choose; the rest are platform-admin only (decisions.md). */
export const selfServiceAccountModes = ['test', 'draft'] as const;

/**
 * Only `test` channels are test channels: the processor's test mode, sandbox cards and tokens,
 * forced declines, sandbox exchange rates. Every other mode is the processor's live mode, `draft`
 * included (a channel being set up takes real cards, so it must not pay at made-up rates either).
 * The one definition: card rules, the processor call, forex and the pages all ask this.
 */
export function isTestMode(accountMode: string): boolean {
  return accountMode === 'test';
}
/**
 * Why a channel takes no new money, or null: `account_mode` closed, or a `channel_status` the
 * operator set to closed or locked (decision, docs/payments.md "Closed channels": both statuses
 * were shown and changed nothing, so a channel locked for review still took payments).
 */
export function noPaymentsReason(channel: { accountMode: string; channelStatus: string }): 'closed' | 'locked' | null {
  if (channel.accountMode === 'closed' || channel.channelStatus === 'closed') return 'closed';
  return channel.channelStatus === 'locked' ? 'locked' : null;
}
/** What the money and cards of a channel in this mode are, in words. */
export function moneyKindOf(accountMode: string): string {
  return isTestMode(accountMode) ? 'test money or sandbox cards' : 'real money or cards';
}
export type SelfServiceAccountMode = (typeof selfServiceAccountModes)[number];
export const accountTypes = ['protected-processing', 'trust'] as const;
export const protectionTypes = ['trust-vendor-travel', 'vendor-management'] as const;
export const statementPeriods = ['biweek', 'week', 'month'] as const;
export const channelStatuses = [
  'admin', 'affiliate', 'agent', 'closed', 'full-processing', 'full-processing-ic-plus', 'full-processing-blended-default', 'locked', 'new',
  'supplier', 'test', 'vendor-end-user', 'vendor-protection-a', 'vendor-protection-b',
] as const;
/**
 * The `channel_status` values that stop new money, for SQL that checks them (the attempt's insert,
 * transactions/repository.ts): derived from noPaymentsReason, which stays the one definition.
 */
export const noPaymentsStatuses: readonly string[] = channelStatuses.filter((status) => noPaymentsReason({ accountMode: 'test', channelStatus: status }) !== null);
export const settlementCurrencies = ['AED', 'AUD', 'CAD', 'CHF', 'DKK', 'EUR', 'GBP', 'HKD', 'JPY', 'NOK', 'NZD', 'SEK', 'SGD', 'USD', 'ZAR'] as const;

/** The fields a site's users may set (on create; PUT takes any subset). */
export interface ChannelInput {
  name: string;
  currency: string;
  accountMode?: SelfServiceAccountMode;
  language?: string;
  primaryMail?: string;
  mailBccTransactionalMails?: boolean;
  mailFailures?: boolean;
  /** null restores the default (the site name). */
  receiptLabel?: string | null;
  externalId?: string;
  chargebackMail?: string;
  vaultproviderId?: string;
  vaultproviderApiKey?: string;
}

export type ChannelPatch = Partial<ChannelInput>;

export interface ChannelRecord {
  id: number;
  siteId: number;
  uuid: string;
  name: string;
  slug: string;
  accountType: string;
  accountMode: AccountMode;
  protectionType: string;
  currency: string;
  quoteCode: string | null;
  statementPeriod: string;
  cardholderPresent: boolean;
  language: string;
  primaryMail: string;
  mailBccTransactionalMails: boolean;
  mailFailures: boolean;
  /** As stored; null means "the site name" (see receiptLabelOf). */
  receiptLabel: string | null;
  siteName: string;
  serverToServer: boolean;
  vaultproviderId: string;
  vaultproviderApiKey: string;
  beneficiaryId: string;
  settlementCurrency: string | null;
  externalId: string;
  chargebackMail: string;
  payoutMinimum: number;
  descriptor: string | null;
  channelSecret: string;
  channelStatus: string;
  suppliers: string[];
  createdAt: Date;
  modifiedAt: Date;
}

/** The SELECT list and FROM clause that produce a ChannelRow; `c` is the channel alias. */
export const channelSelect = `c.*, s.name AS site_name,
  ARRAY(SELECT cs.supplier_id FROM channel_suppliers cs WHERE cs.channel_id = c.id ORDER BY cs.supplier_id) AS supplier_ids`;
export const channelFrom = 'channels c JOIN sites s ON s.id = c.site_id';

export interface ChannelRow {
  [column: string]: unknown;
  id: number;
  site_id: number;
  uuid: string;
  name: string;
  slug: string;
  account_type: string;
  account_mode: AccountMode;
  protection_type: string;
  currency: string;
  quote_code: string | null;
  statement_period: string;
  cardholder_present: boolean;
  language: string;
  primary_mail: string;
  mail_bcc_transactional_mails: boolean;
  mail_failures: boolean;
  receipt_label: string | null;
  site_name: string;
  server_to_server: boolean;
  vaultprovider_id: string;
  vaultprovider_api_key: string;
  beneficiary_id: string;
  settlement_currency: string | null;
  external_id: string;
  chargeback_mail: string;
  payout_minimum: number;
  descriptor: string | null;
  channel_secret: string;
  channel_status: string;
  supplier_ids: string[];
  created_at: Date;
  modified_at: Date;
}

export function channelFromRow(row: ChannelRow): ChannelRecord {
  return {
    id: row.id,
    siteId: row.site_id,
    uuid: row.uuid,
    name: row.name,
    slug: row.slug,
    accountType: row.account_type,
    accountMode: row.account_mode,
    protectionType: row.protection_type,
    currency: row.currency,
    quoteCode: row.quote_code,
    statementPeriod: row.statement_period,
    cardholderPresent: row.cardholder_present,
    language: row.language,
    primaryMail: row.primary_mail,
    mailBccTransactionalMails: row.mail_bcc_transactional_mails,
    mailFailures: row.mail_failures,
    receiptLabel: row.receipt_label,
    siteName: row.site_name,
    serverToServer: row.server_to_server,
    vaultproviderId: row.vaultprovider_id,
    vaultproviderApiKey: row.vaultprovider_api_key,
    beneficiaryId: row.beneficiary_id,
    settlementCurrency: row.settlement_currency,
    externalId: row.external_id,
    chargebackMail: row.chargeback_mail,
    payoutMinimum: row.payout_minimum,
    descriptor: row.descriptor,
    channelSecret: row.channel_secret,
    channelStatus: row.channel_status,
    suppliers: row.supplier_ids,
    createdAt: row.created_at,
    modifiedAt: row.modified_at,
  };
}

/** Company name printed on receipts: the channel's own label, else the site name. */
export function receiptLabelOf(channel: ChannelRecord): string {
  return channel.receiptLabel ?? channel.siteName;
}

/**
 * A live (not deleted) channel of the site, or undefined; `lock` takes a row lock in a
 * transaction. `key share` (what a booking takes, like its foreign key) conflicts only with
 * FOR UPDATE, which every change of a channel takes first (updateChannel, deleteChannel).
 */
export async function loadChannel(db: Queryable, options: { siteId: number; id: number; lock?: 'update' | 'key share' }): Promise<ChannelRecord | undefined> {
  if (!Number.isSafeInteger(options.id)) return undefined;
  const lock = options.lock === 'update' ? 'FOR UPDATE OF c' : options.lock === 'key share' ? 'FOR KEY SHARE OF c' : '';
  const row = await db.maybeOne<ChannelRow>(`SELECT ${channelSelect} FROM ${channelFrom} WHERE c.id = $1 AND c.site_id = $2 AND c.deleted_at IS NULL ${lock}`, [options.id, options.siteId]);
  return row ? channelFromRow(row) : undefined;
}

/** `"Summer Tours & Co."` → `summer-tours-co`; never empty. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug || 'channel';
}

/** 32 random bytes, hex: the key integrators use to sign payment modal requests. */
export function generateChannelSecret(): string {
  return randomBytes(32).toString('hex');
}

/**
 * Inserts one create tries before giving up. Each try that loses a slug to a create committed
 * meanwhile (or in flight in another transaction) remembers it, so the tries needed grow with the
 * creates of one name under way at once, not without bound.
 */
const slugAttemptsMax = 20;

/**
 * Creates a channel of the site with defaults (trust, test, trust-vendor-travel, month, enGB),
 * a fresh channel_secret and a slug unique within the site (`name`, `name-2`, ...).
 */
export async function createChannel(db: Queryable, given: { siteId: number } & ChannelInput): Promise<ChannelRecord> {
  assertChannelInput(given);
  const input = inCanonicalText(given);
  const base = slugify(input.name);
  const lost = new Set<string>();
  for (let attempt = 1; attempt <= slugAttemptsMax; attempt++) {
    const slug = await freeSlug(db, input.siteId, base, lost);
    // Two creates raced for the same slug: the unique index keeps one, the other picks again. Not
    // an error caught: inside a transaction (an Idempotency-Key's, createdForKey) an error would
    // end it.
    const inserted = await db.maybeOne<{ id: number }>(
      `INSERT INTO channels (site_id, name, slug, account_mode, currency, language, primary_mail, mail_bcc_transactional_mails, mail_failures,
                             receipt_label, external_id, chargeback_mail, vaultprovider_id, vaultprovider_api_key, channel_secret)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
       ON CONFLICT (site_id, slug) WHERE deleted_at IS NULL DO NOTHING RETURNING id`,
      [
        input.siteId, input.name, slug, input.accountMode ?? 'test', input.currency, input.language ?? defaultLanguage,
        normaliseEmailList(input.primaryMail ?? ''), input.mailBccTransactionalMails ?? false, input.mailFailures ?? false,
        input.receiptLabel ?? null, input.externalId ?? '', normaliseEmailList(input.chargebackMail ?? ''),
        input.vaultproviderId ?? '', input.vaultproviderApiKey ?? '', generateChannelSecret(),
      ],
    );
    if (inserted) return (await loadChannel(db, { siteId: input.siteId, id: inserted.id }))!;
    lost.add(slug);
  }
  throw new Error(`no free slug for channel "${input.name}" after ${slugAttemptsMax} attempts`);
}

/** The first of `base`, `base-2`, ... that no live channel of the site has and is not in `lost`. */
async function freeSlug(db: Queryable, siteId: number, base: string, lost: ReadonlySet<string> = new Set()): Promise<string> {
  const taken = await db.query<{ slug: string }>(
    `SELECT slug FROM channels WHERE site_id = $1 AND deleted_at IS NULL AND (slug = $2 OR slug ~ ('^' || $2 || '-[0-9]+$'))`,
    [siteId, base],
  );
  const used = new Set([...taken.map((row) => row.slug), ...lost]);
  if (!used.has(base)) return base;
  for (let suffix = 2; ; suffix++) {
    if (!used.has(`${base}-${suffix}`)) return `${base}-${suffix}`;
  }
}

const patchColumns: { [K in keyof ChannelPatch]-?: string } = {
  name: 'name',
  currency: 'currency',
  accountMode: 'account_mode',
  language: 'language',
  primaryMail: 'primary_mail',
  mailBccTransactionalMails: 'mail_bcc_transactional_mails',
  mailFailures: 'mail_failures',
  receiptLabel: 'receipt_label',
  externalId: 'external_id',
  chargebackMail: 'chargeback_mail',
  vaultproviderId: 'vaultprovider_id',
  vaultproviderApiKey: 'vaultprovider_api_key',
};

/** A copy of `input` with the text the channels list filters on (`name`, `external_id`) in NFC (text.ts canonicalText). */
function inCanonicalText<T extends ChannelPatch>(input: T): T {
  return {
    ...input,
    ...(input.name !== undefined ? { name: canonicalText(input.name) } : {}),
    ...(input.externalId !== undefined ? { externalId: canonicalText(input.externalId) } : {}),
  };
}

/** Why a patch cannot apply to this channel, keyed by the wire name, or null when it can. */
export interface ChannelPatchRefusal {
  param: 'currencies' | 'account_mode';
  message: string;
}

/**
 * Applies a patch inside the caller's transaction. The channel row is locked first, so a
 * concurrent booking create or payment attempt (each key-share-locks it, with the currency and
 * mode it was checked against: insertBookingStatement, insertTransactions) cannot slip in under a
 * currency or mode change: it waits, sees the change and is refused, or is seen here once committed.
 */
export async function updateChannel(tx: Queryable, options: { siteId: number; id: number; patch: ChannelPatch }): Promise<ChannelRecord | ChannelPatchRefusal | undefined> {
  const current = await loadChannel(tx, { siteId: options.siteId, id: options.id, lock: 'update' });
  if (!current) return undefined;
  const patch = inCanonicalText(options.patch);
  assertChannelPatch(patch);
  if (patch.accountMode !== undefined && patch.accountMode !== current.accountMode && !(selfServiceAccountModes as readonly string[]).includes(current.accountMode)) {
    return { param: 'account_mode', message: `a ${current.accountMode} channel's mode is changed by the platform operator only` };
  }
  if (patch.accountMode !== undefined && isTestMode(patch.accountMode) !== isTestMode(current.accountMode) && (await hasMoneyHistory(tx, current.id))) {
    return { param: 'account_mode', message: `the channel holds ${moneyKindOf(current.accountMode)}, which must never mix with ${isTestMode(current.accountMode) ? 'real cards' : 'test money'}: create a new channel for the other mode` };
  }
  if (patch.currency !== undefined && patch.currency !== current.currency && (await isInUse(tx, current.id))) {
    return { param: 'currencies', message: 'the base currency cannot change while the channel has bookings, money movements or allocations planned to it (an authorisation not yet captured or voided)' };
  }
  if (patch.primaryMail !== undefined) patch.primaryMail = normaliseEmailList(patch.primaryMail);
  if (patch.chargebackMail !== undefined) patch.chargebackMail = normaliseEmailList(patch.chargebackMail);
  const sets: string[] = [];
  const values: unknown[] = [current.id];
  for (const [key, column] of Object.entries(patchColumns) as [keyof ChannelPatch, string][]) {
    if (patch[key] === undefined) continue;
    values.push(patch[key]);
    sets.push(`${column} = $${values.length}`);
  }
  // A name with the same slug keeps it: freeSlug would count the channel's own slug as taken.
  if (patch.name !== undefined && slugify(patch.name) !== slugify(current.name)) {
    values.push(await freeSlug(tx, current.siteId, slugify(patch.name)));
    sets.push(`slug = $${values.length}`);
  }
  if (sets.length > 0) await tx.query(`UPDATE channels SET ${sets.join(', ')}, modified_at = now() WHERE id = $1`, values);
  return (await loadChannel(tx, { siteId: options.siteId, id: options.id }))!;
}

export type ChannelDeleteResult = 'deleted' | 'not_found' | 'has_bookings';

/**
 * Soft-deletes a channel. Refused while any (not deleted) booking uses it: bookings, their
 * transactions and the ledger keep pointing at the channel, and a channel with money history is
 * closed by the platform operator instead.
 */
export async function deleteChannel(tx: Queryable, options: { siteId: number; id: number }): Promise<ChannelDeleteResult> {
  const current = await loadChannel(tx, { ...options, lock: 'update' });
  if (!current) return 'not_found';
  if (await isInUse(tx, current.id)) return 'has_bookings';
  await tx.query('UPDATE channels SET deleted_at = now(), modified_at = now() WHERE id = $1', [current.id]);
  return 'deleted';
}

/**
 * A channel is in use while a live booking uses it, any money has moved through it, or money is
 * still planned to reach it: a channel without bookings can still hold funds (allocations from
 * another channel credit it) and transactions (vaulting), and its ledger is in its currency.
 * An allocation planned by another channel's authorisation (or by a payment still in flight)
 * credits this channel, in its current currency, when that transaction completes or is captured;
 * deleting the channel or changing its currency in between would have the capture credit a
 * deleted channel, or write entries in a currency the channel no longer has (docs/allocations.md).
 * Failed and expired transactions, voided authorisations (`reversed`) and captured ones (the
 * capture applied its own copies, which are in the ledger) will never apply theirs.
 */
async function isInUse(db: Queryable, channelId: number): Promise<boolean> {
  const row = await db.one<{ in_use: boolean }>('SELECT EXISTS (SELECT 1 FROM bookings WHERE channel_id = $1 AND deleted_at IS NULL) AS in_use', [channelId]);
  return row.in_use || hasMoneyHistory(db, channelId);
}

/**
 * Whether money or a card has moved on the channel, or money is planned to reach it: what binds it
 * to its currency and to its kind of money, test or real (isTestMode).
 */
export async function hasMoneyHistory(db: Queryable, channelId: number): Promise<boolean> {
  const row = await db.one<{ in_use: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM transactions WHERE channel_id = $1)
         OR EXISTS (SELECT 1 FROM ledger_entries WHERE channel_id = $1)
         OR EXISTS (SELECT 1 FROM allocations a JOIN transactions t ON t.id = a.transaction_id
                     WHERE a.to_channel_id = $1 AND NOT a.applied AND NOT a.reversed AND a.reverses_id IS NULL
                       AND t.status NOT IN ('failed', 'expired')
                       AND NOT EXISTS (SELECT 1 FROM transactions c WHERE c.linked_id = t.id AND c.type = 'capture' AND c.status IN ('complete', 'locked'))) AS in_use`,
    [channelId],
  );
  return row.in_use;
}

// Routes validate at the edge; these catch programmer errors from other callers (seed, CLI).
function assertChannelInput(input: ChannelInput): void {
  if (!input.name || input.name.trim() === '') throw new Error('channel name is required');
  assertChannelPatch(input);
}

function assertChannelPatch(patch: ChannelPatch): void {
  if (patch.currency !== undefined && !isCurrencyCode(patch.currency)) throw new Error(`unknown currency ${patch.currency}`);
  if (patch.language !== undefined && !isLanguageCode(patch.language)) throw new Error(`unknown language ${patch.language}`);
  if (patch.accountMode !== undefined && !(selfServiceAccountModes as readonly string[]).includes(patch.accountMode)) throw new Error(`account mode ${patch.accountMode} needs a platform admin`);
}

export interface ForexFeed {
  base: string;
  symbol: { grapheme: string; template: string; rtl: boolean };
  rates: Record<string, ForexFeedRate>;
}

/**
 * The channel's `forex_feed`: its base currency, how to show amounts in it, and the rates
 * offered for paying in other currencies (from `channelRates` in src/domain/forex).
 */
export function channelForexFeed(currency: string, rates: Record<string, ForexFeedRate> = {}): ForexFeed {
  // Forex integration (issue 4): the symbol table lives in src/domain/forex/symbols.ts (docs/forex.md).
  return { base: currency, symbol: currencySymbol(currency), rates };
}

export function currencySymbol(currency: string): ForexFeed['symbol'] {
  return currencySymbolOf(currency);
}
