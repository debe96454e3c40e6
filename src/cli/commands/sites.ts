import type { Command } from '../command.js';
import { required } from '../command.js';
import { createSite } from '../../domain/users/accounts.js';

const siteCreate: Command = {
  name: 'site create',
  summary: 'create a site (tenant): --path P --name N',
  options: { path: { type: 'string' }, name: { type: 'string' } },
  required: ['path', 'name'],
  async run(context, options) {
    const site = await createSite(context.db, { path: required(options, 'path'), name: required(options, 'name') });
    return { id: site.id, path: site.path, name: site.name };
  },
};

export const commands: Command[] = [siteCreate];
