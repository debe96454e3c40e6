import type { Command, CommandContext } from '../command.js';
import { booleanOption, passwordOption, passwordOptions, passwordRequirement, required } from '../command.js';
import { confirmTwoFactor, createUser, enrolTwoFactor, findSite, findUser, removeMembership, roles, setCanSignOffPayout, setMembership, setPassword, type Role } from '../../domain/users/accounts.js';

function roleOption(options: Record<string, string | boolean | undefined>): Role {
  const role = required(options, 'role');
  if (!(roles as readonly string[]).includes(role)) throw new Error(`--role must be one of ${roles.join(', ')}`);
  return role as Role;
}

const userCreate: Command = {
  name: 'user create',
  summary: 'create a user in a site: --site P --username U --password W|--password-stdin --email E --role member_admin|member [--read-only] [--platform-admin] [--display-name N]',
  options: {
    site: { type: 'string' },
    username: { type: 'string' },
    ...passwordOptions,
    email: { type: 'string' },
    role: { type: 'string' },
    'display-name': { type: 'string' },
    'read-only': { type: 'boolean' },
    'platform-admin': { type: 'boolean' },
  },
  required: ['site', 'username', passwordRequirement, 'email', 'role'],
  async run(context, options) {
    const role = roleOption(options);
    const sitePath = required(options, 'site');
    const password = await passwordOption(options);
    // One transaction: a refused membership leaves no user behind.
    return context.db.transaction(async (tx) => {
      const site = await findSite(tx, sitePath);
      const user = await createUser(tx, {
        username: required(options, 'username'),
        password,
        email: required(options, 'email'),
        ...(typeof options['display-name'] === 'string' ? { displayName: options['display-name'] } : {}),
        isPlatformAdmin: options['platform-admin'] === true,
      });
      await setMembership(tx, { siteId: site.id, userId: user.id, role, readOnly: options['read-only'] === true });
      return { id: user.id, username: user.username, email: user.email, display_name: user.displayName, site: site.path, role, read_only: options['read-only'] === true, platform_admin: user.isPlatformAdmin };
    });
  },
};

const membershipAdd: Command = {
  name: 'membership add',
  summary: "add a user to a site, or change the user's role there: --site P --username U --role R [--read-only]",
  options: { site: { type: 'string' }, username: { type: 'string' }, role: { type: 'string' }, 'read-only': { type: 'boolean' } },
  required: ['site', 'username', 'role'],
  async run(context, options) {
    const role = roleOption(options);
    const site = await findSite(context.db, required(options, 'site'));
    const user = await findUser(context.db, required(options, 'username'));
    await context.db.transaction((tx) => setMembership(tx, { siteId: site.id, userId: user.id, role, readOnly: options['read-only'] === true }));
    return { site: site.path, username: user.username, role, read_only: options['read-only'] === true };
  },
};

const membershipRemove: Command = {
  name: 'membership remove',
  summary: "remove a user from a site; the user's API tokens there are revoked: --site P --username U",
  options: { site: { type: 'string' }, username: { type: 'string' } },
  required: ['site', 'username'],
  async run(context, options) {
    const site = await findSite(context.db, required(options, 'site'));
    const user = await findUser(context.db, required(options, 'username'));
    const { apiTokensRevoked } = await context.db.transaction((tx) => removeMembership(tx, { siteId: site.id, userId: user.id }));
    return { site: site.path, username: user.username, removed: true, api_tokens_revoked: apiTokensRevoked };
  },
};

const userPassword: Command = {
  name: 'user password',
  summary: "set a user's password (revokes the user's refresh tokens, lifts a lock-out): --username U --password W|--password-stdin",
  options: { username: { type: 'string' }, ...passwordOptions },
  required: ['username', passwordRequirement],
  async run(context, options) {
    const user = await findUser(context.db, required(options, 'username'));
    const password = await passwordOption(options);
    await context.db.transaction((tx) => setPassword(tx, user.id, password));
    return { username: user.username, password_changed: true, refresh_tokens_revoked: true };
  },
};

/**
 * The spec's `can_sign_off_payout` of the user object: a mark the operator gives a user (payouts
 * are signed off outside this service), shown to integrators at login, never changed by a site.
 */
const userSet: Command = {
  name: 'user set',
  summary: 'set what the operator states of a user: --username U --can-sign-off-payout true|false',
  options: { username: { type: 'string' }, 'can-sign-off-payout': { type: 'string' } },
  required: ['username', 'can-sign-off-payout'],
  async run(context, options) {
    const canSignOffPayout = booleanOption('can-sign-off-payout', required(options, 'can-sign-off-payout'));
    const user = await findUser(context.db, required(options, 'username'));
    await setCanSignOffPayout(context.db, { userId: user.id, canSignOffPayout });
    return { username: user.username, can_sign_off_payout: canSignOffPayout };
  },
};

async function userOf(context: CommandContext, options: Record<string, string | boolean | undefined>) {
  return findUser(context.db, required(options, 'username'));
}

const twoFactorEnrol: Command = {
  name: 'user 2fa enrol',
  summary: 'start two-factor enrolment: prints the TOTP secret and otpauth URI (--username U)',
  options: { username: { type: 'string' } },
  required: ['username'],
  async run(context, options) {
    const user = await userOf(context, options);
    const enrolment = await enrolTwoFactor(context.db, { userId: user.id, username: user.username, signingSecret: context.config.secrets.signingSecret, issuer: 'trustfare' });
    return { username: user.username, ...enrolment, next: `trustfare user 2fa confirm --username ${user.username} --code <6-digit code>` };
  },
};

const twoFactorConfirm: Command = {
  name: 'user 2fa confirm',
  summary: "confirm two-factor enrolment with a current code; logins then need an otp, and the user's refresh tokens and JWTs issued before end (--username U --code C)",
  options: { username: { type: 'string' }, code: { type: 'string' } },
  required: ['username', 'code'],
  async run(context, options) {
    const user = await userOf(context, options);
    const code = required(options, 'code');
    const confirmed = await context.db.transaction((tx) => confirmTwoFactor(tx, { userId: user.id, code, signingSecret: context.config.secrets.signingSecret, now: context.now() }));
    return { username: user.username, ...confirmed, refresh_tokens_revoked: true };
  },
};

export const commands: Command[] = [userCreate, membershipAdd, membershipRemove, userPassword, userSet, twoFactorEnrol, twoFactorConfirm];
