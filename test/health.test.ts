import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/context.js';

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
