import type { Command } from '../command.js';
import { required } from '../command.js';
import { findSite, findUser } from '../../domain/users/accounts.js';
import { createApiToken } from '../../domain/users/api-tokens.js';

const tokenCreate: Command = {
  name: 'token create',
  summary: 'create an API token for a user in a site (printed once): --site P --username U --name N [--expires-at Y-m-d]',
  options: { site: { type: 'string' }, username: { type: 'string' }, name: { type: 'string' }, 'expires-at': { type: 'string' } },
  required: ['site', 'username', 'name'],
  async run(context, options) {
    const site = await findSite(context.db, required(options, 'site'));
    const user = await findUser(context.db, required(options, 'username'));
    const expiresAt = typeof options['expires-at'] === 'string' ? options['expires-at'] : null;
    const created = await createApiToken(context.db, { siteId: site.id, userId: user.id, name: required(options, 'name'), expiresAt, now: context.now() });
    return { id: created.id, site: site.path, username: user.username, token: created.token, expires_at: created.expires_at };
  },
};

export const commands: Command[] = [tokenCreate];
