import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { api, expectError, expectFields, expectStatus, makeChannel, newSite, type Json } from './support.js';
import type { SiteFixture } from '../support/fixtures.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t?.close());

const settlementCurrencies = ['AED', 'AUD', 'CAD', 'CHF', 'DKK', 'EUR', 'GBP', 'HKD', 'JPY', 'NOK', 'NZD', 'SEK', 'SGD', 'USD', 'ZAR'];
const channelStatuses = ['admin', 'affiliate', 'agent', 'closed', 'full-processing', 'full-processing-ic-plus', 'full-processing-blended-default', 'locked', 'new', 'supplier', 'test', 'vendor-end-user', 'vendor-protection-a', 'vendor-protection-b'];

function expectChannel(channel: Json) {
  expectFields(channel, {
    id: 'integer',
    uuid: 'string',
    name: 'string',
    slug: 'string',
    account_type: 'string',
    account_mode: 'string',
    protection_type: 'string',
    currencies: 'string',
    quote_code: ['string', 'null'],
    statement_period: 'string',
    cardholder_present: 'boolean',
    forex_feed: 'object',
    language: 'string',
    primary_mail: 'string',
    mail_bcc_transactional_mails: 'boolean',
    mail_failures: 'boolean',
    receipt_label: 'string',
    server_to_server: 'boolean',
    vaultprovider_id: ['string', 'null'],
    vaultprovider_api_key: ['string', 'null'],
    beneficiary_id: ['string', 'null'],
    settlement_currency: ['string', 'null'],
    external_id: ['string', 'null'],
    chargeback_mail: ['string', 'null'],
    payout_minimum: 'integer',
    descriptor: ['string', 'null'],
    channel_secret: 'string',
    channel_status: 'string',
    suppliers: 'array',
  });
  expect(['protected-processing', 'trust']).toContain(channel.account_type);
  expect(['test', 'draft', 'live', 'closed', 'affiliate']).toContain(channel.account_mode);
  expect(['trust-vendor-travel', 'vendor-management']).toContain(channel.protection_type);
  expect(['biweek', 'week', 'month']).toContain(channel.statement_period);
  expect(channelStatuses).toContain(channel.channel_status);
  if (channel.settlement_currency !== null) expect(settlementCurrencies).toContain(channel.settlement_currency);
  expect(channel.uuid).toMatch(/^[0-9a-f-]{36}$/);
}

function expectForexFeed(feed: Json, base: string) {
  expectFields(feed, { base: 'string', symbol: 'object', rates: 'object' });
  expect(feed.base).toBe(base);
  expectFields(feed.symbol, { grapheme: 'string', template: 'string', rtl: 'boolean' });
  for (const [code, rate] of Object.entries(feed.rates as Record<string, Json>)) {
    expect(code).toMatch(/^[A-Z]{3}$/);
    expectFields(rate, { symbol: 'string', quote_id: 'integer', rate: ['number', 'integer'], provider: 'string', expires: 'string', modified: 'string' });
    expect(rate.expires).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(rate.modified).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  }
}

describe('channel resource', () => {
  let site: SiteFixture;
  beforeAll(async () => {
    site = await newSite(t);
  });

  it('POST returns 201 with every Channel field and its default', async () => {
    const response = await api(t, site, 'POST', 'channels', { name: 'Defaults', currencies: 'USD' });
    const channel = expectStatus(response, 201);
    expectChannel(channel);
    expect(channel.name).toBe('Defaults');
    expect(channel.currencies).toBe('USD');
    expect(channel.account_type).toBe('trust');
    expect(channel.account_mode).toBe('test');
    expect(channel.protection_type).toBe('trust-vendor-travel');
    expect(channel.statement_period).toBe('month');
    expect(channel.cardholder_present).toBe(false);
    expect(channel.language).toBe('enGB');
    expect(channel.mail_bcc_transactional_mails).toBe(false);
    expect(channel.mail_failures).toBe(false);
    const siteName = (await t.db.one<{ name: string }>('SELECT name FROM sites WHERE id = $1', [site.siteId])).name;
    expect(channel.receipt_label).toBe(siteName);
    expect(channel.channel_status).toBe('test');
    expect(channel.suppliers).toEqual([]);
    expectForexFeed(channel.forex_feed, 'USD');
    const read = expectStatus(await api(t, site, 'GET', `channels/${channel.id}`), 200);
    expect(read).toEqual(channel);
  });

  it('POST with every writable field stores them', async () => {
    const channel = await makeChannel(t, site, {
      name: 'Full',
      currencies: 'EUR',
      account_mode: 'draft',
      language: 'deDE',
      primary_mail: 'a@example.com,b@example.com',
      mail_bcc_transactional_mails: true,
      mail_failures: true,
      receipt_label: 'ACME Travel',
      external_id: 'ext-1',
      chargeback_mail: 'cb@example.com',
    });
    expect(channel).toMatchObject({
      account_mode: 'draft',
      language: 'deDE',
      primary_mail: 'a@example.com,b@example.com',
      mail_bcc_transactional_mails: true,
      mail_failures: true,
      receipt_label: 'ACME Travel',
      external_id: 'ext-1',
      chargeback_mail: 'cb@example.com',
    });
  });

  it('name and currencies are required: 400 rest_missing_callback_param listing them', async () => {
    const body = expectError(await api(t, site, 'POST', 'channels', {}), 400, 'rest_missing_callback_param');
    const params = JSON.stringify(body.data.params);
    expect(params).toContain('name');
    expect(params).toContain('currencies');
  });

  it.each([
    ['currencies', 'XYZ'],
    ['currencies', 'usd'],
    ['language', 'xxXX'],
    ['account_mode', 'bogus'],
    ['mail_failures', 'yes'],
    ['name', 42],
    ['primary_mail', 'not an email'],
  ])('invalid %s=%j: 400 rest_invalid_param naming it', async (field, value) => {
    const body = expectError(await api(t, site, 'POST', 'channels', { name: 'X', currencies: 'GBP', [field]: value }), 400, 'rest_invalid_param');
    expect(Object.keys(body.data.params ?? {})).toContain(field);
  });

  it('account_mode live/closed/affiliate cannot be set on create', async () => {
    for (const mode of ['live', 'closed', 'affiliate']) {
      const response = await api(t, site, 'POST', 'channels', { name: 'X', currencies: 'GBP', account_mode: mode });
      expect([400, 403], response.body).toContain(response.statusCode);
      expectError(response, response.statusCode);
    }
  });

  it('RO fields sent as input are ignored, never applied', async () => {
    const response = await api(t, site, 'POST', 'channels', {
      name: 'RO',
      currencies: 'GBP',
      id: 999999,
      uuid: '00000000-0000-0000-0000-000000000000',
      slug: 'hacked',
      account_type: 'protected-processing',
      protection_type: 'vendor-management',
      statement_period: 'week',
      cardholder_present: true,
      server_to_server: true,
      channel_status: 'full-processing',
      channel_secret: 'mine',
      payout_minimum: 1,
      settlement_currency: 'USD',
      suppliers: ['GB-1-ACC'],
      quote_code: 'Q',
      beneficiary_id: 'B',
      descriptor: 'D',
      forex_feed: { base: 'USD' },
    });
    const channel = expectStatus(response, 201);
    expect(channel.id).not.toBe(999999);
    expect(channel.uuid).not.toBe('00000000-0000-0000-0000-000000000000');
    expect(channel.slug).not.toBe('hacked');
    expect(channel.account_type).toBe('trust');
    expect(channel.protection_type).toBe('trust-vendor-travel');
    expect(channel.statement_period).toBe('month');
    expect(channel.cardholder_present).toBe(false);
    expect(channel.server_to_server).toBe(false);
    expect(channel.channel_status).toBe('test');
    expect(channel.channel_secret).not.toBe('mine');
    expect(channel.suppliers).toEqual([]);
    const updated = expectStatus(await api(t, site, 'PUT', `channels/${channel.id}`, { channel_status: 'locked', account_type: 'protected-processing', name: 'RO2' }), 200);
    expect(updated.name).toBe('RO2');
    expect(updated.channel_status).toBe('test');
    expect(updated.account_type).toBe('trust');
  });

  it('PUT updates the writable fields; unknown id is 404 rest_post_invalid_id', async () => {
    const channel = await makeChannel(t, site, { name: 'Before' });
    const updated = expectStatus(await api(t, site, 'PUT', `channels/${channel.id}`, { name: 'After', language: 'frFR', mail_failures: true, external_id: 'e-2' }), 200);
    expect(updated).toMatchObject({ id: channel.id, name: 'After', language: 'frFR', mail_failures: true, external_id: 'e-2', currencies: 'GBP' });
    expectError(await api(t, site, 'PUT', `channels/${channel.id}`, { language: 'nope' }), 400, 'rest_invalid_param');
    expectError(await api(t, site, 'PUT', 'channels/987654', { name: 'x' }), 404, 'rest_post_invalid_id');
    expectError(await api(t, site, 'GET', 'channels/987654'), 404, 'rest_post_invalid_id');
  });

  it('a channel read and sent back (PUT, or POST as a copy) keeps its provider key: the masked key the answers show is never stored as the key', async () => {
    const channel = await makeChannel(t, site, { name: 'Keyed', vaultprovider_id: 'vp-1', vaultprovider_api_key: 'sk_test_abcdefgh5678' });
    expect(channel.vaultprovider_api_key).toBe('****5678');
    const read = expectStatus(await api(t, site, 'GET', `channels/${channel.id}`), 200);
    const renamed = expectStatus(await api(t, site, 'PUT', `channels/${channel.id}`, { ...read, name: 'Keyed, renamed' }), 200);
    expect(renamed).toMatchObject({ name: 'Keyed, renamed', vaultprovider_id: 'vp-1', vaultprovider_api_key: '****5678' });
    // A short key shows as `****`, which sent back leaves it too.
    expectStatus(await api(t, site, 'PUT', `channels/${channel.id}`, { vaultprovider_api_key: 'short-key' }), 200);
    const short = expectStatus(await api(t, site, 'GET', `channels/${channel.id}`), 200);
    expect(short.vaultprovider_api_key).toBe('****');
    expectStatus(await api(t, site, 'PUT', `channels/${channel.id}`, short), 200);
    expectStatus(await api(t, site, 'PUT', `channels/${channel.id}`, { vaultprovider_api_key: 'sk_test_abcdefgh9999' }), 200);
    expect(expectStatus(await api(t, site, 'GET', `channels/${channel.id}`), 200).vaultprovider_api_key).toBe('****9999');
    // A copy made from what was read has no key: the mask names none.
    const copy = expectStatus(await api(t, site, 'POST', 'channels', { ...read, name: 'Copy' }), 201);
    expect(copy).toMatchObject({ vaultprovider_id: 'vp-1', vaultprovider_api_key: '' });
    // An empty key still clears it.
    expect(expectStatus(await api(t, site, 'PUT', `channels/${channel.id}`, { vaultprovider_api_key: '' }), 200).vaultprovider_api_key).toBe('');
  });

  it('DELETE returns {deleted:true}; the channel is then gone', async () => {
    const channel = await makeChannel(t, site, { name: 'Doomed' });
    const body = expectStatus(await api(t, site, 'DELETE', `channels/${channel.id}`), 200);
    expect(body.deleted).toBe(true);
    expectError(await api(t, site, 'GET', `channels/${channel.id}`), 404, 'rest_post_invalid_id');
    expectError(await api(t, site, 'DELETE', `channels/${channel.id}`), 404, 'rest_post_invalid_id');
  });

  it('channel_secret is present (a string), and stays stable across reads', async () => {
    const channel = await makeChannel(t, site);
    const read = expectStatus(await api(t, site, 'GET', `channels/${channel.id}`), 200);
    expect(read.channel_secret).toBe(channel.channel_secret);
  });

  it('a member may read channels but not create them; read_only users get 403 on writes', async () => {
    const channel = await makeChannel(t, site);
    const { addUser } = await import('../support/fixtures.js');
    const member = await addUser(t.db, site.siteId, { role: 'member' });
    const asMember = { path: site.path, headers: member.headers };
    expectStatus(await api(t, asMember, 'GET', `channels/${channel.id}`), 200);
    expectError(await api(t, asMember, 'POST', 'channels', { name: 'X', currencies: 'GBP' }), 403, 'rest_forbidden');
    const reader = await addUser(t.db, site.siteId, { role: 'member_admin', readOnly: true });
    const asReader = { path: site.path, headers: reader.headers };
    expectStatus(await api(t, asReader, 'GET', 'channels'), 200);
    expectError(await api(t, asReader, 'POST', 'channels', { name: 'X', currencies: 'GBP' }), 403, 'rest_forbidden');
    expectError(await api(t, asReader, 'PUT', `channels/${channel.id}`, { name: 'X' }), 403, 'rest_forbidden');
    expectError(await api(t, asReader, 'DELETE', `channels/${channel.id}`), 403, 'rest_forbidden');
  });
});

describe('channel list parameters', () => {
  let site: SiteFixture;
  let channels: Json[];
  beforeAll(async () => {
    site = await newSite(t);
    channels = [
      await makeChannel(t, site, { name: 'Alpha Tours', currencies: 'GBP', external_id: 'A-1' }),
      await makeChannel(t, site, { name: 'Beta Trips', currencies: 'USD', account_mode: 'draft', external_id: 'B-1' }),
      await makeChannel(t, site, { name: 'Gamma Tours', currencies: 'EUR' }),
      await makeChannel(t, site, { name: 'Delta', currencies: 'GBP', external_id: 'A-10' }),
    ];
  });
  const ids = (list: Json[]) => list.map((channel) => channel.id);
  const list = async (query: string) => expectStatus(await api(t, site, 'GET', `channels${query}`), 200) as Json[];

  it('default: all, ordered by id asc, with pagination headers', async () => {
    const response = await api(t, site, 'GET', 'channels');
    const body = expectStatus(response, 200) as Json[];
    expect(ids(body)).toEqual(ids(channels));
    for (const channel of body) expectChannel(channel);
    expect(response.headers['x-site-total']).toBe('4');
    expect(response.headers['x-site-totalpages']).toBe('1');
  });

  it('include', async () => {
    expect(ids(await list(`?include=${channels[2]!.id},${channels[0]!.id}`))).toEqual([channels[0]!.id, channels[2]!.id]);
  });

  it('page and per_page', async () => {
    const response = await api(t, site, 'GET', 'channels?per_page=3&page=2');
    expect(ids(expectStatus(response, 200) as Json[])).toEqual([channels[3]!.id]);
    expect(response.headers['x-site-total']).toBe('4');
    expect(response.headers['x-site-totalpages']).toBe('2');
    expect(response.headers.link).toMatch(/rel="prev"/);
    const first = await api(t, site, 'GET', 'channels?per_page=3');
    expect(first.headers.link).toMatch(/rel="next"/);
    expect(await list('?per_page=3&page=3')).toEqual([]);
  });

  it('order and orderby', async () => {
    expect(ids(await list('?order=desc'))).toEqual(ids(channels).reverse());
    expect((await list('?orderby=name')).map((channel) => channel.name)).toEqual(['Alpha Tours', 'Beta Trips', 'Delta', 'Gamma Tours']);
    expect((await list('?orderby=name&order=desc')).map((channel) => channel.name)).toEqual(['Gamma Tours', 'Delta', 'Beta Trips', 'Alpha Tours']);
    expectError(await api(t, site, 'GET', 'channels?order=sideways'), 400, 'rest_invalid_param');
    expectError(await api(t, site, 'GET', 'channels?orderby=password'), 400, 'rest_invalid_param');
  });

  it('account_mode, account_type, statement_period', async () => {
    expect(ids(await list('?account_mode=draft'))).toEqual([channels[1]!.id]);
    expect(ids(await list('?account_mode=live'))).toEqual([]);
    expect(ids(await list('?account_type=trust'))).toEqual(ids(channels));
    expect(ids(await list('?account_type=protected-processing'))).toEqual([]);
    expect(ids(await list('?statement_period=month'))).toEqual(ids(channels));
    expect(ids(await list('?statement_period=week'))).toEqual([]);
    expectError(await api(t, site, 'GET', 'channels?account_mode=bogus'), 400, 'rest_invalid_param');
    expectError(await api(t, site, 'GET', 'channels?account_type=bogus'), 400, 'rest_invalid_param');
    expectError(await api(t, site, 'GET', 'channels?statement_period=year'), 400, 'rest_invalid_param');
  });

  it('currencies (contains), external_id (exact), name (wildcard)', async () => {
    expect(ids(await list('?currencies=GBP'))).toEqual([channels[0]!.id, channels[3]!.id]);
    expect(ids(await list('?external_id=A-1'))).toEqual([channels[0]!.id]);
    expect(ids(await list('?name=*Tours'))).toEqual([channels[0]!.id, channels[2]!.id]);
    expect(ids(await list('?name=Alpha*'))).toEqual([channels[0]!.id]);
    expect(ids(await list('?name=Delta'))).toEqual([channels[3]!.id]);
  });
});
