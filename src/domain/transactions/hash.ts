import { createHash } from 'node:crypto';

/**
 * `hash` = hex sha256( hex sha256("id&status&total&created") + key ), where `created` is the
 * wire `created` (GMT `YYYY-MM-DD HH:MM:SS`) and key is the channel's `channel_secret`, or the
 * server's signing secret (base64) when the channel has none (decisions.md). Integrators verify
 * a `transaction_logged` payload by recomputing it.
 */
export function transactionHash(fields: { id: number; status: string; total: number; created: string }, key: string): string {
  const inner = createHash('sha256').update(`${fields.id}&${fields.status}&${fields.total}&${fields.created}`).digest('hex');
  return createHash('sha256').update(inner + key).digest('hex');
}
