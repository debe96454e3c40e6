import { describe, expect, it } from 'vitest';
import { canTransition, nextStatus, transactionEvents, transactionStatuses, transactionTransitions, TransitionRefusedError } from '../../../src/domain/transactions/states.js';

describe('transaction status table', () => {
  it.each(transactionTransitions.map((transition) => [transition.from, transition.event, transition.to, transition.because]))('%s --%s--> %s (%s)', (from, event, to) => {
    expect(nextStatus(from, event)).toBe(to);
  });

  it('refuses every pair not in the table with a named error', () => {
    let refused = 0;
    for (const from of transactionStatuses) {
      for (const event of transactionEvents) {
        if (canTransition(from, event)) continue;
        refused += 1;
        expect(() => nextStatus(from, event)).toThrow(TransitionRefusedError);
        try {
          nextStatus(from, event);
        } catch (error) {
          expect((error as TransitionRefusedError).code).toBe(`transition_refused_${from}_${event}`);
        }
      }
    }
    expect(refused).toBe(transactionStatuses.length * transactionEvents.length - transactionTransitions.length);
  });

  it('never leaves failed or expired, and only chargebacks move complete and locked', () => {
    for (const event of transactionEvents) {
      expect(canTransition('failed', event)).toBe(false);
      expect(canTransition('expired', event)).toBe(false);
    }
    expect(transactionTransitions.filter((t) => t.from === 'complete').map((t) => t.event)).toEqual(['chargeback']);
    expect(transactionTransitions.filter((t) => t.from === 'locked').map((t) => t.event)).toEqual(['chargeback', 'chargeback_closed']);
  });
});
