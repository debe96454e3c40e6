import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { textProblem } from '../../src/domain/text.js';
import { createUser } from '../../src/domain/users/accounts.js';

/**
 * What a client is told about the text and bodies it sends (docs/resources.md "Bodies"): unknown
 * fields are refused by name on every body, text that nobody can see or that corrupts what it
 * reaches (headers of receipts, statements, logs) is refused with a message in words, and a
 * refused value is told what was expected in its own terms.
 */
let t: TestContext;
let site: SiteFixture;
let channelId: number;
beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db);
  channelId = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Tours', currencies: 'USD' } })).json().id;
});
afterAll(async () => t.close());

const api = (method: 'GET' | 'POST' | 'PUT', resource: string, payload?: object, headers: Record<string, string> = {}) =>
  t.app.inject({ method, url: `/${site.path}/site-json/vendor/v2/${resource}`, headers: { ...site.headers, ...headers }, ...(payload ? { payload } : {}) });
const booking = (patch: Record<string, unknown> = {}) => ({
  firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-05-20', total: 1_000, currencies: 'USD', countries: 'GB', channels: channelId, ...patch,
});
const counts = () => t.db.one<{ tokens: number; bookings: number; channels: number; transactions: number }>(
  `SELECT (SELECT count(*)::int FROM api_tokens WHERE site_id = $1) AS tokens, (SELECT count(*)::int FROM bookings WHERE site_id = $1) AS bookings,
          (SELECT count(*)::int FROM channels WHERE site_id = $1) AS channels, (SELECT count(*)::int FROM transactions WHERE site_id = $1) AS transactions`,
  [site.siteId],
);

describe('unknown fields', () => {
  it('refuses an API token body with fields the spec does not have, naming them, and creates no token', async () => {
    const before = await counts();
    const reply = await t.app.inject({ method: 'POST', url: `/${site.path}/api-tokens`, headers: site.headers, payload: { name: 't2', nickname: 'typo', abilities: ['read'] } });
    expect(reply.statusCode).toBe(400);
    expect(reply.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { nickname: 'unknown field nickname', abilities: 'unknown field abilities' } } });
    expect(await counts()).toEqual(before);
  });

  it('refuses unknown fields on login, and still logs in with the spec’s fields', async () => {
    for (const path of ['token', 'token/cardvaultuser']) {
      const url = `/${site.path}/site-json/jwt-auth/v1/${path}`;
      const refused = await t.app.inject({ method: 'POST', url, payload: { username: site.username, password: site.password, otp_code: '123456' } });
      expect(refused.statusCode, path).toBe(400);
      expect(refused.json().data.params, path).toEqual({ otp_code: 'unknown field otp_code' });
      const accepted = await t.app.inject({ method: 'POST', url, payload: { username: site.username, password: site.password } });
      expect(accepted.statusCode, path).toBe(200);
    }
  });
});

describe('text no one can see, or that corrupts where it goes', () => {
  const invisibleName = 'must be text on one line with at least one visible character, without control characters';
  const badLine = 'must be text on one line without control characters, empty or with at least one visible character';

  it('refuses names made only of invisible characters', async () => {
    const before = await counts();
    for (const name of ['\u200b', '\ufeff', '\u200b \u00a0\u3164', '   ', '\u0301']) {
      const label = JSON.stringify(name);
      expect((await api('POST', 'channels', { name, currencies: 'USD' })).json().data?.params, label).toEqual({ name: invisibleName });
      expect((await api('POST', 'bookings', booking({ firstname: name }))).json().data?.params, label).toEqual({ firstname: invisibleName });
      const token = await t.app.inject({ method: 'POST', url: `/${site.path}/api-tokens`, headers: site.headers, payload: { name } });
      expect(token.json().data?.params, label).toEqual({ name: invisibleName });
    }
    expect(await counts()).toEqual(before);
  });

  it('refuses control characters and bidi overrides in names, labels, payee and allocation text', async () => {
    const before = await counts();
    for (const bad of ['Ada\u0007', 'Ada\u001b[31m', 'Ada\r\nBcc: x@example.com', 'Ada\nLovelace', '\u202eecilA', 'Ada\u2066x\u2069', 'Ada\u0085', 'Ada\u2028', 'Ada\ud800']) {
      const label = JSON.stringify(bad);
      expect((await api('POST', 'bookings', booking({ firstname: bad }))).json().data?.params, label).toEqual({ firstname: invisibleName });
      expect((await api('POST', 'bookings', booking({ reference: bad }))).json().data?.params, label).toEqual({ reference: badLine });
      expect((await api('PUT', `channels/${channelId}`, { receipt_label: bad })).json().data?.params, label).toEqual({ receipt_label: badLine });
      const payment = { transaction_types: 'purchase', channels: channelId, currencies: 'USD', total: 100, token: 'tok_visa' };
      expect((await api('POST', 'transactions', { ...payment, payee_name: bad })).json().data?.params, label).toEqual({ payee_name: badLine });
      const allocation = { channels: channelId, total: 1, title: bad };
      expect((await api('POST', 'transactions', { ...payment, allocations: [allocation] })).json().data?.params, label).toEqual({ 'allocations.0.title': badLine });
    }
    expect(await counts()).toEqual(before);
    const channel = (await api('GET', `channels/${channelId}`)).json();
    expect(channel.receipt_label).not.toMatch(/[\u0000-\u001f\u202e]/);
  });

  it('keeps tabs and line breaks in multi-line content, but no other control character', async () => {
    const kept = await api('POST', 'bookings', booking({ content: 'Room 1\n\tsea view\r\nRoom 2' }));
    expect(kept.statusCode).toBe(201);
    expect(kept.json().content).toBe('Room 1\n\tsea view\r\nRoom 2');
    const refused = await api('POST', 'bookings', booking({ content: 'Room 1\u0007' }));
    expect(refused.json().data.params).toEqual({ content: 'must be text without control characters other than tabs and line breaks' });
  });

  it('refuses an email address no mail could reach (control, format and bidi characters, punctuation in the domain), wherever an address is taken', async () => {
    const emailPhrase = 'must be an email address (ASCII before the @; letters, digits and hyphens in the domain)';
    const existing = (await api('POST', 'bookings', booking())).json().id as number;
    const cardVault = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token/cardvaultuser`, payload: { username: site.username, password: site.password } })).json().token as string;
    const card = { channels: channelId, card_number: '4111 1111 1111 1111', expiry_month: 12, expiry_year: new Date().getUTCFullYear() + 2, cvv: '123' };
    const before = await counts();
    const refused = ['a@ex\u0007ample.com', 'a@ex\u001bample.com', 'a@example.com\u202e', 'a@\u200b.com', 'p@ex\u202eample.com', 'a@exa\u200fmple.com', 'a@exa mple.com', 'a@ex_ample.com', 'a@-example.com', 'a@example-.com', 'a@example..com', 'a@example'];
    for (const email of refused) {
      const label = JSON.stringify(email);
      expect((await api('POST', 'bookings', booking({ email }))).json().data?.params, label).toEqual({ email: emailPhrase });
      expect((await api('PUT', `bookings/${existing}`, { email })).json().data?.params, label).toEqual({ email: emailPhrase });
      const vault = { transaction_types: 'vault', channels: channelId, currencies: 'USD', total: 0, token: 'tok_visa' };
      expect((await api('POST', 'transactions', { ...vault, payee_email: email })).json().data?.params, label).toEqual({ payee_email: emailPhrase });
      for (const list of ['primary_mail', 'chargeback_mail']) {
        expect((await api('PUT', `channels/${channelId}`, { [list]: `ops@example.com, ${email}` })).json().data?.params, label).toEqual({ [list]: 'must be email addresses separated by commas' });
      }
      const captured = await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${cardVault}` }, payload: { ...card, email } });
      expect(captured.json().data?.params, label).toEqual({ email: emailPhrase });
      const page = await t.app.inject({ url: `/vault/1.8.0/?auth=${cardVault}&channels=${channelId}&env=test&email=${encodeURIComponent(email)}` });
      expect([label, page.statusCode]).toEqual([label, 400]);
      await expect(createUser(t.db, { username: `u${Date.now()}`, password: 'a long password', email }), label).rejects.toThrow(/^email must be/);
    }
    expect(await counts()).toEqual(before);
  });

  it('takes addresses with an internationalised domain, in its letters or its punycode form', async () => {
    for (const email of ['ada@example.com', 'a.b+c@sub-domain.example.co.uk', 'ada@müller.de', 'ada@xn--mller-kva.de', 'ada@例え.テスト', 'ada@\u0645\u062b\u0627\u0644.\u0634\u0628\u0643\u0629']) {
      const reply = await api('POST', 'bookings', booking({ email }));
      expect([email, reply.statusCode]).toEqual([email, 201]);
      expect(reply.json().email).toBe(email);
    }
  });

  it('measures lengths in UTF-16 code units everywhere, as limits.ts says: 200 emoji are 400 units', async () => {
    const emoji = '\u{1F600}';
    expect((await api('POST', 'bookings', booking({ firstname: emoji.repeat(100) }))).statusCode).toBe(201);
    const refused = await api('POST', 'bookings', booking({ firstname: emoji.repeat(101) }));
    expect(refused.statusCode).toBe(400);
    expect(Object.keys(refused.json().data.params)).toEqual(['firstname']);
    expect(textProblem(emoji.repeat(101), { maxLength: 200, kind: 'name' })).not.toBeNull();
  });

  it('accepts real names in any script, with the marks right-to-left text needs', async () => {
    for (const [firstname, surname] of [['José', 'Ñúñez'], ['李', '小龙'], ['مريم', '\u200fالعلي'], ["O'Brien", 'Smith-Jones'], ['Zoë', 'e\u0301']]) {
      const reply = await api('POST', 'bookings', booking({ firstname, surname, reference: '' }));
      expect(reply.statusCode, firstname).toBe(201);
      // Kept in NFC (docs/resources.md "Lists"): `e` + U+0301 comes back as `é`, the same name.
      expect(reply.json()).toMatchObject({ firstname, surname: surname!.normalize('NFC') });
    }
    expect((await api('PUT', `channels/${channelId}`, { receipt_label: '' })).statusCode).toBe(200);
  });

  it('refuses a body declared in another charset than UTF-8 instead of mangling its letters', async () => {
    const latin1 = Buffer.from('{"name":"Jos\xe9 Tours","currencies":"USD"}', 'latin1');
    const reply = await t.app.inject({
      method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: { ...site.headers, 'content-type': 'application/json; charset=iso-8859-1' }, payload: latin1,
    });
    expect(reply.statusCode).toBe(415);
    expect(reply.json()).toMatchObject({ code: 'rest_unsupported_media_type' });
    const utf8 = await t.app.inject({
      method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: { ...site.headers, 'content-type': 'application/json; charset=UTF-8' }, payload: '{"name":"José Tours","currencies":"USD"}',
    });
    expect(utf8.statusCode).toBe(201);
    expect(utf8.json().name).toBe('José Tours');
  });

  it('takes a body declared US-ASCII (ASCII is UTF-8) and the `utf8` spelling; refuses the other charsets', async () => {
    const send = (charset: string, name: string) => t.app.inject({
      method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: { ...site.headers, 'content-type': `application/json; charset=${charset}` }, payload: `{"name":"${name}","currencies":"USD"}`,
    });
    for (const charset of ['us-ascii', 'US-ASCII', '"us-ascii"', 'ascii', 'utf8']) {
      const reply = await send(charset, `Tours ${charset.replace(/"/g, '')}`);
      expect(reply.statusCode, charset).toBe(201);
    }
    for (const charset of ['utf-16', 'windows-1252', 'iso-8859-1', 'ebcdic']) {
      const reply = await send(charset, 'Tours');
      expect(reply.statusCode, charset).toBe(415);
      expect(reply.json()).toMatchObject({ code: 'rest_unsupported_media_type', message: 'Send the body as application/json in UTF-8.' });
    }
  });

  it('applies the same rule where no schema does (the vaulting app, the CLI)', () => {
    expect(textProblem('\u200b', { maxLength: 200, kind: 'name' })).toBe(`must be ${invisibleName.slice('must be '.length)}`);
    expect(textProblem('SW1A\u0007', { maxLength: 32, kind: 'line' })).toBe(badLine);
    expect(textProblem('SW1A 1AA', { maxLength: 32, kind: 'line' })).toBeNull();
    expect(textProblem('x'.repeat(33), { maxLength: 32, kind: 'line' })).toBe('must be at most 32 characters');
  });
});

describe('messages that say what was expected', () => {
  it('lists the allowed allocation operators', async () => {
    const reply = await api('POST', 'transactions', { transaction_types: 'purchase', channels: channelId, currencies: 'USD', total: 100, token: 'tok_visa', allocations: [{ channels: channelId, total: 1, operator: 'mult' }] });
    expect(reply.json().data.params).toEqual({ 'allocations.0.operator': 'must be one of flat, percent' });
  });

  it('says a query parameter was given more than once', async () => {
    for (const query of ['page=1&page=2', 'order=desc&order=asc', 'per_page=1&per_page=2']) {
      const name = query.split('=')[0]!;
      const reply = await api('GET', `bookings?${query}`);
      expect(reply.statusCode, query).toBe(400);
      expect(reply.json().data.params, query).toEqual({ [name]: 'was given more than once: send it once' });
    }
    expect((await api('GET', 'bookings?page=x')).json().data.params).toEqual({ page: 'must be integer' });
  });

  it('tells an API token named with spaces that it needs a visible character', async () => {
    const reply = await t.app.inject({ method: 'POST', url: `/${site.path}/api-tokens`, headers: site.headers, payload: { name: '   ' } });
    expect(reply.json().data.params).toEqual({ name: 'must be text on one line with at least one visible character, without control characters' });
  });

  it('takes dates in years 1 to 99 as those years, not as 1901 to 1999', async () => {
    await api('POST', 'bookings', booking());
    const after = await api('GET', 'bookings?after=0001-01-01&per_page=1');
    expect(after.statusCode).toBe(200);
    expect(Number(after.headers['x-site-total'])).toBeGreaterThan(0);
    const before = await api('GET', 'bookings?before=0099-12-31T23:59:59Z');
    expect(before.statusCode).toBe(200);
    expect(before.json()).toEqual([]);
    expect((await api('GET', 'bookings?after=0001-02-30')).json().data.params).toEqual({ after: 'names a day that does not exist (0001-02 has 28 days)' });
    expect((await api('GET', 'bookings?date_after=2024-02-30')).json().data.params).toEqual({ date_after: 'names a day that does not exist (2024-02 has 29 days)' });
  });
});
