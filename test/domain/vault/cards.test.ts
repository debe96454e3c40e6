import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, testEnv, type TestContext } from '../../support/context.js';
import { createSite, type SiteFixture } from '../../support/fixtures.js';
import { createChannel, everyStoredValue, futureYear } from './support.js';
import {
  assertCardAllowedInMode, assertCardUsableOnChannel, captureCard, cardById, createVault, openCard, redeemCaptureTokens, resolvePaymentCard, rotateCardKeys, CardDecryptionError,
} from '../../../src/domain/vault/index.js';
import { loadConfig } from '../../../src/config.js';
import { ApiError } from '../../../src/http/errors.js';
import { runCli } from '../../../src/cli/main.js';

let t: TestContext;
let site: SiteFixture;
let testChannel: number;
let liveChannel: number;
beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db);
  testChannel = await createChannel(t.db, site.siteId, { accountMode: 'test' });
  liveChannel = await createChannel(t.db, site.siteId, { accountMode: 'live' });
});
afterAll(async () => t.close());

const visa = '4111111111111111';
const capture = (overrides: Partial<Parameters<typeof captureCard>[2]> = {}) =>
  captureCard(t.db, t.context.vault, { siteId: site.siteId, channelId: testChannel, pan: visa, expiryMonth: 4, expiryYear: futureYear, cvv: '739', takesLiveMode: true, ...overrides });

async function apiErrorOf(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('captureCard', () => {
  it('vaults a test card with brand, BIN, last four and the channel it belongs to', async () => {
    const { card, cardToken, cardTokenExpiresAt } = await capture({ pan: '4111 1111 1111 1111', holder: { name: 'Ada Lovelace', country: 'GB' } });
    expect(card).toMatchObject({ siteId: site.siteId, channelId: testChannel, bin: '411111', lastFour: '1111', brand: 'visa', issuerCountry: 'US', expiryMonth: 4, expiryYear: futureYear, currency: 'USD', accountType: 'trust', isTestCard: true });
    expect(card.holder).toMatchObject({ name: 'Ada Lovelace', country: 'GB' });
    expect(card.token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(cardToken).toMatch(/^ct_/);
    expect(cardTokenExpiresAt.getTime() - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(await openCard(t.db, t.context.vault, card, '739')).toEqual({ pan: visa, expiryMonth: 4, expiryYear: futureYear, cvv: '739', holderName: 'Ada Lovelace' });
  });

  it('keeps at least five digits of a short card number hidden: fewer BIN digits, never the full six beside the last four', async () => {
    // A 12-digit Maestro: six and four would leave two digits, ten candidates under the Luhn check.
    const maestro = await capture({ pan: '6759 3004 5678', channelId: liveChannel });
    expect(maestro.card).toMatchObject({ bin: '675', lastFour: '5678' });
    const stored = await t.db.one<{ bin: string }>('SELECT bin FROM cards WHERE id = $1', [maestro.card.id]);
    expect(stored.bin).toBe('675');
    // An Amex (15 digits) and a 16-digit card keep the usual six.
    expect((await capture({ pan: '378282246310005', cvv: '7390', channelId: testChannel })).card).toMatchObject({ bin: '378282', lastFour: '0005', brand: 'amex' });
    expect((await capture({ pan: '4111111111111111' })).card.bin).toBe('411111');
  });

  it('reuses the record for the same card entered again with the same details on the same channel, and not on another channel', async () => {
    const first = await capture({ pan: '5555555555554444', holder: { name: 'Ada Lovelace' } });
    const again = await capture({ pan: '5555555555554444', holder: { name: 'Ada Lovelace' } });
    expect(again.card.id).toBe(first.card.id);
    expect(again.card.token).toBe(first.card.token);
    const otherChannel = await createChannel(t.db, site.siteId, { accountMode: 'test' });
    const elsewhere = await capture({ pan: '5555555555554444', channelId: otherChannel, holder: { name: 'Ada Lovelace' } });
    expect(elsewhere.card.id).not.toBe(first.card.id);
  });

  it('never changes a vaulted card with a later capture: other details make a record of their own, and the old token pays as verified', async () => {
    const verified = await capture({ pan: '5555555555554444', expiryMonth: 4, holder: { name: 'Ada Lovelace', email: 'ada@example.com' } });
    const vault = await t.app.inject({
      method: 'POST', url: `/${site.path}/site-json/vendor/v2/transactions`, headers: site.headers,
      payload: { transaction_types: 'vault', channels: testChannel, currencies: 'USD', total: 0, token: verified.cardToken },
    });
    expect(vault.json()).toMatchObject({ status: 'complete', token: verified.card.token });
    // Anyone holding a page may type the same number with another expiry and name; nothing verified them.
    const retyped = await capture({ pan: '5555555555554444', expiryMonth: 9, holder: { name: 'Mallory', email: 'ada@example.com' } });
    const byVaultToken = await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: verified.card.token });
    expect(await openCard(t.db, t.context.vault, byVaultToken!.card)).toEqual({ pan: '5555555555554444', expiryMonth: 4, expiryYear: futureYear, holderName: 'Ada Lovelace' });
    expect(retyped.card.id).not.toBe(verified.card.id);
    expect(retyped.card.token).not.toBe(verified.card.token);
    // The new entry's own capture token goes to the bank with what was typed with it.
    const byCaptureToken = await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: retyped.cardToken });
    expect(await openCard(t.db, t.context.vault, byCaptureToken!.card, byCaptureToken!.cvv)).toMatchObject({ expiryMonth: 9, holderName: 'Mallory' });
    // Its vault token pays without CVV only once a vault of that record completes.
    expect((await apiErrorOf(resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: retyped.card.token }))).status).toBe(400);
  });

  it('refuses bad numbers, expired cards and wrong CVV length, storing nothing', async () => {
    const before = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards');
    expect((await apiErrorOf(capture({ pan: '4111111111111112' }))).data.params).toHaveProperty('card_number');
    expect((await apiErrorOf(capture({ expiryYear: 2020 }))).data.params).toHaveProperty('expiry_year');
    expect((await apiErrorOf(capture({ pan: '378282246310005', cvv: '123' }))).data.params).toHaveProperty('cvv');
    const after = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM cards');
    expect(after.count).toBe(before.count);
  });

  it('keeps test cards off live channels and real cards off test channels', async () => {
    const onLive = await apiErrorOf(capture({ channelId: liveChannel }));
    expect(onLive.status).toBe(400);
    expect(onLive.data.params).toHaveProperty('card_number');
    const realCard = '4242424242424242';
    expect((await apiErrorOf(capture({ pan: realCard }))).message).toMatch(/card_number/);
    const { card } = await capture({ pan: realCard, channelId: liveChannel });
    expect(card.isTestCard).toBe(false);
    expect(() => assertCardAllowedInMode(card, 'test')).toThrow(ApiError);
    expect(() => assertCardAllowedInMode(card, 'live')).not.toThrow();
  });

  it("refuses another site's channel with 404", async () => {
    const other = await createSite(t.db);
    const otherChannel = await createChannel(t.db, other.siteId);
    const error = await apiErrorOf(capture({ channelId: otherChannel }));
    expect(error.status).toBe(404);
    expect(error.code).toBe('rest_post_invalid_id');
  });
});

describe('resolvePaymentCard', () => {
  it('gives the card and CVV of a capture token until it is redeemed, then nothing', async () => {
    const { card, cardToken } = await capture({ pan: '4000000000001000', cvv: '582' });
    const first = await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: cardToken });
    expect(first).toMatchObject({ card: { id: card.id }, cvv: '582', via: 'capture_token' });
    // Resolving writes nothing: a request refused after it leaves the token usable.
    expect(await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: cardToken })).toMatchObject({ cvv: '582' });
    expect(await redeemCaptureTokens(t.db, [first!.redemption!])).toBe(1);
    expect(await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: cardToken })).toBeNull();
    expect(await redeemCaptureTokens(t.db, [first!.redemption!])).toBe(0);
  });

  it('does not resolve a capture token for another site, an expired one, or a forged one', async () => {
    const other = await createSite(t.db);
    const { cardToken } = await capture();
    expect(await resolvePaymentCard(t.db, t.context.vault, { siteId: other.siteId, token: cardToken })).toBeNull();
    const later = { ...t.context.vault, now: () => new Date(Date.now() + 16 * 60_000) };
    expect(await resolvePaymentCard(t.db, later, { siteId: site.siteId, token: cardToken })).toBeNull();
    expect(await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: `${cardToken.slice(0, -2)}AA` })).toBeNull();
  });

  it('resolves the permanent vault token without a CVV once the card is vaulted, only within its site', async () => {
    const { card, cardToken } = await capture();
    // Captured, not yet vaulted: the bank has not verified the card.
    const unverified = await apiErrorOf(resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: card.token }));
    expect(unverified.status).toBe(400);
    expect(Object.keys(unverified.data.params as object)).toEqual(['token']);
    const vault = await t.app.inject({
      method: 'POST', url: `/${site.path}/site-json/vendor/v2/transactions`, headers: site.headers,
      payload: { transaction_types: 'vault', channels: testChannel, currencies: 'USD', total: 0, token: cardToken },
    });
    expect(vault.json()).toMatchObject({ status: 'complete', token: card.token });
    expect(await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: card.token })).toMatchObject({ card: { id: card.id }, via: 'vault_token' });
    const other = await createSite(t.db);
    expect(await resolvePaymentCard(t.db, t.context.vault, { siteId: other.siteId, token: card.token })).toBeNull();
    expect(await cardById(t.db, other.siteId, card.id)).toBeNull();
  });

  it('materialises a sandbox token as a card on a test channel and reuses it', async () => {
    const first = await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: 'tok_amex', channelId: testChannel });
    expect(first).toMatchObject({ via: 'sandbox_token', cvv: '1234', card: { brand: 'amex', lastFour: '0005', isTestCard: true, channelId: testChannel } });
    const second = await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: 'tok_amex', channelId: testChannel });
    expect(second?.card.id).toBe(first?.card.id);
    expect((await openCard(t.db, t.context.vault, first!.card)).pan).toBe('378282246310005');
    expect(await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: 'tok_unknown', channelId: testChannel })).toBeNull();
    expect(await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: 'tok_visa' })).toBeNull();
    const live = await apiErrorOf(resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: 'tok_visa', channelId: liveChannel }));
    expect(live.data.params).toHaveProperty('token');
  });
});

describe('vault rules', () => {
  it('lets a card be used only on channels of the same currency and account type', async () => {
    const { card } = await capture();
    expect(() => assertCardUsableOnChannel(card, { currency: 'USD', accountType: 'trust' })).not.toThrow();
    const otherCurrency = (() => {
      try {
        assertCardUsableOnChannel(card, { currency: 'EUR', accountType: 'trust' });
      } catch (error) {
        return error as ApiError;
      }
    })();
    expect(otherCurrency).toMatchObject({ status: 400, code: 'rest_invalid_param', data: { params: { channels: expect.stringMatching(/same currency and account type/) } } });
    expect(() => assertCardUsableOnChannel(card, { currency: 'USD', accountType: 'protected-processing' })).toThrow(ApiError);
  });
});

describe('stored card data', () => {
  it('is bound to its site: moving a row to another site makes it unreadable', async () => {
    const other = await createSite(t.db);
    // The database keeps a card on a channel of its own site (migration 015): move both.
    const otherChannel = await createChannel(t.db, other.siteId);
    const { card } = await capture({ pan: '5555555555554444' });
    await t.db.query('UPDATE cards SET site_id = $2, channel_id = $3 WHERE id = $1', [card.id, other.siteId, otherChannel]);
    const moved = await cardById(t.db, other.siteId, card.id);
    await expect(openCard(t.db, t.context.vault, moved!)).rejects.toBeInstanceOf(CardDecryptionError);
    await t.db.query('UPDATE cards SET site_id = $2, channel_id = $3 WHERE id = $1', [card.id, site.siteId, testChannel]);
  });

  it('holds no PAN and no CVV anywhere in the database after captures', async () => {
    const captured = [
      { pan: '4200000000000042', cvv: '731' },
      { pan: '5200000000002235', cvv: '864' },
      { pan: '378282246310005', cvv: '9173' },
    ];
    for (const entry of captured) {
      const { cardToken } = await capture(entry);
      const resolved = await resolvePaymentCard(t.db, t.context.vault, { siteId: site.siteId, token: cardToken });
      await redeemCaptureTokens(t.db, [resolved!.redemption!]);
    }
    const values = await everyStoredValue(t.db);
    expect(values.some((value) => value.where === 'cards.pan_ciphertext')).toBe(true);
    for (const entry of captured) {
      for (const value of values) {
        expect(value.text.includes(entry.pan), `PAN in ${value.where}`).toBe(false);
        // CVVs standing alone in text (a value, a JSON field, a word), or anywhere in binary data.
        const hit = value.bytes ? value.bytes.includes(Buffer.from(entry.cvv)) : new RegExp(`(^|[^A-Za-z0-9])${entry.cvv}([^A-Za-z0-9]|$)`).test(value.text);
        expect(hit, `CVV in ${value.where}`).toBe(false);
      }
    }
  });
});

describe('key rotation', () => {
  it('re-wraps data keys under the new key; cards stay readable with the new key alone', async () => {
    const ctx = await createTestContext();
    const s = await createSite(ctx.db);
    const channel = await createChannel(ctx.db, s.siteId);
    try {
      const oldKeys = loadConfig({ ...testEnv, DATABASE_URL: 'postgres://unused' }).secrets;
      const [oldId, oldKey] = [oldKeys.activeCardKeyId, oldKeys.cardKeys[oldKeys.activeCardKeyId]!];
      const newKey = randomBytes(32).toString('base64');
      const oldVault = createVault(oldKeys, () => new Date());
      const cards = [];
      for (const pan of ['4111111111111111', '5555555555554444', '4000000000000002']) {
        cards.push((await captureCard(ctx.db, oldVault, { siteId: s.siteId, channelId: channel, pan, expiryMonth: 1, expiryYear: futureYear, cvv: '123', takesLiveMode: true })).card);
      }
      const both = loadConfig({ ...testEnv, CARD_KEYS: `new1:${newKey},${oldId}:${oldKey.toString('base64')}` }).secrets;
      const rotated = await rotateCardKeys(ctx.db, createVault(both, () => new Date()).keys, { batchSize: 2 });
      expect(rotated).toMatchObject({ activeKeyId: 'new1', rewrapped: 3, alreadyCurrent: 0, failed: [], batches: 2 });
      const onlyNew = createVault(loadConfig({ ...testEnv, CARD_KEYS: `new1:${newKey}` }).secrets, () => new Date());
      for (const [index, pan] of ['4111111111111111', '5555555555554444', '4000000000000002'].entries()) {
        expect((await openCard(ctx.db, onlyNew, cards[index]!)).pan).toBe(pan);
      }
      // A second run has nothing left to do.
      expect(await rotateCardKeys(ctx.db, createVault(both, () => new Date()).keys)).toMatchObject({ rewrapped: 0, alreadyCurrent: 3 });
    } finally {
      await ctx.close();
    }
  });

  it('runs as `trustfare keys rotate` and prints counts', async () => {
    const ctx = await createTestContext();
    const saved = { ...process.env };
    const printed: string[] = [];
    const originalLog = console.log;
    try {
      const s = await createSite(ctx.db);
      const channel = await createChannel(ctx.db, s.siteId);
      const { card } = await captureCard(ctx.db, ctx.context.vault, { siteId: s.siteId, channelId: channel, pan: visa, expiryMonth: 1, expiryYear: futureYear, cvv: '123', takesLiveMode: true });
      const newKey = randomBytes(32).toString('base64');
      Object.assign(process.env, testEnv, { DATABASE_URL: ctx.config.databaseUrl, CARD_KEYS: `cli2:${newKey},${testEnv.CARD_KEYS}` });
      console.log = (line: string) => printed.push(line);
      expect(await runCli(['keys', 'rotate', '--batch-size', '10'])).toBe(0);
      console.log = originalLog;
      expect(JSON.parse(printed.join('\n'))).toMatchObject({ activeKeyId: 'cli2', rewrapped: 1, failed: [] });
      const onlyNew = createVault(loadConfig({ ...testEnv, CARD_KEYS: `cli2:${newKey}` }).secrets, () => new Date());
      expect((await openCard(ctx.db, onlyNew, card)).pan).toBe(visa);
    } finally {
      console.log = originalLog;
      process.env = saved;
      await ctx.close();
    }
  });
});
