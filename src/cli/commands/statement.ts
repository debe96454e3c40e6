import type { Command } from '../command.js';
import { findSite } from '../../domain/users/accounts.js';
import { positiveInteger, required } from '../command.js';
import { buildStatement, statementCsv } from '../../domain/statements/index.js';

/** main.ts prints a result carrying this key as plain text instead of JSON. */
const rawOutput = Symbol.for('trustfare.cli.rawOutput');

const statement: Command = {
  name: 'statement',
  summary: 'ledger statement of a channel for a period (JSON or CSV)',
  options: { site: { type: 'string' }, channel: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, format: { type: 'string' } },
  required: ['site', 'channel', 'from', 'to'],
  async run(context, options) {
    const path = required(options, 'site');
    const channelId = positiveInteger('channel', required(options, 'channel'), 'a channel id');
    const format = options.format ?? 'json';
    if (format !== 'json' && format !== 'csv') throw new Error('--format must be json or csv');
    const site = await findSite(context.db, path);
    const result = await context.db.transaction(
      (tx) => buildStatement(tx, { siteId: site.id, channelId, from: required(options, 'from'), to: required(options, 'to') }),
      { isolation: 'repeatable read' },
    );
    return format === 'csv' ? { [rawOutput]: statementCsv(result) } : result;
  },
};

export const commands: Command[] = [statement];
