import type { Command } from '../command.js';
import { positiveInteger, required } from '../command.js';
import { findSite } from '../../domain/users/accounts.js';
import { adminTransactionTypes, createTransaction, type AdminTransactionType } from '../../domain/transactions/index.js';
import { ApiError } from '../../http/errors.js';

/**
 * `trustfare chargeback --site P --transaction ID --total CENTS [--type chargeback|chargeback-reversal|chargeback-override]`:
 * the platform operator records a chargeback (or its reversal or final override) against a
 * transaction; prints the new transaction (docs/payments.md "Chargebacks").
 */
export const commands: Command[] = [
  {
    name: 'chargeback',
    summary: 'record a chargeback, chargeback-reversal or chargeback-override (platform operator)',
    options: { site: { type: 'string' }, transaction: { type: 'string' }, total: { type: 'string' }, type: { type: 'string' } },
    required: ['site', 'transaction', 'total'],
    async run(context, options) {
      const site = await findSite(context.db, required(options, 'site'));
      const linkedId = positiveInteger('transaction', required(options, 'transaction'));
      const total = positiveInteger('total', required(options, 'total'));
      const type = (typeof options.type === 'string' ? options.type : 'chargeback') as AdminTransactionType;
      if (!adminTransactionTypes.includes(type)) throw new Error(`--type must be one of ${adminTransactionTypes.join(', ')}`);
      try {
        return await createTransaction(context, { siteId: site.id, userId: null, source: 'cli', isPlatformAdmin: true }, { type, linkedId, total });
      } catch (error) {
        if (error instanceof ApiError) throw new Error(`${error.message}${error.data.params ? ` ${JSON.stringify(error.data.params)}` : ''}`);
        throw error;
      }
    },
  },
];
