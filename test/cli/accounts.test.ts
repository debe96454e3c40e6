import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { totpCode, totpStep } from '../../src/domain/users/totp.js';
import { cli } from './helpers.js';
import { runCli } from '../../src/cli/main.js';

let t: TestContext;
let url: string;
beforeAll(async () => {
  t = await createTestContext();
  url = t.config.databaseUrl!;
});
afterAll(async () => t.close());

const login = (site: string, body: Record<string, string>) => t.app.inject({ method: 'POST', url: `/${site}/site-json/jwt-auth/v1/token`, payload: body });

describe('site, user, membership and token commands', () => {
  it('creates a site and an admin who can log in and use a CLI-made API token', async () => {
    const site = await cli(url, ['site', 'create', '--path', 'acme', '--name', 'Acme Travel']);
    expect(site.code).toBe(0);
    expect(site.json).toEqual({ id: expect.any(Number), path: 'acme', name: 'Acme Travel' });

    const user = await cli(url, ['user', 'create', '--site', 'acme', '--username', 'ana', '--password', 'correct horse', '--email', 'ana@acme.test', '--role', 'member_admin']);
    expect(user.code).toBe(0);
    expect(user.json).toMatchObject({ username: 'ana', site: 'acme', role: 'member_admin', read_only: false, platform_admin: false });
    expect(JSON.stringify(user.json)).not.toContain('correct horse');
    const hash = await t.db.one<{ password_hash: string }>("SELECT password_hash FROM users WHERE username = 'ana'");
    expect(hash.password_hash).toMatch(/^\$argon2id\$/);

    const answer = await login('acme', { username: 'ana', password: 'correct horse' });
    expect(answer.statusCode).toBe(200);
    expect(answer.json().default_site).toMatchObject({ path: 'acme', name: 'Acme Travel', usertype: 'member_admin' });

    const token = await cli(url, ['token', 'create', '--site', 'acme', '--username', 'ana', '--name', 'booking engine']);
    expect(token.code).toBe(0);
    expect(token.json.token).toMatch(/^tfat_/);
    const list = await t.app.inject({ url: '/acme/api-tokens', headers: { authorization: `Bearer ${token.json.token}` } });
    expect(list.json().map((record: { name: string }) => record.name)).toEqual(['booking engine']);
  });

  it('refuses bad input with a clear message and a non-zero exit, changing nothing', async () => {
    const cases: [string[], RegExp][] = [
      [['site', 'create', '--path', 'Bad Path', '--name', 'X'], /path must be/],
      [['site', 'create', '--path', 'acme', '--name', 'Again'], /already exists/],
      [['site', 'create', '--path', 'docs', '--name', 'X'], /reserved/],
      [['site', 'create', '--name', 'X'], /--path is required/],
      [['user', 'create', '--site', 'acme', '--username', 'bob', '--password', 'short', '--email', 'bob@acme.test', '--role', 'member'], /at least 8/],
      [['user', 'create', '--site', 'acme', '--username', 'bob', '--password', 'long enough', '--email', 'not-an-email', '--role', 'member'], /email/],
      [['user', 'create', '--site', 'acme', '--username', 'bob', '--password', 'long enough', '--email', 'bob@acme.test', '--role', 'owner'], /--role must be one of member_admin, member/],
      [['user', 'create', '--site', 'nowhere', '--username', 'bob', '--password', 'long enough', '--email', 'bob@acme.test', '--role', 'member'], /no site/],
      [['user', 'create', '--site', 'acme', '--username', 'ANA', '--password', 'long enough', '--email', 'x@acme.test', '--role', 'member'], /taken/],
      [['token', 'create', '--site', 'acme', '--username', 'nobody', '--name', 'x'], /no user/],
      [['site', 'create', '--path', 'x', '--name', 'y', '--bogus'], /unknown option --bogus/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(url, args);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toMatch(message);
    }
    expect((await t.db.query("SELECT 1 FROM users WHERE username = 'bob'")).length).toBe(0);
  });

  it('adds memberships, read-only ones included', async () => {
    await cli(url, ['site', 'create', '--path', 'beta', '--name', 'Beta']);
    const added = await cli(url, ['membership', 'add', '--site', 'beta', '--username', 'ana', '--role', 'member', '--read-only']);
    expect(added.code).toBe(0);
    expect(added.json).toEqual({ site: 'beta', username: 'ana', role: 'member', read_only: true });
    const answer = (await login('beta', { username: 'ana', password: 'correct horse' })).json();
    expect(answer).toMatchObject({ usertype: 'member', read_only: true, site_count: 2 });
  });

  it("keeps a site's last member who is not read-only, whom the payment modal makes its bookings as", async () => {
    // beta's only member so far is ana, read-only: the first member who can act comes in.
    await cli(url, ['user', 'create', '--site', 'beta', '--username', 'keeper', '--password', 'correct horse', '--email', 'keeper@beta.test', '--role', 'member']);
    const last = /the user is the last member of this site who is not read-only, the member the payment modal makes its bookings as: add another member who is not read-only first/;
    const removed = await cli(url, ['membership', 'remove', '--site', 'beta', '--username', 'keeper']);
    expect([removed.code, removed.json]).toEqual([1, undefined]);
    expect(removed.stderr).toMatch(new RegExp(`^trustfare membership remove: ${last.source}`));
    const madeReadOnly = await cli(url, ['membership', 'add', '--site', 'beta', '--username', 'keeper', '--role', 'member_admin', '--read-only']);
    expect(madeReadOnly.code).toBe(1);
    expect(madeReadOnly.stderr).toMatch(last);
    expect(await t.db.query("SELECT role, read_only FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.username = 'keeper'")).toEqual([{ role: 'member', read_only: false }]);
    // A read-only member can always go: the modal never acts as one.
    await cli(url, ['user', 'create', '--site', 'beta', '--username', 'reader', '--password', 'correct horse', '--email', 'reader@beta.test', '--role', 'member', '--read-only']);
    expect((await cli(url, ['membership', 'remove', '--site', 'beta', '--username', 'reader'])).code).toBe(0);
    // With a second member who can act, either may go; that one is then the last.
    await cli(url, ['user', 'create', '--site', 'beta', '--username', 'second', '--password', 'correct horse', '--email', 'second@beta.test', '--role', 'member_admin']);
    expect((await cli(url, ['membership', 'add', '--site', 'beta', '--username', 'keeper', '--role', 'member', '--read-only'])).code).toBe(0);
    expect((await cli(url, ['membership', 'remove', '--site', 'beta', '--username', 'second'])).code).toBe(1);
    expect((await cli(url, ['membership', 'add', '--site', 'beta', '--username', 'keeper', '--role', 'member'])).code).toBe(0);
  });

  it('removes a membership with its API tokens: adding the user back does not revive them', async () => {
    await cli(url, ['user', 'create', '--site', 'beta', '--username', 'leaver', '--password', 'correct horse', '--email', 'leaver@beta.test', '--role', 'member_admin']);
    const token = (await cli(url, ['token', 'create', '--site', 'beta', '--username', 'leaver', '--name', 'old'])).json.token as string;
    const channels = () => t.app.inject({ url: '/beta/site-json/vendor/v2/channels', headers: { authorization: `Bearer ${token}` } });
    expect((await channels()).statusCode).toBe(200);
    const removed = await cli(url, ['membership', 'remove', '--site', 'beta', '--username', 'leaver']);
    expect(removed.json).toEqual({ site: 'beta', username: 'leaver', removed: true, api_tokens_revoked: 1 });
    expect((await channels()).statusCode).toBe(401);
    expect((await cli(url, ['membership', 'add', '--site', 'beta', '--username', 'leaver', '--role', 'member'])).code).toBe(0);
    expect((await channels()).statusCode).toBe(401);
    // A removal made in SQL by an operator revokes them as well.
    const second = (await cli(url, ['token', 'create', '--site', 'beta', '--username', 'leaver', '--name', 'new'])).json.token as string;
    await t.db.query("DELETE FROM memberships WHERE user_id = (SELECT id FROM users WHERE username = 'leaver')");
    await cli(url, ['membership', 'add', '--site', 'beta', '--username', 'leaver', '--role', 'member']);
    expect((await t.app.inject({ url: '/beta/site-json/vendor/v2/channels', headers: { authorization: `Bearer ${second}` } })).statusCode).toBe(401);
    const again = await cli(url, ['membership', 'remove', '--site', 'beta', '--username', 'ana-nobody']);
    expect(again.code).toBe(1);
  });

  it('finds a user by any case of the name, as usernames are unique regardless of case', async () => {
    const token = await cli(url, ['token', 'create', '--site', 'acme', '--username', 'ANA', '--name', 'shouted']);
    expect(token.code).toBe(0);
    expect(token.json).toMatchObject({ site: 'acme', username: 'ana' });
    await t.db.query('DELETE FROM api_tokens WHERE id = $1', [token.json.id]);
  });

  it('enforces the API token limit from the CLI too', async () => {
    await cli(url, ['token', 'create', '--site', 'acme', '--username', 'ana', '--name', 'second']);
    const third = await cli(url, ['token', 'create', '--site', 'acme', '--username', 'ana', '--name', 'third']);
    expect(third.code).toBe(1);
    expect(third.stderr).toMatch(/at most 2 API tokens/);
  });

  it('reads a password from standard input, so it never appears on a command line', async () => {
    const stdin = Object.assign(Readable.from(['stdin horse battery\n', 'ignored second line\n']), {});
    const spy = vi.spyOn(process, 'stdin', 'get').mockReturnValue(stdin as unknown as typeof process.stdin);
    try {
      const created = await cli(url, ['user', 'create', '--site', 'acme', '--username', 'piped', '--password-stdin', '--email', 'piped@acme.test', '--role', 'member']);
      expect(created.code).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect((await login('acme', { username: 'piped', password: 'stdin horse battery' })).statusCode).toBe(200);
    // Both at once is a usage error (exit 2, as docs/cli.md says), for every command taking a password.
    const both = await cli(url, ['user', 'password', '--username', 'piped', '--password', 'x', '--password-stdin']);
    expect([both.code, both.stderr]).toEqual([2, 'trustfare user password: give --password or --password-stdin, not both (`trustfare user password --help` lists its options)']);
    const creating = await cli(url, ['user', 'create', '--site', 'acme', '--username', 'twice', '--password-stdin', '--password=x', '--email', 'twice@acme.test', '--role', 'member']);
    expect([creating.code, creating.stderr]).toEqual([2, 'trustfare user create: give --password or --password-stdin, not both (`trustfare user create --help` lists its options)']);
  });

  it('changes a password, which revokes refresh tokens', async () => {
    const before = (await login('acme', { username: 'ana', password: 'correct horse' })).json();
    const changed = await cli(url, ['user', 'password', '--username', 'ana', '--password', 'battery staple']);
    expect(changed.code).toBe(0);
    expect((await login('acme', { username: 'ana', password: 'correct horse' })).statusCode).toBe(401);
    expect((await login('acme', { username: 'ana', password: 'battery staple' })).statusCode).toBe(200);
    const refresh = await t.app.inject({ method: 'POST', url: '/acme/site-json/jwt-auth/v1/token/refresh', headers: { authorization: `Bearer ${before.refresh_token}` } });
    expect(refresh.statusCode).toBe(401);
  });

  it('enrols and confirms two-factor authentication, which revokes the refresh tokens obtained without a code', async () => {
    const before = (await login('acme', { username: 'ana', password: 'battery staple' })).json();
    const enrol = await cli(url, ['user', '2fa', 'enrol', '--username', 'ana']);
    expect(enrol.code).toBe(0);
    expect(enrol.json.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(enrol.json.otpauth_uri).toBe(`otpauth://totp/trustfare%3Aana?secret=${enrol.json.secret}&issuer=trustfare&algorithm=SHA1&digits=6&period=30`);
    const wrong = await cli(url, ['user', '2fa', 'confirm', '--username', 'ana', '--code', totpCode(enrol.json.secret, totpStep(new Date()) + 10)]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/does not match/);
    const confirm = await cli(url, ['user', '2fa', 'confirm', '--username', 'ana', '--code', totpCode(enrol.json.secret, totpStep(new Date()) - 1)]);
    expect(confirm.code).toBe(0);
    expect(confirm.json).toMatchObject({ two_factor_confirmed_at: expect.any(String), refresh_tokens_revoked: true });
    const refresh = await t.app.inject({ method: 'POST', url: '/acme/site-json/jwt-auth/v1/token/refresh', headers: { authorization: `Bearer ${before.refresh_token}` } });
    expect(refresh.statusCode).toBe(401);
    const withoutCode = await login('acme', { username: 'ana', password: 'battery staple' });
    expect(withoutCode.statusCode).toBe(401);
    const withCode = await login('acme', { username: 'ana', password: 'battery staple', otp: totpCode(enrol.json.secret, totpStep(new Date())) });
    expect(withCode.statusCode).toBe(200);
  });

  it('lets the operator say who may sign off payouts, shown as can_sign_off_payout at login', async () => {
    await cli(url, ['site', 'create', '--path', 'payouts', '--name', 'Payouts']);
    await cli(url, ['user', 'create', '--site', 'payouts', '--username', 'treasurer', '--password', 'long enough', '--email', 'tr@payouts.test', '--role', 'member_admin']);
    const flagAtLogin = async () => (await login('payouts', { username: 'treasurer', password: 'long enough' })).json().can_sign_off_payout;
    expect(await flagAtLogin()).toBe(false);
    const granted = await cli(url, ['user', 'set', '--username', 'TREASURER', '--can-sign-off-payout', 'true']);
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.json).toEqual({ username: 'treasurer', can_sign_off_payout: true });
    expect(await flagAtLogin()).toBe(true);
    const refused = await cli(url, ['user', 'set', '--username', 'treasurer', '--can-sign-off-payout', 'yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--can-sign-off-payout must be true or false/);
    expect((await cli(url, ['user', 'set', '--username', 'nobody', '--can-sign-off-payout', 'true'])).stderr).toMatch(/no user/);
    expect((await cli(url, ['user', 'set', '--username', 'treasurer', '--can-sign-off-payout', 'false'])).code).toBe(0);
    expect(await flagAtLogin()).toBe(false);
  });

  it('creates platform admins', async () => {
    const admin = await cli(url, ['user', 'create', '--site', 'acme', '--username', 'ops', '--password', 'operator pass', '--email', 'ops@trustfare.test', '--role', 'member_admin', '--platform-admin']);
    expect(admin.json.platform_admin).toBe(true);
    expect((await t.db.one<{ is_platform_admin: boolean }>("SELECT is_platform_admin FROM users WHERE username = 'ops'")).is_platform_admin).toBe(true);
  });

  it('migrate reports the applied migrations', async () => {
    const result = await cli(url, ['migrate']);
    expect(result.code).toBe(0);
    expect(result.json.applied).toEqual([]);
    expect(result.json.migrations).toContain('002_auth.sql');
  });
});

describe('configuration problems', () => {
  it('exits 1 with one clear line when production secrets are missing', async () => {
    const saved = { ...process.env };
    const errors: string[] = [];
    const original = console.error;
    console.error = (...parts: unknown[]) => void errors.push(parts.join(' '));
    try {
      process.env = { PATH: saved.PATH, NODE_ENV: 'production', DATABASE_URL: url };
      expect(await runCli(['site', 'create', '--path', 'prod', '--name', 'Prod'])).toBe(1);
    } finally {
      console.error = original;
      process.env = saved;
    }
    expect(errors.join('\n')).toMatch(/^trustfare site create: NODE_ENV=production requires JWT_SECRET/);
    expect((await t.db.query("SELECT 1 FROM sites WHERE path = 'prod'")).length).toBe(0);
  });
});
