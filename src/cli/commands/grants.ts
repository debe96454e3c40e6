import type { Command, CommandContext } from '../command.js';
import { required } from '../command.js';
import { grantAllocation, listAllocationGrants, revokeAllocationGrant } from '../../domain/allocations/grants.js';
import { gmtDateTime } from '../../domain/gmt.js';
import { findSite } from '../../domain/users/accounts.js';

async function siteIdOf(context: CommandContext, path: string): Promise<number> {
  return (await findSite(context.db, path)).id;
}

const pairOptions = { 'from-site': { type: 'string' as const }, 'to-site': { type: 'string' as const } };

/** The two sites a grant joins: their paths as given (for the answer) and their ids. */
async function sitePairOf(context: CommandContext, options: Record<string, string | boolean | undefined>) {
  const fromSite = required(options, 'from-site');
  const toSite = required(options, 'to-site');
  return { fromSite, toSite, ids: { fromSiteId: await siteIdOf(context, fromSite), toSiteId: await siteIdOf(context, toSite) } };
}

const grant: Command = {
  name: 'grant allocate',
  summary: 'let channels of --from-site allocate funds to channels of --to-site',
  options: pairOptions,
  required: ['from-site', 'to-site'],
  async run(context, options) {
    const { fromSite, toSite, ids } = await sitePairOf(context, options);
    const result = await grantAllocation(context.db, ids);
    return { from_site: fromSite, to_site: toSite, granted: true, created: result.created };
  },
};

const revoke: Command = {
  name: 'grant revoke',
  summary: 'withdraw an allocation grant (existing allocations stay)',
  options: pairOptions,
  required: ['from-site', 'to-site'],
  async run(context, options) {
    const { fromSite, toSite, ids } = await sitePairOf(context, options);
    const result = await revokeAllocationGrant(context.db, ids);
    if (!result.revoked) throw new Error(`${fromSite} holds no grant to allocate to ${toSite}`);
    return { from_site: fromSite, to_site: toSite, revoked: true };
  },
};

const list: Command = {
  name: 'grant list',
  summary: 'list allocation grants',
  async run(context) {
    const grants = await listAllocationGrants(context.db);
    return grants.map((row) => ({ from_site: row.fromSite, to_site: row.toSite, created: gmtDateTime(row.createdAt) }));
  },
};

export const commands: Command[] = [grant, revoke, list];
