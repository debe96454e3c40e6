import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { apiPrefix, authPrefix, send } from './support.js';

/**
 * The refusals an integrator meets first, before any payment: each in the spec's shape
 * `{code, message, data: {status}}`, and each message saying what to send instead, since the
 * integrator has nothing else to go on.
 */

let t: TestContext;
let site: SiteFixture;
let other: SiteFixture;
beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db);
  other = await createSite(t.db);
});
afterAll(async () => t?.close());

const channels = () => `${apiPrefix(site.path)}/channels`;
const notLoggedIn = {
  code: 'rest_not_logged_in',
  message: 'You are not currently logged in: send an API token, or a JWT from the token endpoint, in the header Authorization: Bearer <token>.',
  data: { status: 401 },
};
const invalidToken = {
  code: 'jwt_auth_invalid_token',
  message: 'Invalid or expired token: send a current API token, or a new JWT from the token or token/refresh endpoint.',
  data: { status: 401 },
};
const invalidSite = {
  code: 'rest_post_invalid_id',
  message: 'Invalid site: the site path at the start of the URL is not one this credential belongs to.',
  data: { status: 404 },
};

describe('credentials', () => {
  it('no credential, another scheme, or the token without "Bearer": 401 saying how to send one', async () => {
    const sent: Array<Record<string, string>> = [{}, { authorization: `Basic ${Buffer.from('user:pw').toString('base64')}` }, { authorization: site.token }, { authorization: 'Bearer ' }];
    for (const headers of sent) {
      const answer = await send(t, 'GET', channels(), { headers });
      expect([headers, answer.statusCode, answer.json()]).toEqual([headers, 401, notLoggedIn]);
    }
  });

  it('an unknown API token, a tampered JWT, words that are no token: 401 saying which credential to send', async () => {
    const login = (await send(t, 'POST', `${authPrefix(site.path)}/token`, { body: { username: site.username, password: site.password } })).json() as { token: string };
    const [header, payload] = login.token.split('.');
    for (const token of ['tfat_nothing', `${header}.${payload}.tampered`, 'not a token']) {
      const answer = await send(t, 'GET', channels(), { headers: { authorization: `Bearer ${token}` } });
      expect([token, answer.statusCode, answer.json()]).toEqual([token, 401, invalidToken]);
    }
  });

  it("a valid credential on a site path it does not belong to (a typo, or another site's): 404 saying the path is at fault", async () => {
    for (const path of [`${site.path}x`, other.path]) {
      const answer = await send(t, 'GET', `${apiPrefix(path)}/channels`, { headers: site.headers });
      expect([path, answer.statusCode, answer.json()]).toEqual([path, 404, invalidSite]);
    }
  });
});

describe('bodies', () => {
  it('no body, or JSON that is not an object: 400 on `body` saying to send the fields as a JSON object', async () => {
    const bookings = `${apiPrefix(site.path)}/bookings`;
    const sent: Array<{ headers: Record<string, string>; payload?: string }> = [
      { headers: {} },
      ...['[]', 'null', '"Ada"', '42'].map((payload) => ({ headers: { 'content-type': 'application/json' }, payload })),
    ];
    for (const { headers, payload } of sent) {
      const answer = await t.app.inject({ method: 'POST', url: bookings, headers: { ...site.headers, ...headers }, ...(payload === undefined ? {} : { payload }) });
      expect([payload, answer.statusCode, answer.json()]).toEqual([payload, 400, {
        code: 'rest_invalid_param',
        message: 'Invalid parameter(s): body',
        data: { status: 400, params: { body: 'must be a JSON object of the fields, sent with Content-Type: application/json' } },
      }]);
    }
  });
});
