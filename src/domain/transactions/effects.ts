import { ledgerAccounts as accounts, transfer, type Posting } from '../ledger/postings.js';
import type { TransactionType } from './types.js';

/**
 * What a transaction does to the books once it is complete: its ledger postings and the change
 * to each booking's money totals. This is the seam the allocations and forex work extends
 * (extra postings moving part of the money to other channels); docs/ledger.md lists the
 * entries per type.
 */

export interface MoneyFacts {
  type: TransactionType;
  channelId: number;
  currency: string;
  total: number;
  /** For capture and void: the authorisation's full amount, whose hold is released. */
  authorizationTotal?: number;
}

export function completionPostings(facts: MoneyFacts): Posting[] {
  const on = { channelId: facts.channelId, currency: facts.currency };
  const amount = facts.total;
  switch (facts.type) {
    case 'purchase':
    case 'retained_purchase':
      return transfer({ ...on, debit: accounts.processorClearing, credit: accounts.channelFunds, amount });
    case 'authorize':
    case 'retained_authorize':
      return transfer({ ...on, debit: accounts.authorizationHolds, credit: accounts.authorizedFunds, amount });
    case 'capture':
      return [
        ...transfer({ ...on, debit: accounts.authorizedFunds, credit: accounts.authorizationHolds, amount: requireAuthorizationTotal(facts) }),
        ...transfer({ ...on, debit: accounts.processorClearing, credit: accounts.channelFunds, amount }),
      ];
    case 'void':
      return transfer({ ...on, debit: accounts.authorizedFunds, credit: accounts.authorizationHolds, amount: requireAuthorizationTotal(facts) });
    case 'refund':
      return transfer({ ...on, debit: accounts.channelFunds, credit: accounts.processorClearing, amount });
    case 'chargeback':
      return [
        ...transfer({ ...on, debit: accounts.chargebacksDisputed, credit: accounts.processorClearing, amount }),
        ...transfer({ ...on, debit: accounts.channelFunds, credit: accounts.chargebackReserve, amount }),
      ];
    case 'chargeback-reversal':
      return [
        ...transfer({ ...on, debit: accounts.processorClearing, credit: accounts.chargebacksDisputed, amount }),
        ...transfer({ ...on, debit: accounts.chargebackReserve, credit: accounts.channelFunds, amount }),
      ];
    case 'chargeback-override':
      return transfer({ ...on, debit: accounts.chargebackReserve, credit: accounts.chargebacksDisputed, amount });
    case 'vault':
      return [];
  }
}

function requireAuthorizationTotal(facts: MoneyFacts): number {
  if (facts.authorizationTotal === undefined) throw new Error(`${facts.type} needs the authorisation's total`);
  return facts.authorizationTotal;
}

/** Change to one booking's stored totals. */
export interface BookingDelta {
  bookingId: number;
  paid: number;
  authorized: number;
  lockedTransactions: number;
}

export interface ShareAmount {
  bookingId: number;
  total: number;
}

/**
 * Booking totals follow the ledger: `total_paid` moves with channel_funds and
 * `total_authorized` with authorized_funds, share by share.
 */
export function completionBookingDeltas(options: { type: TransactionType; shares: ShareAmount[]; authorizationShares?: ShareAmount[] }): BookingDelta[] {
  const deltas = new Map<number, BookingDelta>();
  const add = (shares: ShareAmount[], field: 'paid' | 'authorized', sign: 1 | -1) => {
    for (const share of shares) {
      const delta = deltas.get(share.bookingId) ?? { bookingId: share.bookingId, paid: 0, authorized: 0, lockedTransactions: 0 };
      delta[field] += sign * share.total;
      deltas.set(share.bookingId, delta);
    }
  };
  const own = options.shares;
  const authorization = options.authorizationShares ?? [];
  switch (options.type) {
    case 'purchase':
    case 'retained_purchase':
    case 'chargeback-reversal':
      add(own, 'paid', 1);
      break;
    case 'authorize':
    case 'retained_authorize':
      add(own, 'authorized', 1);
      break;
    case 'capture':
      add(own, 'paid', 1);
      add(authorization, 'authorized', -1);
      break;
    case 'void':
      add(authorization, 'authorized', -1);
      break;
    case 'refund':
    case 'chargeback':
      add(own, 'paid', -1);
      break;
    case 'chargeback-override':
    case 'vault':
      break;
  }
  return [...deltas.values()];
}

/** Types whose completed row keeps an amount others can act on (`total_remaining`). */
export function keepsRemaining(type: TransactionType): boolean {
  return type === 'purchase' || type === 'retained_purchase' || type === 'capture' || type === 'authorize' || type === 'retained_authorize' || type === 'chargeback';
}
