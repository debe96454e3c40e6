import { createHash, hkdfSync } from 'node:crypto';

/**
 * `hash` = hex sha256( hex sha256("id&status&total&created") + key ), where `created` is the
 * wire `created` (GMT `YYYY-MM-DD HH:MM:SS`) and key is the channel's `channel_secret`, or the
 * server's key for it (serverHashKey) when the channel has none (decisions.md). Integrators verify
 * a `transaction_logged` payload by recomputing it.
 */
export function transactionHash(fields: { id: number; status: string; total: number; created: string }, key: string): string {
  const inner = createHash('sha256').update(`${fields.id}&${fields.status}&${fields.total}&${fields.created}`).digest('hex');
  return createHash('sha256').update(inner + key).digest('hex');
}

const serverHashKeys = new WeakMap<Uint8Array, string>();

/**
 * The key of the hashes of channels without a `channel_secret`: derived from SIGNING_SECRET for
 * this use alone (HKDF, as the TOTP seal's key is), base64. The signing secret itself went into
 * every such hash, so one secret served two purposes; no integrator can verify these hashes
 * anyway (they know no server secret), so nothing they check changes.
 */
export function serverHashKey(signingSecret: Uint8Array): string {
  let key = serverHashKeys.get(signingSecret);
  if (key === undefined) {
    key = Buffer.from(hkdfSync('sha256', signingSecret, Buffer.alloc(0), 'trustfare transaction hash v1', 32)).toString('base64');
    serverHashKeys.set(signingSecret, key);
  }
  return key;
}
