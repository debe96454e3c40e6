import { boundedInteger, type Command } from '../command.js';
import { limits } from '../../limits.js';
import { rotateCardKeys } from '../../domain/vault/index.js';

export const commands: Command[] = [
  {
    name: 'keys rotate',
    summary: 'Re-wrap every card data key under the first (active) CARD_KEYS key',
    options: { 'batch-size': { type: 'string' } },
    async run(context, options) {
      const batchSize = boundedInteger('batch-size', options['batch-size'] as string | undefined, { max: limits.keyRotationBatchSizeMax, fallback: limits.keyRotationBatchSize });
      const result = await rotateCardKeys(context.db, context.vault.keys, { batchSize });
      if (result.failed.length > 0) {
        throw new Error(`re-wrapped ${result.rewrapped} card(s) under ${result.activeKeyId}, but ${result.failed.length} failed (first: card ${result.failed[0]!.cardId} under key ${result.failed[0]!.keyId}: ${result.failed[0]!.reason}); keep every old key in CARD_KEYS until this succeeds`);
      }
      return result;
    },
  },
];
