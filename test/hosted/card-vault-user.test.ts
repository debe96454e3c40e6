import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, pageSessionOf, type SiteFixture } from '../support/fixtures.js';
import { signJwt } from '../../src/domain/credentials.js';
import { setPassword } from '../../src/domain/users/accounts.js';
import { buildWebBundles } from '../e2e/support.js';
import { limits } from '../../src/limits.js';

// A cardvaultuser token issued before its user was made read-only, or before the user's last
// password change, opens neither the vaulting app nor the card capture endpoint (one shared check).
let t: TestContext;

beforeAll(async () => {
  await buildWebBundles();
  t = await createTestContext();
});
afterAll(async () => t.close());

interface Merchant { site: SiteFixture; channel: { id: number; account_mode: string } }

async function merchant(): Promise<Merchant> {
  const site = await createSite(t.db);
  const channel = (await t.app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/channels`, headers: site.headers, payload: { name: 'Tours', currencies: 'USD' } })).json();
  // An account whose password was last set well before the tokens below (a new user's is "now").
  await t.db.query("UPDATE users SET password_changed_at = now() - interval '1 day' WHERE id = $1", [site.userId]);
  return { site, channel };
}

/** A token issued a minute ago: still live (15 minutes), but older than anything done now. */
function earlierToken(m: Merchant): Promise<string> {
  return signJwt(t.config.secrets.jwtSecret, { userId: m.site.userId, kind: 'cardvaultuser', siteId: m.site.siteId }, new Date(Date.now() - 60_000));
}

function openVaultApp(m: Merchant, token: string, language = 'enGB') {
  const query = new URLSearchParams({ auth: token, channels: String(m.channel.id), env: m.channel.account_mode, language });
  return t.app.inject({ url: `/vault/1.8.0/?${query}` });
}

function capture(m: Merchant, token: string, overrides: Record<string, unknown> = {}) {
  return t.app.inject({
    method: 'POST', url: `/${m.site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${token}` },
    payload: { channels: m.channel.id, card_number: '4111111111111111', expiry_month: '04', expiry_year: new Date().getUTCFullYear() + 2, cvv: '123', ...overrides },
  });
}

async function stored(m: Merchant): Promise<{ sessions: number; cards: number }> {
  return t.db.one<{ sessions: number; cards: number }>(
    'SELECT (SELECT count(*)::int FROM hosted_sessions WHERE site_id = $1) AS sessions, (SELECT count(*)::int FROM cards WHERE site_id = $1) AS cards',
    [m.site.siteId],
  );
}

describe('cardvaultuser tokens that outlived their grant', () => {
  it('opens the vaulting app and captures with a token of a current, writable member', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    const page = await openVaultApp(m, token);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="card-form"');
    expect((await capture(m, token)).statusCode).toBe(201);
  });

  it('refuses a token of a user made read-only after it was issued: no form, no session, no card', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    await t.db.query('UPDATE memberships SET read_only = true WHERE site_id = $1 AND user_id = $2', [m.site.siteId, m.site.userId]);
    const page = await openVaultApp(m, token);
    expect(page.statusCode).toBe(403);
    expect(page.body).not.toContain('id="card-form"');
    expect(page.body).toContain('read-only');
    const captured = await capture(m, token);
    expect(captured.json()).toMatchObject({ code: 'rest_forbidden', data: { status: 403 } });
    expect(await stored(m)).toEqual({ sessions: 0, cards: 0 });
  });

  it('refuses a token issued before the user changed password; one issued after works', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    await setPassword(t.db, m.site.userId, 'a new password, long enough');
    const page = await openVaultApp(m, token);
    expect(page.statusCode).toBe(403);
    expect(page.body).not.toContain('id="card-form"');
    const captured = await capture(m, token);
    expect(captured.statusCode).toBe(401);
    expect(captured.json()).toMatchObject({ code: 'jwt_auth_invalid_token', data: { status: 401 } });
    expect(await stored(m)).toEqual({ sessions: 0, cards: 0 });

    const fresh = await signJwt(t.config.secrets.jwtSecret, { userId: m.site.userId, kind: 'cardvaultuser', siteId: m.site.siteId });
    expect((await openVaultApp(m, fresh)).statusCode).toBe(200);
    expect((await capture(m, fresh)).statusCode).toBe(201);
  });
});

describe("an open vaulting app's session, once its user's grant changed", () => {
  /** The page's session token, as its script reads it from the page data block. */
  const sessionOf = (page: { body: string }) => pageSessionOf(page.body)!;
  const captureWithSession = (m: Merchant, session: string) => t.app.inject({
    method: 'POST', url: `/${m.site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${session}` },
    payload: { channels: m.channel.id, card_number: '5555555555554444', expiry_month: '04', expiry_year: new Date().getUTCFullYear() + 2, cvv: '123' },
  });
  const vaultWithSession = (session: string) => t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: 'tok_visa' } });

  it.each([
    ['made read-only', (m: Merchant) => t.db.query('UPDATE memberships SET read_only = true WHERE site_id = $1 AND user_id = $2', [m.site.siteId, m.site.userId])],
    ['removed from the site', (m: Merchant) => t.db.query('DELETE FROM memberships WHERE site_id = $1 AND user_id = $2', [m.site.siteId, m.site.userId])],
    ['given a new password', (m: Merchant) => setPassword(t.db, m.site.userId, 'a new password, long enough')],
  ])('stores no card once the user is %s', async (_change, change) => {
    const m = await merchant();
    const page = await openVaultApp(m, await earlierToken(m));
    const session = sessionOf(page);
    const before = await captureWithSession(m, session);
    expect(before.statusCode).toBe(201);
    await change(m);
    // The page learns it as an expired session, the same answer from both endpoints.
    const captured = await captureWithSession(m, session);
    expect(captured.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    const vaulted = await vaultWithSession(session);
    expect(vaulted.json()).toMatchObject({ code: 'jwt_auth_invalid_request', data: { status: 403 } });
    expect(await stored(m)).toEqual({ sessions: 1, cards: 1 });
    expect(await t.db.query('SELECT id FROM transactions WHERE site_id = $1', [m.site.siteId])).toEqual([]);
  });
});

describe('vaulting app on a closed channel', () => {
  // A closed channel takes no card (POST /cards refuses it): the page showed the form anyway, and
  // every card typed into it ended in "Something went wrong… Please try again".
  it('shows the error page in the page language and no form, opening no session', async () => {
    const m = await merchant();
    await t.db.query(`UPDATE channels SET account_mode = 'closed' WHERE id = $1`, [m.channel.id]);
    const page = await openVaultApp({ ...m, channel: { ...m.channel, account_mode: 'closed' } }, await earlierToken(m), 'deDE');
    expect(page.statusCode).toBe(400);
    expect(page.body).not.toContain('id="card-form"');
    // In German, naming the refused input (the English explanations are for English pages only).
    expect(page.body).toContain('Die Seite wurde mit ungültigen Angaben geöffnet (channels).');
    expect(page.body).toContain('lang="de');
    expect(await stored(m)).toEqual({ sessions: 0, cards: 0 });
  });

  // channel_status closed or locked stops new payments as account_mode closed does (docs/payments.md
  // "Closed channels"); the page still showed the form, took the card, and its vault was refused.
  it('shows no form, and the capture endpoint takes no card, on a channel the operator locked or closed by status', async () => {
    for (const status of ['locked', 'closed']) {
      const m = await merchant();
      await t.db.query('UPDATE channels SET channel_status = $2 WHERE id = $1', [m.channel.id, status]);
      const page = await openVaultApp(m, await earlierToken(m));
      expect(page.statusCode, status).toBe(400);
      expect(page.body, status).not.toContain('id="card-form"');
      const captured = await capture(m, await earlierToken(m));
      expect(captured.statusCode, status).toBe(400);
      expect(captured.json().data.params.channels, status).toBe(`The channel is ${status} and takes no payments.`);
      expect(await stored(m), status).toEqual({ sessions: 0, cards: 0 });
    }
  });
});

describe('vaulting app wording', () => {
  it('says what the page does (saving a card), not "Payment to", and takes the expiry placeholder from the language', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    // What the page shows (the page data block carries the whole catalogue for the script).
    const shown = async (language: string) => (await openVaultApp(m, token, language)).body.replace(/<script type="application\/json"[\s\S]*?<\/script>/, '');
    const english = await shown('enGB');
    expect(english).toMatch(/<p class="subheading">Saving your card for [^<]+<\/p>/);
    expect(english).not.toContain('Payment to');
    expect(english).toContain('placeholder="MM/YY"');
    const french = await shown('frFR');
    expect(french).toContain('Date d’expiration (MM/AA)');
    expect(french).toContain('placeholder="MM/AA"');
    expect(french).not.toContain('Paiement à');
    expect(french).toMatch(/<p class="subheading">Enregistrement de votre carte pour [^<]+<\/p>/);
  });

  it("gives its script the page's locale as a BCP 47 tag (fr-FR, as <html lang>), which Intl formats with: not the language code frFR, which Intl refuses", async () => {
    const m = await merchant();
    const page = (await openVaultApp(m, await earlierToken(m), 'frFR')).body;
    const data = JSON.parse(/<script type="application\/json" id="page-data">([\s\S]*?)<\/script>/.exec(page)![1]!) as { locale: string };
    expect(page).toContain('<html lang="fr-FR"');
    expect(data.locale).toBe('fr-FR');
    expect(new Intl.NumberFormat(data.locale).format(1234.5)).toBe('1 234,5');
  });

  it('names the refused inputs in the page language, without the English explanations on a page in another language', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    const open = (query: Record<string, string>) => t.app.inject({ url: `/vault/1.8.0/?${new URLSearchParams({ auth: token, channels: String(m.channel.id), env: m.channel.account_mode, ...query })}` });
    const french = await open({ language: 'frFR', session_id: 'a b', country: 'XX' });
    expect(french.statusCode).toBe(400);
    expect(french.body).toContain('<html lang="fr-FR">');
    expect(french.body).toContain('La page a été ouverte avec des données non valides (session_id, country).');
    expect(french.body).not.toContain('must be');
    const forged = await open({ language: 'frFR', auth: 'not.a.token' });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain('L’autorisation de cette page est absente, non valide ou expirée.');
    expect(forged.body).not.toContain('is not a valid');
    // An English page (the default) keeps them: there they are in the page's language.
    const english = await open({ session_id: 'a b' });
    expect(english.body).toContain('<code>session_id</code> must be alphanumeric');
  });
});

describe("vaulting app refusals that need the channel: in the channel's language when the URL names none", () => {
  it.each([
    ['env that is not the channel\'s account mode', 'test', { env: 'live' }, 'env'],
    ['fail_code on a live channel', 'live', { env: 'live', fail_code: '800.100.151' }, 'fail_code'],
  ])('%s', async (_case, mode, query, param) => {
    const m = await merchant();
    await t.db.query(`UPDATE channels SET account_mode = $2, language = 'frFR' WHERE id = $1`, [m.channel.id, mode]);
    const token = await earlierToken(m);
    const page = await t.app.inject({ url: `/vault/1.8.0/?${new URLSearchParams({ auth: token, channels: String(m.channel.id), ...query })}` });
    expect(page.statusCode).toBe(400);
    // The form would have been in French (the channel's language): so is the refusal.
    expect(page.body).toContain('<html lang="fr-FR">');
    expect(page.body).toContain(`La page a été ouverte avec des données non valides (${param}).`);
    expect(page.body).not.toMatch(/does not match|applies to test channels/);
    // A language the URL gives still wins.
    const english = await t.app.inject({ url: `/vault/1.8.0/?${new URLSearchParams({ auth: token, channels: String(m.channel.id), ...query, language: 'enGB' })}` });
    expect(english.body).toContain('<html lang="en-GB">');
    expect(await stored(m)).toEqual({ sessions: 0, cards: 0 });
  });

  it("does not tell a token of another site the channel's language (the channel is refused as unknown)", async () => {
    const m = await merchant();
    const other = await merchant();
    await t.db.query(`UPDATE channels SET language = 'frFR' WHERE id = $1`, [m.channel.id]);
    const page = await t.app.inject({ url: `/vault/1.8.0/?${new URLSearchParams({ auth: await earlierToken(other), channels: String(m.channel.id), env: 'live' })}` });
    expect(page.statusCode).toBe(403);
    expect(page.body).toContain('<html lang="en-GB">');
  });
});

describe('cardholder fields: one bound and one country list from the vaulting app to the capture', () => {
  const zipMax = limits.cardHolderZipLengthMax;
  const open = (m: Merchant, token: string, holder: Record<string, string>) =>
    t.app.inject({ url: `/vault/1.8.0/?${new URLSearchParams({ auth: token, channels: String(m.channel.id), env: m.channel.account_mode, ...holder })}` });
  const captureWith = (m: Merchant, token: string, holder: Record<string, string>) => t.app.inject({
    method: 'POST', url: `/${m.site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${token}` },
    payload: { channels: m.channel.id, card_number: '4111111111111111', expiry_month: '04', expiry_year: new Date().getUTCFullYear() + 2, cvv: '123', ...holder },
  });

  it('a postcode of the longest allowed length is prefilled, fits the form field and is captured; one longer is refused by both', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    const zip = 'Z'.repeat(zipMax);
    const page = await open(m, token, { zip });
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(new RegExp(`<input id="zip"[^>]*value="${zip}" maxlength="${zipMax}"`));
    expect((await captureWith(m, token, { zip })).statusCode).toBe(201);
    const tooLong = 'Z'.repeat(zipMax + 1);
    const refusedPage = await open(m, token, { zip: tooLong });
    expect(refusedPage.statusCode).toBe(400);
    expect(refusedPage.body).toContain(`must be at most ${zipMax} characters`);
    expect((await captureWith(m, token, { zip: tooLong })).json().data.params).toHaveProperty('zip');
  });

  it('refuses a country outside the spec’s list (XX) in the vaulting app and at capture, in the same words', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    const words = 'must be a country code of the ISO 3166-1 alpha-2 list, in capitals, such as GB';
    const page = await open(m, token, { country: 'XX' });
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain(words);
    const captured = await captureWith(m, token, { country: 'XX' });
    expect(captured.statusCode).toBe(400);
    expect(captured.json().data.params).toEqual({ country: words });
    expect(await stored(m)).toEqual({ sessions: 0, cards: 0 });
  });

  it('refuses control characters in cardholder text in the vaulting app as at capture', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    expect((await open(m, token, { city: 'Paris\u001b[2J' })).statusCode).toBe(400);
    expect((await captureWith(m, token, { city: 'Paris\u001b[2J' })).json().data.params).toHaveProperty('city');
  });
});

// Card testing through one vaulting app URL: the cardvaultuser token in it lives 15 minutes and
// every load of the page opens a new session. The token's sessions share their failed attempts
// (docs/hosted-pages.md "Attempts"), as a modal auth string's do.
describe('one cardvaultuser token, many loads of the vaulting app', () => {
  const sessionOf = (page: { body: string }) => pageSessionOf(page.body)!;
  const attemptsLeftOf = (page: { body: string }) => Number(/"attemptsLeft":(\d+)/.exec(page.body)![1]);
  /** What the page does on submit: capture the card with the page's session, then verify it. */
  async function saveCard(m: Merchant, session: string, cardNumber: string) {
    const captured = await t.app.inject({
      method: 'POST', url: `/${m.site.path}/site-json/vendor/v2/cards`, headers: { authorization: `Bearer ${session}` },
      payload: { channels: m.channel.id, card_number: cardNumber, expiry_month: '04', expiry_year: new Date().getUTCFullYear() + 2, cvv: '123' },
    });
    expect(captured.statusCode).toBe(201);
    return t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: captured.json().token } });
  }
  const declinedCard = '4000000000000002';
  const vaultAttempts = (m: Merchant) => t.db.one<{ count: number }>("SELECT count(*)::int AS count FROM transactions WHERE site_id = $1 AND source = 'vault_app'", [m.site.siteId]);

  it('reloading the page gives no fresh attempts: the token has three failed vaults in all, then every load refuses before the bank', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    const first = await openVaultApp(m, token);
    expect(attemptsLeftOf(first)).toBe(limits.vaultFailedAttemptsPerTokenMax);
    expect((await saveCard(m, sessionOf(first), declinedCard)).json()).toMatchObject({ outcome: 'failed', attempts_left: 2 });
    expect((await saveCard(m, sessionOf(first), declinedCard)).json()).toMatchObject({ outcome: 'failed', attempts_left: 1 });

    const second = await openVaultApp(m, token);
    expect(attemptsLeftOf(second)).toBe(1);
    expect(second.body).toContain('Attempts left: 1.');
    expect((await saveCard(m, sessionOf(second), declinedCard)).json()).toMatchObject({ outcome: 'failed', attempts_left: 0, rejected: { message: expect.any(String) } });

    // The pages already open are refused before the bank.
    for (const page of [first, second]) {
      const refused = await saveCard(m, sessionOf(page), '4111111111111111');
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ code: 'rest_attempts_exhausted', data: { status: 403 } });
    }
    // Later loads show the rejection: no form, and no page session to send a card with.
    for (const page of [await openVaultApp(m, token), await openVaultApp(m, token)]) {
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Three failed attempts: no further attempts are possible.');
      expect(page.body).not.toContain('id="card-form"');
      expect(pageSessionOf(page.body)).toBeNull();
    }
    expect((await vaultAttempts(m)).count).toBe(limits.vaultFailedAttemptsPerTokenMax);

    // The integrator's server asks for a new token (its user's password): that one starts afresh.
    const fresh = await signJwt(t.config.secrets.jwtSecret, { userId: m.site.userId, kind: 'cardvaultuser', siteId: m.site.siteId });
    const page = await openVaultApp(m, fresh);
    expect(attemptsLeftOf(page)).toBe(limits.hostedFailedAttemptsMax);
    expect((await saveCard(m, sessionOf(page), '4111111111111111')).json()).toMatchObject({ outcome: 'complete' });
  });

  it('a card vaulted successfully is not a failed attempt of the token', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    const first = await openVaultApp(m, token);
    expect((await saveCard(m, sessionOf(first), declinedCard)).json()).toMatchObject({ outcome: 'failed' });
    expect((await saveCard(m, sessionOf(first), '4111111111111111')).json()).toMatchObject({ outcome: 'complete' });
    expect(attemptsLeftOf(await openVaultApp(m, token))).toBe(limits.vaultFailedAttemptsPerTokenMax - 1);
  });
});

// Every load of the app opens a page session (a hosted_sessions row): one token in a URL must not
// open them without end, bounded only by the rate limit.
describe('vaulting app loads of one cardvaultuser token', () => {
  it('are bounded: past vaultSessionsPerTokenMax the page says so in its language, shows no form and opens no session', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    for (let load = 1; load <= limits.vaultSessionsPerTokenMax; load++) {
      const page = await openVaultApp(m, token, 'deDE');
      expect(page.statusCode).toBe(200);
      expect(pageSessionOf(page.body)).not.toBeNull();
    }
    const before = await stored(m);
    const refused = await openVaultApp(m, token, 'deDE');
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('Diese Seite wurde mit demselben Link zu oft geöffnet.');
    expect(refused.body).not.toContain('id="card-form"');
    expect(pageSessionOf(refused.body)).toBeNull();
    expect(await stored(m)).toEqual(before);
    // A new token of the same user starts afresh.
    const fresh = await openVaultApp(m, await signJwt(t.config.secrets.jwtSecret, { userId: m.site.userId, kind: 'cardvaultuser', siteId: m.site.siteId }));
    expect(pageSessionOf(fresh.body)).not.toBeNull();
  });

  it('count only loads that show the card form: a token with no attempts or cards left shows its notice on every load, opening no session', async () => {
    const noticeLoads = limits.vaultSessionsPerTokenMax + 2;
    const m = await merchant();
    // No attempts left: three declined vaults on one page.
    const declined = await earlierToken(m);
    const session = pageSessionOf((await openVaultApp(m, declined)).body)!;
    for (let attempt = 0; attempt < limits.vaultFailedAttemptsPerTokenMax; attempt++) {
      const token = (await capture(m, session, { card_number: '4000000000000002' })).json().token as string;
      expect((await t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: token } })).json()).toMatchObject({ outcome: 'failed' });
    }
    // No cards left: the token captured all it may by itself.
    const captured = await earlierToken(m);
    for (let card = 0; card < limits.cardVaultCapturesPerTokenMax; card++) expect((await capture(m, captured)).statusCode).toBe(201);
    const before = await stored(m);
    for (const [token, notice] of [[declined, 'Three failed attempts: no further attempts are possible.'], [captured, 'No more cards can be entered on this page.']] as const) {
      for (let load = 1; load <= noticeLoads; load++) {
        const page = await openVaultApp(m, token);
        expect(page.statusCode).toBe(200);
        expect(page.body).toContain(notice);
        expect(page.body).not.toContain('id="card-form"');
      }
    }
    expect(await stored(m)).toEqual(before);
  });
});

// A cardvaultuser token sits in a URL in the cardholder's browser for 15 minutes: leaked, it must
// not capture cards without end, neither directly nor through the vaulting app sessions it opens.
describe('cards one cardvaultuser token may capture', () => {
  const refusedAsExhausted = (answer: { statusCode: number; body: string; json: () => unknown }) => {
    expect(answer.statusCode).toBe(403);
    expect(answer.json()).toMatchObject({ code: 'rest_attempts_exhausted', data: { status: 403, exhausted: 'captures' } });
    expect(answer.body).not.toContain('ct_');
  };

  it('are bounded when posted with the token itself, even at once: the next one stores nothing', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    const sent = limits.cardVaultCapturesPerTokenMax + 3;
    const answers = await Promise.all(Array.from({ length: sent }, () => capture(m, token)));
    expect(answers.filter((answer) => answer.statusCode === 201)).toHaveLength(limits.cardVaultCapturesPerTokenMax);
    for (const refused of answers.filter((answer) => answer.statusCode !== 201)) refusedAsExhausted(refused);
    // Another card is refused the same way, before it is stored.
    const before = await stored(m);
    refusedAsExhausted(await capture(m, token, { card_number: '5555555555554444' }));
    expect(await stored(m)).toEqual(before);
    // A new token of the same user starts afresh.
    expect((await capture(m, await signJwt(t.config.secrets.jwtSecret, { userId: m.site.userId, kind: 'cardvaultuser', siteId: m.site.siteId }))).statusCode).toBe(201);
  });

  it('are bounded together across the token itself and every vaulting app load it opens', async () => {
    const m = await merchant();
    const token = await earlierToken(m);
    let captured = 0;
    let last: string | null = null;
    while (captured < limits.cardVaultCapturesPerTokenMax) {
      last = pageSessionOf((await openVaultApp(m, token)).body)!;
      for (let index = 0; index < limits.hostedCardCapturesPerSessionMax - 1 && captured < limits.cardVaultCapturesPerTokenMax; index++, captured++) {
        expect((await capture(m, last)).statusCode).toBe(201);
      }
    }
    // The last page still has room of its own; the token has none, by page or by itself.
    refusedAsExhausted(await capture(m, last!));
    refusedAsExhausted(await capture(m, token));
  });
});
