import type { Db } from '../../storage/db.js';
import { limits } from '../../limits.js';
import { CardDecryptionError, rewrapDataKey, type VaultKeys } from './crypto.js';

export interface RotationResult {
  activeKeyId: string;
  /** Cards whose data key was re-wrapped under the active key by this run. */
  rewrapped: number;
  /** Cards already under the active key. */
  alreadyCurrent: number;
  /** Cards that could not be re-wrapped (their key is missing from CARD_KEYS, or the data fails authentication). */
  failed: { cardId: number; keyId: string; reason: string }[];
  batches: number;
}

interface WrappedRow {
  id: number;
  site_id: number;
  key_id: string;
  wrapped_key: Buffer;
}

/**
 * Re-wraps every card data key not under the active key, in batches of `batchSize`, each batch
 * one short database transaction holding row locks only on its own cards, so the server keeps
 * capturing and charging meanwhile. The PAN ciphertext is untouched (the data key is the same).
 * Walks ids upwards, so every row is visited once and the loop ends.
 */
export async function rotateCardKeys(db: Db, keys: VaultKeys, options: { batchSize?: number } = {}): Promise<RotationResult> {
  const batchSize = options.batchSize ?? limits.keyRotationBatchSize;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > limits.keyRotationBatchSizeMax) {
    throw new Error(`batch size must be 1 to ${limits.keyRotationBatchSizeMax}`);
  }
  const result: RotationResult = { activeKeyId: keys.activeKeyId, rewrapped: 0, alreadyCurrent: 0, failed: [], batches: 0 };
  const { count } = await db.one<{ count: number }>('SELECT count(*)::bigint AS count FROM cards WHERE key_id = $1', [keys.activeKeyId]);
  result.alreadyCurrent = count;
  let afterId = 0;
  for (;;) {
    const batch = await db.transaction(async (tx) => {
      const rows = await tx.query<WrappedRow & Record<string, unknown>>(
        'SELECT id, site_id, key_id, wrapped_key FROM cards WHERE id > $1 AND key_id <> $2 ORDER BY id LIMIT $3 FOR UPDATE',
        [afterId, keys.activeKeyId, batchSize],
      );
      for (const row of rows) {
        try {
          const next = rewrapDataKey(keys, { siteId: row.site_id, cardId: row.id }, { keyId: row.key_id, wrappedKey: row.wrapped_key });
          await tx.query('UPDATE cards SET key_id = $2, wrapped_key = $3, updated_at = now() WHERE id = $1', [row.id, next.keyId, next.wrappedKey]);
          result.rewrapped++;
        } catch (error) {
          if (!(error instanceof CardDecryptionError)) throw error;
          result.failed.push({ cardId: row.id, keyId: row.key_id, reason: error.message });
        }
      }
      return rows;
    });
    if (batch.length === 0) break;
    result.batches++;
    afterId = batch[batch.length - 1]!.id;
  }
  return result;
}
