import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/context.js';
import { createSite } from './support/fixtures.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

describe('health and conventions', () => {
  it('answers /healthz and /readyz', async () => {
    expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });

  it('answers unknown routes with rest_no_route in the error shape', async () => {
    const response = await t.app.inject({ url: '/nope/site-json/vendor/v2/unknown' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ code: 'rest_no_route', message: expect.any(String), data: { status: 404 } });
    expect(response.headers['x-request-id']).toBeTruthy();
  });
});

describe('input that PostgreSQL cannot store', () => {
  it('refuses NUL characters in bodies and query strings with 400, not 500', async () => {
    const login = await t.app.inject({
      method: 'POST',
      url: '/any/site-json/jwt-auth/v1/token',
      headers: { 'content-type': 'application/json' },
      payload: '{"username":"ada\\u0000","password":"x"}',
    });
    expect(login.statusCode).toBe(400);
    expect(login.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { username: expect.any(String) } } });
    const site = await createSite(t.db);
    const list = await t.app.inject({ url: `/${site.path}/site-json/vendor/v2/bookings?surname=a%00b`, headers: site.headers });
    expect(list.statusCode).toBe(400);
  });
});
