import { makeRoomForOne } from '../bounded.js';

/**
 * A principal this process authenticated, with what decides whether it may be used again without
 * reading the credential (issue 7: the look-up was the larger part of GET booking's statement).
 */
export interface RememberedPrincipal<P> {
  principal: P;
  /**
   * credential_epoch (migration 016) as read by the statement that authenticated it. The next
   * statement reads the counter again with the route's own read: any change to a token, user,
   * membership or site committed in between bumps it, and the request then authenticates afresh.
   */
  epoch: string;
  /** The last instant (ms) the credential is usable (an API token's expiry date, 23:59:59 GMT); null: no expiry. */
  liveUntilMs: number | null;
  /** When this process last refreshed the API token's last_used_at (ms). */
  touchedAtMs: number;
}

/** A bounded memory of principals by credential and site (per route and app: epochs of two databases never meet). */
export class PrincipalMemory<P> {
  private readonly entries = new Map<string, RememberedPrincipal<P>>();

  constructor(private readonly max: number) {}

  /** The principal remembered under `key`, unless its credential has expired by `nowMs`. */
  recall(key: string, nowMs: number): RememberedPrincipal<P> | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // Written so that an instant that did not parse (NaN) counts as expired, not as for ever.
    if (entry.liveUntilMs !== null && !(nowMs <= entry.liveUntilMs)) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  remember(key: string, entry: RememberedPrincipal<P>): void {
    if (!this.entries.has(key)) makeRoomForOne(this.entries, this.max);
    this.entries.set(key, entry);
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}
