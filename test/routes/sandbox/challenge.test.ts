import { limits } from '../../../src/limits.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../support/context.js';
import type { AuthoriseRequest } from '../../../src/processor/index.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

const returnUrl = 'https://shop.example/payments/return?tx=42';

async function challenge(overrides: Partial<AuthoriseRequest> = {}) {
  const request: AuthoriseRequest = {
    reference: randomUUID(),
    amount: 12_345,
    currency: 'EUR',
    card: { pan: '5200000000002235', expiryMonth: 12, expiryYear: 2040, cvv: '123' },
    capture: true,
    mode: 'test',
    threeDs: { returnUrl, merchantName: 'Sunny <Tours>' },
    merchantInitiated: false,
    ...overrides,
  };
  const outcome = await t.context.connector.authorise(request);
  if (outcome.kind !== 'challenge') throw new Error(`expected a challenge, got ${outcome.kind}`);
  return { request, path: new URL(outcome.challengeUrl).pathname };
}

const post = (url: string, result: string) =>
  t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `result=${result}` });

describe('sandbox 3DS challenge page', () => {
  it('shows the amount, merchant and card with two real buttons, under a strict CSP', async () => {
    const { path } = await challenge();
    const page = await t.app.inject({ url: path });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/form-action 'self' https:\/\/shop\.example/);
    expect(csp).not.toMatch(/script-src/);
    expect(page.body).not.toMatch(/<script/i);
    expect(page.body).toMatch(/<form method="post" action="\/sandbox\/3ds\/[A-Za-z0-9_-]{32}">/);
    expect(page.body).toMatch(/<button type="submit" name="result" value="authenticate">Authenticate<\/button>/);
    expect(page.body).toMatch(/<button type="submit" name="result" value="fail">Fail<\/button>/);
    expect(page.body).toContain('€123.45');
    expect(page.body).toContain('Sunny &lt;Tours&gt;');
    expect(page.body).toContain('Mastercard ending 2235');
    expect(page.body).not.toContain('5200000000002235');
  });

  it('"Authenticate" approves, redirects to the return URL, and lookup answers approved', async () => {
    const { request, path } = await challenge();
    const reply = await post(path, 'authenticate');
    expect(reply.statusCode).toBe(303);
    expect(reply.headers.location).toBe(returnUrl);
    const outcome = await t.context.connector.lookup(request.reference);
    expect(outcome).toMatchObject({ kind: 'approved', authCode: expect.stringMatching(/^[0-9]{6}$/), message: expect.stringMatching(/challenge passed/) });
    // A second answer changes nothing; the page says it is done.
    expect((await post(path, 'fail')).statusCode).toBe(303);
    expect(await t.context.connector.lookup(request.reference)).toEqual(outcome);
    const page = await t.app.inject({ url: path });
    expect(page.body).toMatch(/already been completed/);
    expect(page.body).not.toMatch(/<button/);
  });

  it('"Fail" declines with 3DS authentication failed', async () => {
    const { request, path } = await challenge();
    expect((await post(path, 'fail')).headers.location).toBe(returnUrl);
    expect(await t.context.connector.lookup(request.reference)).toMatchObject({ kind: 'declined', code: '100.380.401' });
  });

  it('applies the bank answer after authentication (forced decline amount)', async () => {
    const { request, path } = await challenge({ amount: 1_053 });
    await post(path, 'authenticate');
    expect(await t.context.connector.lookup(request.reference)).toMatchObject({ kind: 'declined', code: '800.100.153' });
  });

  it('holds its answer to the form\'s small body limit whatever the media type (JSON too), and the challenge stays open', async () => {
    const { request, path } = await challenge();
    const padded = { result: 'authenticate', padding: 'x'.repeat(limits.sandboxFormBytesMax) };
    const json = await t.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(padded) });
    expect(json.statusCode).toBe(413);
    const form = await t.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(padded).toString() });
    expect(form.statusCode).toBe(413);
    expect(await t.context.connector.lookup(request.reference)).toMatchObject({ kind: 'challenge' });
  });

  it('refuses unknown ids and bad answers, and expires after the lifetime', async () => {
    expect((await t.app.inject({ url: `/sandbox/3ds/${'A'.repeat(32)}` })).statusCode).toBe(404);
    const { request, path } = await challenge();
    expect((await post(path, 'maybe')).statusCode).toBe(400);
    await t.db.query(`UPDATE sandbox_operations SET created_at = now() - interval '31 minutes' WHERE reference = $1`, [request.reference]);
    expect((await post(path, 'authenticate')).statusCode).toBe(410);
    // The page itself is 410 too (docs/sandbox.md), saying so.
    const page = await t.app.inject({ url: path });
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain('expired');
    expect(await t.context.connector.lookup(request.reference)).toMatchObject({ kind: 'challenge' });
  });

  it("says a link to no challenge is not valid in the browser's language when it names one of the 15, else in a neutral English page", async () => {
    const unknown = `/sandbox/3ds/${'B'.repeat(32)}`;
    const german = await t.app.inject({ url: unknown, headers: { 'accept-language': 'xx-YY, de-AT;q=0.9, en;q=0.5' } });
    expect(german.statusCode).toBe(404);
    expect(german.body).toContain('<html lang="de-DE">');
    expect(german.body).toContain('Authentifizierung nicht gefunden');
    expect(german.body).toContain('Dieser Link ist ungültig.');
    expect(german.body).not.toMatch(/<script/i);
    // The form's answer to no challenge too, by the order of preference (q), not of writing.
    const answered = await t.app.inject({ method: 'POST', url: unknown, headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': 'fr;q=0.2, ja-JP' }, payload: 'result=fail' });
    expect(answered.statusCode).toBe(404);
    expect(answered.body).toContain('<html lang="ja-JP">');
    expect(answered.body).toContain('このリンクは無効です。');
    for (const header of [undefined, 'xx, *;q=0.1', 'de;q=0']) {
      const neutral = await t.app.inject({ url: unknown, headers: header === undefined ? {} : { 'accept-language': header } });
      expect(neutral.statusCode).toBe(404);
      expect(neutral.body).toContain('<html lang="en">');
      expect(neutral.body).toContain('This link is not valid.');
    }
  });
});
