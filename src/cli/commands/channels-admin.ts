import type { Command } from '../command.js';
import { booleanOption, required } from '../command.js';
import { limits } from '../../limits.js';
import { accountModes, accountTypes, channelStatuses, hasMoneyHistory, loadChannel, moneyKindOf, protectionTypes, settlementCurrencies, statementPeriods } from '../../domain/channels.js';
import { supplierIdItemPattern } from '../../domain/reference-data.js';
import { textProblem } from '../../domain/text.js';
import type { Queryable } from '../../storage/db.js';
import { findSite } from '../../domain/users/accounts.js';
import { isTestMode } from '../../domain/vault/index.js';
import { noLiveProcessorWarning, takesLiveMode } from '../../processor/index.js';

type Options = Record<string, string | boolean | undefined>;

/** One admin-only channel field: its option, column, and how a text value becomes a column value. */
interface AdminField {
  option: string;
  column: string;
  parse(text: string): string | number | boolean | null;
}

function oneOf(option: string, values: readonly string[]) {
  return (text: string) => {
    if (!values.includes(text)) throw new Error(`--${option} must be one of ${values.join(', ')}`);
    return text;
  };
}

function flag(option: string) {
  return (text: string) => booleanOption(option, text);
}

const adminFields: AdminField[] = [
  { option: 'account-mode', column: 'account_mode', parse: oneOf('account-mode', accountModes) },
  { option: 'channel-status', column: 'channel_status', parse: oneOf('channel-status', channelStatuses) },
  { option: 'account-type', column: 'account_type', parse: oneOf('account-type', accountTypes) },
  { option: 'protection-type', column: 'protection_type', parse: oneOf('protection-type', protectionTypes) },
  { option: 'statement-period', column: 'statement_period', parse: oneOf('statement-period', statementPeriods) },
  { option: 'settlement-currency', column: 'settlement_currency', parse: oneOf('settlement-currency', settlementCurrencies) },
  { option: 'cardholder-present', column: 'cardholder_present', parse: flag('cardholder-present') },
  { option: 'server-to-server', column: 'server_to_server', parse: flag('server-to-server') },
  {
    option: 'payout-minimum',
    column: 'payout_minimum',
    parse: (text) => {
      const value = Number(text);
      if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value > limits.amountCentsMax) throw new Error(`--payout-minimum must be whole minor units from 0 to ${limits.amountCentsMax}`);
      return value;
    },
  },
  {
    option: 'descriptor',
    column: 'descriptor',
    // Card networks print at most 22 characters; an empty value clears it (null).
    parse: (text) => {
      if (text.length > limits.descriptorLengthMax || /[^\x20-\x7e]/.test(text)) throw new Error(`--descriptor must be at most ${limits.descriptorLengthMax} printable ASCII characters`);
      return text.trim() === '' ? null : text;
    },
  },
  {
    option: 'quote-code',
    column: 'quote_code',
    // The spec's deprecated RO field, shown as "" while unset: an empty value clears it (null).
    parse: (text) => {
      const problem = textProblem(text, { maxLength: limits.nameLengthMax, kind: 'line' });
      if (problem) throw new Error(`--quote-code ${problem}`);
      return text === '' ? null : text;
    },
  },
  {
    option: 'beneficiary-id',
    column: 'beneficiary_id',
    parse: (text) => {
      if (text.length > limits.nameLengthMax) throw new Error(`--beneficiary-id must be at most ${limits.nameLengthMax} characters`);
      return text;
    },
  },
];

const supplierIdListPattern = new RegExp(`^\\s*(${supplierIdItemPattern}(\\s*,\\s*${supplierIdItemPattern})*)?\\s*$`);

/**
 * `--suppliers`: the whole set of suppliers linked to the channel (the spec's RO `suppliers`), so
 * an operator states it as a list and an empty value unlinks them all. Without this nothing could
 * link one, and every channel showed `suppliers: []`.
 */
function parseSupplierIds(text: string): string[] {
  if (!supplierIdListPattern.test(text)) throw new Error('--suppliers must be supplier ids such as GB-1042-ACC, separated by commas (empty unlinks them all)');
  const ids = [...new Set(text.split(',').map((id) => id.trim()).filter((id) => id !== ''))];
  if (ids.length > limits.channelSuppliersMax) throw new Error(`--suppliers takes at most ${limits.channelSuppliersMax} supplier ids`);
  return ids;
}

async function linkSuppliers(tx: Queryable, channelId: number, ids: string[]): Promise<void> {
  const known = await tx.query<{ id: string }>('SELECT id FROM suppliers WHERE id = ANY($1::text[])', [ids]);
  const unknown = ids.filter((id) => !known.some((row) => row.id === id));
  if (unknown.length > 0) throw new Error(`unknown supplier id(s): ${unknown.join(', ')} (import them first: trustfare suppliers import FILE)`);
  await tx.query('DELETE FROM channel_suppliers WHERE channel_id = $1', [channelId]);
  await tx.query('INSERT INTO channel_suppliers (channel_id, supplier_id) SELECT $1, unnest($2::text[])', [channelId, ids]);
}

/** Every field option; at least one is given. */
const fieldOptions = [...adminFields.map((field) => field.option), 'suppliers'];

const channelSet: Command = {
  name: 'channel set',
  summary: `set admin-only channel fields: --site P --id ID and any of ${fieldOptions.map((option) => `--${option}`).join(' ')}`,
  options: { site: { type: 'string' }, id: { type: 'string' }, suppliers: { type: 'string' }, ...Object.fromEntries(adminFields.map((field) => [field.option, { type: 'string' as const }])) },
  required: ['site', 'id', fieldOptions],
  async run(context, options: Options) {
    const sitePath = required(options, 'site');
    const idText = required(options, 'id');
    if (!/^[1-9]\d{0,14}$/.test(idText)) throw new Error('--id must be a channel id');
    // Parse everything before touching the database: one bad value changes nothing.
    const changes = adminFields.filter((field) => typeof options[field.option] === 'string').map((field) => ({ column: field.column, value: field.parse(options[field.option] as string) }));
    const supplierIds = typeof options.suppliers === 'string' ? parseSupplierIds(options.suppliers) : undefined;
    const site = await findSite(context.db, sitePath);
    let mixedKind: string | undefined;
    const channel = await context.db.transaction(async (tx) => {
      const current = await loadChannel(tx, { siteId: site.id, id: Number(idText), lock: 'update' });
      if (!current) throw new Error(`no channel ${idText} in site ${site.path}`);
      const mode = options['account-mode'];
      // A closed channel takes no new money, so nothing of the other kind joins what it holds.
      if (typeof mode === 'string' && mode !== 'closed' && isTestMode(mode) !== isTestMode(current.accountMode) && (await hasMoneyHistory(tx, current.id))) mixedKind = moneyKindOf(current.accountMode);
      const sets = changes.map((change, index) => `${change.column} = $${index + 2}`);
      await tx.query(`UPDATE channels SET ${[...sets, 'modified_at = now()'].join(', ')} WHERE id = $1`, [current.id, ...changes.map((change) => change.value)]);
      if (supplierIds) await linkSuppliers(tx, current.id, supplierIds);
      return (await loadChannel(tx, { siteId: site.id, id: current.id }))!;
    });
    // The operator's way to take a channel live (a site is refused, docs/resources.md): its earlier
    // transactions are followed up in their own mode, but its balance now mixes both kinds of money.
    if (mixedKind) console.error(`trustfare channel set: warning: channel ${channel.id} holds ${mixedKind} and is now ${channel.accountMode}: its earlier transactions are followed up in their own mode (docs/payments.md), but its balance and statements mix both kinds of money; a new channel keeps them apart`);
    // A warning, not a refusal: the mode is the operator's to set (ahead of a real processor, or
    // to stop a channel's test payments), and the payments themselves are refused (prepare.ts).
    const takesPayments = channel.accountMode !== 'closed' && !isTestMode(channel.accountMode);
    if (options['account-mode'] !== undefined && takesPayments && !takesLiveMode(context.config, context.connector)) {
      console.error(`trustfare channel set: warning: channel ${channel.id} is now ${channel.accountMode}, but ${noLiveProcessorWarning}`);
    }
    return {
      id: channel.id,
      site: site.path,
      name: channel.name,
      currencies: channel.currency,
      account_mode: channel.accountMode,
      channel_status: channel.channelStatus,
      account_type: channel.accountType,
      protection_type: channel.protectionType,
      statement_period: channel.statementPeriod,
      settlement_currency: channel.settlementCurrency,
      cardholder_present: channel.cardholderPresent,
      server_to_server: channel.serverToServer,
      payout_minimum: channel.payoutMinimum,
      descriptor: channel.descriptor,
      quote_code: channel.quoteCode ?? '',
      beneficiary_id: channel.beneficiaryId,
      suppliers: channel.suppliers,
    };
  },
};

export const commands: Command[] = [channelSet];
