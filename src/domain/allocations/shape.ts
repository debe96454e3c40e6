/**
 * The spec's "Allocation as returned". `currencies`/`total` are in the allocation's currency
 * (the transaction currency unless the request named the channel currency), `value` is what was
 * asked (cents for `flat`, basis points for `percent`), and `debit`/`credit` are the ledger
 * movement in the channel currency: taken from the paying channel, given to the target. On a
 * refund, each item is a reversal (`reversed: true`) and its debit is taken from the target.
 */
export interface AllocationJson {
  id: number;
  value: number;
  total: number;
  channels: number;
  currencies: string;
  operator: string;
  reversed: boolean;
  debit: { currencies: string; total: number };
  credit: { currencies: string; total: number };
}

/** A stored allocation or reversal row, camelCase (store.ts). */
export interface AllocationView {
  id: number;
  toChannelId: number;
  operator: string;
  value: number;
  currency: string;
  total: number;
  channelCurrency: string;
  channelTotal: number;
  reversed: boolean;
}

export function allocationJson(view: AllocationView): AllocationJson {
  return {
    id: view.id,
    value: view.value,
    total: view.total,
    channels: view.toChannelId,
    currencies: view.currency,
    operator: view.operator,
    reversed: view.reversed,
    debit: { currencies: view.channelCurrency, total: view.channelTotal },
    credit: { currencies: view.channelCurrency, total: view.channelTotal },
  };
}
