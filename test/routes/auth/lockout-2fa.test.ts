import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../support/context.js';
import { createSite, type SiteFixture } from '../../support/fixtures.js';
import { confirmTwoFactor, enrolTwoFactor } from '../../../src/domain/users/accounts.js';
import { totpCode, totpStep } from '../../../src/domain/users/totp.js';
import { limits } from '../../../src/limits.js';
import { authPath, postToken } from './helpers.js';

let t: TestContext;
// A clock the tests move: lock-outs and TOTP steps follow context.now().
let clock = new Date();
beforeAll(async () => {
  t = await createTestContext({ now: () => clock });
});
afterAll(async () => t.close());

async function failTimes(site: SiteFixture, username: string, times: number) {
  const answers = [];
  for (let i = 0; i < times; i++) answers.push(await postToken(t, site.path, { username, password: `wrong-${i}-password` }));
  return answers;
}

describe('lock-out after repeated failures', () => {
  it(`locks a name after ${limits.loginFailuresMax} failures, even for the right password, then unlocks`, async () => {
    const site = await createSite(t.db);
    const answers = await failTimes(site, site.username, limits.loginFailuresMax);
    expect(answers.slice(0, -1).every((answer) => answer.statusCode === 401)).toBe(true);
    const last = answers.at(-1)!;
    expect(last.statusCode).toBe(429);
    expect(last.json()).toMatchObject({ code: 'rest_too_many_requests', data: { status: 429 } });
    expect(Number(last.headers['retry-after'])).toBe(limits.loginLockoutMinutes * 60);

    const right = await postToken(t, site.path, { username: site.username, password: site.password });
    expect(right.statusCode).toBe(429);
    const cardVault = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/cardvaultuser'), payload: { username: site.username, password: site.password } });
    expect(cardVault.statusCode).toBe(429);

    clock = new Date(clock.getTime() + (limits.loginLockoutMinutes * 60 + 1) * 1000);
    expect((await postToken(t, site.path, { username: site.username, password: site.password })).statusCode).toBe(200);
  });

  it('answers an unknown name exactly like a known one, lock-out included', async () => {
    const site = await createSite(t.db);
    const known = await failTimes(site, site.username, limits.loginFailuresMax + 1);
    const unknown = await failTimes(site, `ghost-${site.username}`, limits.loginFailuresMax + 1);
    expect(unknown.map((answer) => answer.statusCode)).toEqual(known.map((answer) => answer.statusCode));
    expect(unknown.map((answer) => answer.json())).toEqual(known.map((answer) => answer.json()));
    expect(unknown.at(-1)!.headers['retry-after']).toBe(known.at(-1)!.headers['retry-after']);
  });

  it('a success clears the count', async () => {
    const site = await createSite(t.db);
    await failTimes(site, site.username, limits.loginFailuresMax - 1);
    expect((await postToken(t, site.path, { username: site.username, password: site.password })).statusCode).toBe(200);
    const again = await failTimes(site, site.username, limits.loginFailuresMax - 1);
    expect(again.every((answer) => answer.statusCode === 401)).toBe(true);
  });

  it('bounds the passwords checked when guesses arrive at once, from many addresses', async () => {
    const site = await createSite(t.db);
    const guesses = limits.loginFailuresMax * 3;
    const answers = await Promise.all(
      Array.from({ length: guesses }, (_, i) =>
        t.app.inject({ method: 'POST', url: authPath(site.path, 'token'), payload: { username: site.username, password: `parallel-${i}-guess` }, remoteAddress: `10.1.${Math.floor(i / 250)}.${i % 250}` }),
      ),
    );
    const statuses = answers.map((answer) => answer.statusCode);
    // Only the first loginFailuresMax - 1 guesses may be answered "incorrect"; every other one is the lock-out.
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(limits.loginFailuresMax - 1);
    expect(statuses.filter((status) => status !== 401).every((status) => status === 429)).toBe(true);
    expect((await postToken(t, site.path, { username: site.username, password: site.password })).statusCode).toBe(429);
  });

  it('does not count the right password sent to a site the user is not a member of; a wrong one there counts', async () => {
    const site = await createSite(t.db);
    const other = await createSite(t.db);
    for (const path of [other.path, 'no-such-site']) {
      for (let i = 0; i < limits.loginFailuresMax + 2; i++) {
        const answer = await postToken(t, path, { username: site.username, password: site.password });
        // The answer of a wrong password: nothing tells the password was right.
        expect(answer.statusCode).toBe(401);
        expect(answer.json()).toMatchObject({ code: 'rest_not_logged_in', message: 'The username or password is incorrect.' });
      }
    }
    expect((await postToken(t, site.path, { username: site.username, password: site.password })).statusCode).toBe(200);
    const wrong = await failTimes(other, site.username, limits.loginFailuresMax);
    expect(wrong.at(-1)!.statusCode).toBe(429);
    expect((await postToken(t, site.path, { username: site.username, password: site.password })).statusCode).toBe(429);
  });

  it('counts names case-insensitively', async () => {
    const site = await createSite(t.db);
    await failTimes(site, site.username.toUpperCase(), limits.loginFailuresMax);
    expect((await postToken(t, site.path, { username: site.username, password: site.password })).statusCode).toBe(429);
  });
});

describe('two-factor authentication', () => {
  async function enrolled(options: { role?: 'member_admin' | 'member' } = {}) {
    const site = await createSite(t.db, options);
    const { secret } = await enrolTwoFactor(t.db, { userId: site.userId, username: site.username, signingSecret: t.config.secrets.signingSecret, issuer: 'trustfare' });
    // Confirm with the previous step's code so the current one is still unused.
    const confirmAt = new Date(clock.getTime() - 30_000);
    await confirmTwoFactor(t.db, { userId: site.userId, code: totpCode(secret, totpStep(confirmAt)), signingSecret: t.config.secrets.signingSecret, now: confirmAt });
    return { site, secret };
  }

  it('keeps 2FA optional until confirmed', async () => {
    const site = await createSite(t.db);
    await enrolTwoFactor(t.db, { userId: site.userId, username: site.username, signingSecret: t.config.secrets.signingSecret, issuer: 'trustfare' });
    expect((await postToken(t, site.path, { username: site.username, password: site.password })).statusCode).toBe(200);
  });

  it('requires otp once confirmed, pointing to API tokens', async () => {
    const { site } = await enrolled();
    const response = await postToken(t, site.path, { username: site.username, password: site.password });
    expect(response.statusCode).toBe(401);
    const body = response.json();
    expect(body).toMatchObject({ code: 'rest_not_logged_in', data: { status: 401, two_factor_required: true } });
    expect(body.message).toContain('API token');
    expect(body.message).toContain(`/${site.path}/api-tokens`);
  });

  it('points a member, who may not create API tokens (403), to the operator instead of POST api-tokens', async () => {
    const { site } = await enrolled({ role: 'member' });
    const response = await postToken(t, site.path, { username: site.username, password: site.password });
    expect(response.json()).toMatchObject({ code: 'rest_not_logged_in', data: { status: 401, two_factor_required: true } });
    expect(response.json().message).not.toContain('/api-tokens');
    expect(response.json().message).toContain('trustfare token create');
    const refused = await t.app.inject({ method: 'POST', url: `/${site.path}/api-tokens`, headers: site.headers, payload: { name: 'integration' } });
    expect(refused.statusCode).toBe(403);
  });

  it('accepts the current code once, and reports two_factor_confirmed_at', async () => {
    const { site, secret } = await enrolled();
    const otp = totpCode(secret, totpStep(clock));
    const response = await postToken(t, site.path, { username: site.username, password: site.password, otp });
    expect(response.statusCode).toBe(200);
    expect(response.json().two_factor_confirmed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    const replay = await postToken(t, site.path, { username: site.username, password: site.password, otp });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().message).toMatch(/already used/);
  });

  it('accepts one step of drift and refuses two', async () => {
    const { site, secret } = await enrolled();
    const ahead = totpCode(secret, totpStep(clock) + 1);
    expect((await postToken(t, site.path, { username: site.username, password: site.password, otp: ahead })).statusCode).toBe(200);
    const farAhead = totpCode(secret, totpStep(clock) + 3);
    expect((await postToken(t, site.path, { username: site.username, password: site.password, otp: farAhead })).statusCode).toBe(401);
  });

  it('refuses a wrong code and counts it towards the lock-out', async () => {
    const { site, secret } = await enrolled();
    const good = totpCode(secret, totpStep(clock));
    const wrong = good === '000000' ? '111111' : '000000';
    const answers = [];
    for (let i = 0; i < limits.loginFailuresMax; i++) answers.push(await postToken(t, site.path, { username: site.username, password: site.password, otp: wrong }));
    expect(answers[0]!.statusCode).toBe(401);
    expect(answers.at(-1)!.statusCode).toBe(429);
  });

  it('requires the code for the vaulting-app token too', async () => {
    const { site } = await enrolled();
    const response = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/cardvaultuser'), payload: { username: site.username, password: site.password } });
    expect(response.statusCode).toBe(401);
    expect(response.json().data.two_factor_required).toBe(true);
  });

  it('ends the refresh tokens and JWTs obtained with the password alone when 2FA is confirmed', async () => {
    const site = await createSite(t.db);
    const before = (await postToken(t, site.path, { username: site.username, password: site.password })).json();
    const refresh = () => t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${before.refresh_token}` } });
    const channels = () => t.app.inject({ url: `/${site.path}/site-json/vendor/v2/channels`, headers: { authorization: `Bearer ${before.token}` } });
    expect((await refresh()).statusCode).toBe(200);
    expect((await channels()).statusCode).toBe(200);

    const { secret } = await enrolTwoFactor(t.db, { userId: site.userId, username: site.username, signingSecret: t.config.secrets.signingSecret, issuer: 'trustfare' });
    // Enrolling alone changes nothing: 2FA is not required until confirmed.
    expect((await refresh()).statusCode).toBe(200);
    clock = new Date(clock.getTime() + 2000);
    await confirmTwoFactor(t.db, { userId: site.userId, code: totpCode(secret, totpStep(clock) - 1), signingSecret: t.config.secrets.signingSecret, now: clock });

    for (const response of [await refresh(), await channels()]) {
      expect(response.statusCode).toBe(401);
      expect(response.json().code).toBe('jwt_auth_invalid_token');
    }
    // With the code, the user logs in again and the new tokens work.
    const after = await postToken(t, site.path, { username: site.username, password: site.password, otp: totpCode(secret, totpStep(clock)) });
    expect(after.statusCode).toBe(200);
    const renewed = await t.app.inject({ method: 'POST', url: authPath(site.path, 'token/refresh'), headers: { authorization: `Bearer ${after.json().refresh_token}` } });
    expect(renewed.statusCode).toBe(200);
    expect((await t.app.inject({ url: `/${site.path}/site-json/vendor/v2/channels`, headers: { authorization: `Bearer ${renewed.json().token}` } })).statusCode).toBe(200);
  });

  it('refuses to confirm with a wrong code', async () => {
    const site = await createSite(t.db);
    const { secret } = await enrolTwoFactor(t.db, { userId: site.userId, username: site.username, signingSecret: t.config.secrets.signingSecret, issuer: 'trustfare' });
    const wrong = totpCode(secret, totpStep(clock) + 5);
    await expect(confirmTwoFactor(t.db, { userId: site.userId, code: wrong, signingSecret: t.config.secrets.signingSecret, now: clock })).rejects.toThrow(/does not match/);
    const row = await t.db.one<{ two_factor_confirmed_at: Date | null; totp_secret: string }>('SELECT two_factor_confirmed_at, totp_secret FROM users WHERE id = $1', [site.userId]);
    expect(row.two_factor_confirmed_at).toBeNull();
    expect(row.totp_secret).not.toContain(secret);
  });
});
