import type { Db } from '../../storage/db.js';
import { limits } from '../../limits.js';
import { sandboxCodes } from './declines.js';
import { newAuthCode, type OperationRow } from './store.js';

/** What the hosted challenge page shows; nothing about the card beyond brand and last four. */
export interface ChallengeView {
  amount: number;
  currency: string;
  merchantName: string | null;
  /** The cardholder's language (a catalogue code), null when the payment named none. */
  language: string | null;
  cardBrand: string | null;
  cardLastFour: string | null;
  returnUrl: string;
  /** pending: buttons shown; done: already answered; expired: too late to answer. */
  state: 'pending' | 'done' | 'expired';
}

const lifetimeSql = `created_at < now() - make_interval(secs => ${limits.sandboxChallengeLifetimeSeconds})`;

export async function findChallenge(db: Db, challengeId: string): Promise<ChallengeView | null> {
  const row = await db.maybeOne<OperationRow & { expired: boolean } & Record<string, unknown>>(`SELECT *, ${lifetimeSql} AS expired FROM sandbox_operations WHERE challenge_id = $1`, [challengeId]);
  return row ? toView(row, row.expired) : null;
}

function toView(row: OperationRow, expired: boolean): ChallengeView {
  const state = row.challenge_result ? 'done' : expired ? 'expired' : 'pending';
  return {
    amount: row.amount,
    currency: row.currency.trim(),
    merchantName: row.merchant_name,
    language: row.language,
    cardBrand: row.card_brand,
    cardLastFour: row.card_last_four,
    returnUrl: row.return_url!,
    state,
  };
}

/**
 * Records the cardholder's answer once: "authenticate" applies the bank's answer decided at
 * authorisation time, "fail" declines with 3DS authentication failed. A second answer, or one
 * after the challenge expired, changes nothing. Returns the view after the change (null: unknown id).
 */
export async function completeChallenge(db: Db, challengeId: string, result: 'authenticate' | 'fail'): Promise<ChallengeView | null> {
  return db.transaction(async (tx) => {
    const row = await tx.maybeOne<OperationRow & { expired: boolean } & Record<string, unknown>>(`SELECT *, ${lifetimeSql} AS expired FROM sandbox_operations WHERE challenge_id = $1 FOR UPDATE`, [challengeId]);
    if (!row) return null;
    if (row.challenge_result || row.expired || row.status !== 'challenge') return toView(row, row.expired);
    const bank = row.after_challenge!;
    const answer = result === 'authenticate'
      ? { ...bank, message: bank.status === 'approved' ? `${bank.message}; 3-D Secure challenge passed` : bank.message }
      : { status: 'declined' as const, ...sandboxCodes.authenticationFailed };
    const updated = await tx.one<OperationRow & Record<string, unknown>>(
      `UPDATE sandbox_operations SET status = $2, code = $3, message = $4, auth_code = $5, challenge_result = $6, updated_at = now()
        WHERE challenge_id = $1 RETURNING *`,
      [challengeId, answer.status, answer.code, answer.message, answer.status === 'approved' ? newAuthCode() : null, result === 'authenticate' ? 'authenticated' : 'failed'],
    );
    return toView(updated, false);
  });
}
