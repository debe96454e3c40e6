import type { Command } from '../command.js';
import { findSite } from '../../domain/users/accounts.js';
import { verifyLedger } from '../../domain/ledger/verify.js';

/**
 * `trustfare ledger verify [--site P]`: sums the ledger from its entries and checks every
 * invariant of docs/ledger.md. Prints the report; exits non-zero when anything is off.
 */
export const commands: Command[] = [
  {
    name: 'ledger verify',
    summary: 'prove the ledger balances (per transaction, channel and currency) and matches bookings',
    options: { site: { type: 'string' } },
    async run(context, options) {
      const site = typeof options.site === 'string' ? await findSite(context.db, options.site) : undefined;
      const report = await verifyLedger(context.db, site ? { siteId: site.id } : {});
      const count = report.more_problems ? `${report.problems.length} or more problems (the first listed)` : `${report.problems.length} problem(s)`;
      if (!report.ok) throw new Error(`the ledger has ${count}:\n${JSON.stringify(report, null, 2)}`);
      return report;
    },
  },
];
