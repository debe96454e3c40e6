import type { Command } from '../command.js';
import { findSite } from '../../domain/users/accounts.js';
import { recountSiteTotals, verifySiteTotals } from '../../storage/site-totals.js';

/**
 * `trustfare totals verify [--site P] [--repair]`: checks the list totals the database keeps per
 * site (migration 024) against a count of the rows; `--repair` counts every site afresh when one
 * is off, then checks again. Exits non-zero while a total is off.
 */
export const commands: Command[] = [
  {
    name: 'totals verify',
    summary: 'prove the kept bookings and transactions totals (X-Site-Total) match the rows; --repair recounts',
    options: { site: { type: 'string' }, repair: { type: 'boolean' } },
    async run(context, options) {
      const site = typeof options.site === 'string' ? await findSite(context.db, options.site) : undefined;
      const scope = site ? { siteId: site.id } : {};
      const found = await verifySiteTotals(context.db, scope);
      if (found.ok || options.repair !== true) {
        if (!found.ok) throw new Error(`${found.problems.length} kept total(s) are off (run with --repair to recount):\n${JSON.stringify(found, null, 2)}`);
        return found;
      }
      await recountSiteTotals(context.db);
      const after = await verifySiteTotals(context.db, scope);
      if (!after.ok) throw new Error(`the recount left ${after.problems.length} total(s) off:\n${JSON.stringify(after, null, 2)}`);
      return { ...after, repaired: found.problems };
    },
  },
];
