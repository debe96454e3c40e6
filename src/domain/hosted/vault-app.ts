import { countryCodeProblem, emailAddressPattern, isCountryCode, isEmailAddress } from '../reference-data.js';
import { patternPhrase } from '../patterns.js';
import { isCurrencyCode } from '../money.js';
import { accountModes, noPaymentsReason } from '../channels.js';
import { parseForcedDeclineCode } from '../../processor/index.js';
import { isTestMode } from '../vault/index.js';
import { limits } from '../../limits.js';
import { textProblem } from '../text.js';
import type { Queryable } from '../../storage/db.js';
import { parseLanguage, type LanguageCode } from '../../i18n/catalogue.js';
import { createHostedSession, type HostedSession } from './sessions.js';
import { checkCardVaultUser } from './card-vault-user.js';
import { cardVaultTokenRecordId, claimCardVaultTokenSession } from './modal-auth-uses.js';
import { decodedRedirect, followableUrlProblem } from '../redirect-url.js';
import type { ResumableSession } from './payments.js';

/**
 * The vaulting app's inputs (spec "Vaulting app inputs"): validated in full before any form is
 * shown. Problems are reported per parameter, as `rest_invalid_param` does.
 */
export interface VaultAppInputs {
  auth: string;
  channelId: number;
  sessionId?: string;
  redirect?: string;
  holder: { name?: string; email?: string; address?: string; city?: string; zip?: string; country?: string };
  currency?: string;
  env: string;
  failCode?: string;
  language?: LanguageCode;
}

export type RawQuery = Record<string, unknown>;

/**
 * The cardholder fields' bounds, the same in the vaulting app's query, the card form's `maxlength`
 * and POST /cards (routes/cards/schemas.ts), so a value one accepts the next does not refuse.
 */
export const holderFieldLengthMax = {
  name: limits.nameLengthMax,
  email: limits.emailLengthMax,
  address: limits.cardHolderAddressLengthMax,
  city: limits.nameLengthMax,
  zip: limits.cardHolderZipLengthMax,
} as const;

/**
 * A booking's traveller as the cardholder name a card form starts with, or '' when it is longer
 * than the field takes (a first name and a surname each within their own bound can add up past
 * it): prefilled, it was refused by POST /cards in the schema's English, and the payer was stuck.
 */
export function cardholderNameOf(booking: { firstname: string; surname: string }): string {
  const name = `${booking.firstname} ${booking.surname}`.trim();
  return name.length <= holderFieldLengthMax.name ? name : '';
}

/** A single text value of the query (repeated parameters are refused, not guessed at). */
function text(query: RawQuery, name: string, problems: Record<string, string>): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') {
    problems[name] = 'must be given once';
    return undefined;
  }
  return value;
}

/**
 * `redirect`: only what followableUrl allows is followed (decodedRedirect: as sent, or decoded
 * once); anything else (javascript:, data:, relative paths, credentials) is refused.
 */
export function parseRedirect(value: string): string | null {
  if (value.length > limits.redirectUrlLengthMax) return null;
  const redirect = decodedRedirect(value);
  return redirect === null ? null : new URL(redirect).toString();
}

export function parseVaultAppQuery(query: RawQuery): { ok: true; inputs: VaultAppInputs } | { ok: false; params: Record<string, string> } {
  const problems: Record<string, string> = {};
  const auth = text(query, 'auth', problems);
  if (!auth) problems.auth ??= 'is required';
  const channelsText = text(query, 'channels', problems);
  const channelId = channelsText !== undefined && /^[1-9][0-9]{0,15}$/.test(channelsText) ? Number(channelsText) : NaN;
  if (!Number.isSafeInteger(channelId)) problems.channels ??= channelsText === undefined ? 'is required' : 'must be a channel ID';
  const sessionId = text(query, 'session_id', problems);
  if (sessionId !== undefined && !new RegExp(`^[A-Za-z0-9]{1,${limits.hostedSessionIdLengthMax}}$`).test(sessionId)) problems.session_id = 'must be alphanumeric';
  const redirectText = text(query, 'redirect', problems);
  const redirect = redirectText === undefined ? undefined : parseRedirect(redirectText) ?? undefined;
  if (redirectText !== undefined && redirect === undefined) problems.redirect = followableUrlProblem;
  const holder: VaultAppInputs['holder'] = {};
  for (const [name, maxLength] of Object.entries(holderFieldLengthMax) as [keyof typeof holderFieldLengthMax, number][]) {
    const value = text(query, name, problems)?.trim();
    if (value === undefined || value === '') continue;
    const problem = textProblem(value, { maxLength, kind: 'line' });
    if (problem) problems[name] = problem;
    else holder[name] = value;
  }
  if (holder.email !== undefined && !isEmailAddress(holder.email)) problems.email = `must be ${patternPhrase(emailAddressPattern)}`;
  const country = text(query, 'country', problems)?.toUpperCase();
  if (country !== undefined) {
    if (isCountryCode(country)) holder.country = country;
    else problems.country = countryCodeProblem;
  }
  const currency = text(query, 'currency', problems)?.toUpperCase();
  if (currency !== undefined && !isCurrencyCode(currency)) problems.currency = 'must be an ISO 4217 code';
  const env = text(query, 'env', problems) ?? 'live';
  if (!(accountModes as readonly string[]).includes(env)) problems.env = `must be one of ${accountModes.join(', ')}`;
  const failCodeText = text(query, 'fail_code', problems);
  const failCode = failCodeText === undefined ? undefined : parseForcedDeclineCode(failCodeText) ?? undefined;
  if (failCodeText !== undefined && failCode === undefined) problems.fail_code = 'must be a forced decline code (800.100.151 to 800.100.161)';
  const languageText = text(query, 'language', problems);
  const language = parseLanguage(languageText);
  if (languageText !== undefined && !language) problems.language = 'must be a language code such as enGB';
  if (Object.keys(problems).length > 0) return { ok: false, params: problems };
  return {
    ok: true,
    inputs: {
      auth: auth!, channelId, holder, env,
      ...(sessionId !== undefined ? { sessionId } : {}),
      ...(redirect !== undefined ? { redirect } : {}),
      ...(currency !== undefined ? { currency } : {}),
      ...(failCode !== undefined ? { failCode } : {}),
      ...(language ? { language } : {}),
    },
  };
}

export interface VaultChannel {
  id: number;
  siteId: number;
  accountMode: string;
  currency: string;
  language: string;
  company: string;
}

export type VaultAppOpening =
  /** `resumed`: the browser's own session of this page, whose vault awaits its 3DS challenge (resumeOf). */
  | { ok: true; token: string; session: HostedSession; channel: VaultChannel; resumed: boolean }
  /** `usedUp`: the token opened the app as many times as it may; the page says so in its language. */
  | { ok: false; status: 403; params: Record<string, string>; usedUp?: { language: LanguageCode; company: string } }
  /**
   * The token's failed attempts (`rejected`) or its cards (`capturesExhausted`) are used up: any
   * card would be refused before the bank, so the page shows that notice and no form, and no
   * session is opened (the load does not count toward `vaultSessionsPerTokenMax`).
   */
  | { ok: false; status: 200; spent: 'rejected' | 'capturesExhausted'; language: LanguageCode; company: string }
  /** `language`: the page's, as the form would have been shown in (the URL's, else the channel's). */
  | { ok: false; status: 400; params: Record<string, string>; language: LanguageCode };

/**
 * Checks the inputs against the world: `auth` must pass checkCardVaultUser (live cardvaultuser
 * JWT of a member of its site who is not read-only and has not changed password since) and that
 * site must own `channels`, not closed (it takes no cards); `env` must name that channel's account
 * mode; `fail_code` only on test channels. Then opens the page session the form will use, sharing
 * the token's count of failed attempts with every other session the token opened, unless it
 * opened as many as it may (claimCardVaultTokenSession).
 */
export async function openVaultApp(db: Queryable, options: { jwtSecret: Uint8Array; inputs: VaultAppInputs; now: Date; resumable?: ResumableSession }): Promise<VaultAppOpening> {
  const { inputs } = options;
  const user = await checkCardVaultUser(db, { jwtSecret: options.jwtSecret, token: inputs.auth, now: options.now });
  if (!user.ok) {
    // Read-only members may not store cards; every other refusal reads as a bad token.
    const problem = user.reason === 'read_only' ? 'belongs to a read-only member, who may not save cards' : 'is not a valid cardvaultuser token, or it has expired';
    return { ok: false, status: 403, params: { auth: problem } };
  }
  const row = await db.maybeOne<{ id: number; site_id: number; account_mode: string; channel_status: string; currency: string; language: string; company: string }>(
    `SELECT c.id, c.site_id, c.account_mode, c.channel_status, c.currency, c.language, COALESCE(c.receipt_label, s.name) AS company
       FROM channels c JOIN sites s ON s.id = c.site_id
      WHERE c.id = $1 AND c.deleted_at IS NULL AND c.site_id = $2`,
    [inputs.channelId, user.siteId],
  );
  // A channel of another site looks exactly like a missing one.
  if (!row) return { ok: false, status: 403, params: { channels: 'is not a channel this authorisation may use' } };
  const channel: VaultChannel = { id: row.id, siteId: row.site_id, accountMode: row.account_mode, currency: row.currency.trim(), language: row.language, company: row.company };
  // The channel is the token's own from here: its refusals are in the page's language, as its form is.
  const language = inputs.language ?? parseLanguage(channel.language) ?? 'enGB';
  // The capture endpoint refuses the cards of a channel that takes no payments: a form here could only fail.
  const noPayments = noPaymentsReason({ accountMode: row.account_mode, channelStatus: row.channel_status });
  if (noPayments !== null) return { ok: false, status: 400, params: { channels: `is ${noPayments}: it takes no cards` }, language };
  if (inputs.env !== channel.accountMode) return { ok: false, status: 400, params: { env: `does not match the channel's account_mode` }, language };
  if (inputs.failCode !== undefined && !isTestMode(channel.accountMode)) return { ok: false, status: 400, params: { fail_code: 'applies to test channels only' }, language };
  // Before the claim: the reload opens no session (nor counts as one), and is not refused for the
  // failed attempt its own challenge counts as until it completes.
  const resumed = options.resumable ? await resumeOf(db, options.resumable, { user, channel, inputs }) : null;
  if (resumed) return { ok: true, ...resumed, channel, resumed: true };
  const claim = await claimCardVaultTokenSession(db, { tokenId: user.tokenId, issuedAt: user.issuedAt, channelId: channel.id }, options.now);
  if (!claim.ok && claim.reason !== 'sessions_used_up') {
    return { ok: false, status: 200, spent: claim.reason === 'attempts_exhausted' ? 'rejected' : 'capturesExhausted', language, company: channel.company };
  }
  if (!claim.ok) {
    const params = { auth: `has opened the vaulting app ${limits.vaultSessionsPerTokenMax} times, as many as one token may: obtain a new token` };
    return { ok: false, status: 403, params, usedUp: { language, company: channel.company } };
  }
  const { token, session } = await createHostedSession(db, {
    kind: 'vault',
    modalAuthId: claim.id,
    siteId: channel.siteId,
    channelId: channel.id,
    userId: user.userId,
    // The card's own currency (`currency` input) is informational: a vault is a zero-value
    // verification in the channel's currency, the only one the payments core accepts there
    // (docs/hosted-pages.md). Taking the input here refused every card of a page opened with it.
    currency: channel.currency,
    amount: 0,
    language,
    options: {
      ...(inputs.sessionId !== undefined ? { sessionId: inputs.sessionId } : {}),
      ...(inputs.redirect !== undefined ? { redirect: inputs.redirect } : {}),
      ...(inputs.failCode !== undefined ? { failCode: inputs.failCode } : {}),
      cardholder: inputs.holder,
    },
  }, options.now);
  return { ok: true, token, session, channel, resumed: false };
}

/**
 * The page reloaded during its vault's 3DS challenge (or its tab discarded while the payer was in
 * the bank's app) goes on with that session: the same challenge, then the redirect that vault's
 * outcome makes. Only a session this very page opened: the same cardvaultuser token (its shared
 * record), user, site and channel, and the inputs the redirect carries (`session_id`, `redirect`)
 * and `fail_code`, so the redirect is exactly the one the first load would have made, and a page
 * opened with another token (another integrator session, another site) never shows this card.
 */
async function resumeOf(
  db: Queryable,
  resumable: ResumableSession,
  page: { user: { userId: number; siteId: number; tokenId: string; issuedAt: number }; channel: VaultChannel; inputs: VaultAppInputs },
): Promise<{ token: string; session: HostedSession } | null> {
  const { user, channel, inputs } = page;
  return resumable(async (session) => {
    const same = session.kind === 'vault' && session.siteId === channel.siteId && session.channelId === channel.id && session.userId === user.userId
      && session.options.sessionId === inputs.sessionId && session.options.redirect === inputs.redirect && session.options.failCode === inputs.failCode;
    return same && session.modalAuthId !== null && session.modalAuthId === (await cardVaultTokenRecordId(db, { ...user, channelId: channel.id }));
  });
}
