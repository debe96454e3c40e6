import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { openVaultApp, parseVaultAppQuery, type RawQuery, type VaultAppOpening } from '../../domain/hosted/vault-app.js';
import { attemptsLeft } from '../../domain/hosted/sessions.js';
import { localeOf, parseLanguage, type LanguageCode } from '../../i18n/catalogue.js';
import { limits } from '../../limits.js';
import { isTestMode } from '../../domain/vault/index.js';
import { assetResponse, errorResponses, htmlResponse, noCredential } from '../../http/openapi.js';
import { sendAsset } from './assets.js';
import { html } from './html.js';
import { sendPage } from './html.js';
import { keptSession, vaultResumeCookie } from './resume-cookie.js';
import { cardFormView, errorPage, hostedPage, noticeView, pageMessages, secureNoteView, translatorFor } from './views.js';

/**
 * The vaulting app, one directory per semantic version (spec Versioning 1). Each version names
 * its own bundle and stylesheet under `/vault/<version>/`; adding 1.9.0 means adding an entry
 * here and a `web/vault/1.9.0/` directory, and 1.8.0 stays exactly as it is. A Map, not an object:
 * `/vault/constructor/` is an unknown version (404), not a release read through Object.prototype.
 */
export const vaultAppVersions: ReadonlyMap<string, { script: string; style: string; files: string[] }> = new Map([
  ['1.8.0', { script: '/vault/1.8.0/app.js', style: '/vault/1.8.0/styles.css', files: ['app.js', 'styles.css'] }],
]);
export const latestVaultAppVersion = '1.8.0';

/** The public URL of a vaulting app version (`{vault_app_url}/<version>/`). */
export function vaultAppUrl(config: AppContext['config'], version = latestVaultAppVersion): string {
  const base = config.vaultAppUrl;
  // A bare origin means "this server", where the app lives under /vault/.
  return new URL(base).pathname === '/' ? `${base}/vault/${version}/` : `${base}/${version}/`;
}

const vaultCsp = { frameAncestors: "'none'", frameSrc: "'self'" } as const;

/** The attempts a page opened with an unused token has; a page with fewer says how many are left. */
const freshAttempts = attemptsLeft({ kind: 'vault', attempts: 0, transactionId: null, authFailures: 0 });

const tags = ['Hosted pages'];
// The page is opened with the vaulting-app JWT in its `auth` query parameter (checked by the
// page itself, answered with an error page), never an Authorization header.
const vaultPageSchema = {
  operationId: 'getVaultApp', summary: 'The vaulting app: a card form for one channel (query: auth, channels, session_id, redirect, cardholder fields, env, language)',
  tags,
  security: noCredential,
  response: {
    200: htmlResponse("The card form, or once the auth token's failed attempts or card captures are used up the rejection without a form"),
    400: htmlResponse('Error page naming the invalid inputs; no form'),
    403: htmlResponse('Error page: the auth token is invalid or expired, may not use the channel, or opened the app as many times as it may (limits.vaultSessionsPerTokenMax)'),
    404: htmlResponse('Error page: unknown version'),
    ...errorResponses(429),
  },
};
const vaultAssetSchema = {
  operationId: 'getVaultAppFile', summary: 'A file of a vaulting app version (its script or stylesheet)',
  tags,
  security: noCredential,
  response: { 200: assetResponse('The file, cacheable for a year'), ...errorResponses(404, 429) },
};

export async function vaultAppRoutes(app: App, context: AppContext): Promise<void> {
  app.get('/vault/:version/', { schema: vaultPageSchema }, async (request, reply) => {
    const { version } = request.params as { version: string };
    const release = vaultAppVersions.get(version);
    const query = request.query as RawQuery;
    const language: LanguageCode = parseLanguage(typeof query.language === 'string' ? query.language : undefined) ?? 'enGB';
    const style = release?.style ?? vaultAppVersions.get(latestVaultAppVersion)!.style;
    const t = translatorFor(language);
    if (!release) return sendPage(reply, 404, errorPage({ language, style, message: t('invalidRequest', { params: 'version' }) }), vaultCsp);

    const parsed = parseVaultAppQuery(query);
    if (!parsed.ok) {
      const message = parsed.params.auth ? t('invalidAuth') : t('invalidRequest', { params: Object.keys(parsed.params).join(', ') });
      return sendPage(reply, 400, errorPage({ language, style, message, details: parsed.params }), vaultCsp);
    }
    // This browser's own page reloaded during its vault's 3DS challenge (resume-cookie.ts).
    const resumable = keptSession(context, request, vaultResumeCookie(parsed.inputs.channelId, parsed.inputs.sessionId));
    const opened = await openVaultApp(context.db, { jwtSecret: context.config.secrets.jwtSecret, inputs: parsed.inputs, now: context.now(), ...(resumable ? { resumable } : {}) });
    if (!opened.ok) {
      // The token's failed attempts, or the cards it may capture, are used up (across every load
      // of the page): any card would be refused before the bank, so the page has no form to type
      // one into. Nor does it redirect: nothing was attempted on this load, and the redirect
      // parameters name a vault transaction and a card (docs/hosted-pages.md "attempts per
      // cardvaultuser token", "Card captures per page"). Said as such for captures, since no
      // attempt may have failed. No session is opened for it (openVaultApp).
      if (opened.status === 200) {
        const content = noticeView({ kind: 'failed', message: translatorFor(opened.language)(opened.spent, { company: opened.company }) });
        return sendPage(reply, 200, hostedPage({ ...pageHeader(opened.language, opened.company, release.style), content }), vaultCsp);
      }
      if (opened.status === 403 && opened.usedUp) {
        const { language: pageLanguage, company } = opened.usedUp;
        return sendPage(reply, 403, errorPage({ language: pageLanguage, style, message: translatorFor(pageLanguage)('linkUsedUp', { company }), details: opened.params }), vaultCsp);
      }
      // A refused token (or a channel it may not use) tells nothing of the channel, its language included.
      if (opened.status === 403) return sendPage(reply, 403, errorPage({ language, style, message: t('invalidAuth'), details: opened.params }), vaultCsp);
      const message = translatorFor(opened.language)('invalidRequest', { params: Object.keys(opened.params).join(', ') });
      return sendPage(reply, 400, errorPage({ language: opened.language, style, message, details: opened.params }), vaultCsp);
    }
    return sendPage(reply, 200, await vaultFormPage(context, opened, release.script, release.style), vaultCsp);
  });

  app.get('/vault/:version/:file', { schema: vaultAssetSchema }, async (request, reply) => {
    const { version, file } = request.params as { version: string; file: string };
    const release = vaultAppVersions.get(version);
    if (release?.files.includes(file)) {
      const sent = sendAsset(reply, `vault/${version}/${file}`, { immutable: true });
      if (sent) return sent;
    }
    return reply.code(404).send({ code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } });
  });
}

/**
 * The card form of an opened page; a resumed one (its vault awaits the 3DS challenge) shows that
 * challenge again instead (web/vault: `resume`), with no note of the attempts left beside it.
 */
async function vaultFormPage(context: AppContext, opened: Extract<VaultAppOpening, { ok: true }>, script: string, style: string): Promise<string> {
  const { session, channel } = opened;
  const pageLanguage = session.language as LanguageCode;
  const pageT = translatorFor(pageLanguage);
  const left = attemptsLeft(session);
  return hostedPage({
    ...pageHeader(pageLanguage, channel.company, style),
    script,
    content: html`${secureNoteView(pageT, isTestMode(channel.accountMode))}
${left < freshAttempts && !opened.resumed ? noticeView({ kind: 'info', message: pageT('attemptsLeft', { count: left }), id: 'attempts-left' }) : ''}
${cardFormView({ t: pageT, language: pageLanguage, holderFields: ['name', 'email', 'address', 'city', 'zip', 'country'], prefill: session.options.cardholder ?? {}, submitLabel: pageT('saveCard') })}`,
    data: {
      kind: 'vault',
      session: opened.token,
      sitePath: await sitePathOf(context, channel.siteId),
      channelId: channel.id,
      // A BCP 47 tag (`fr-FR`) for Intl, as the payment request page's: the language code (`frFR`) made Intl throw.
      locale: localeOf(pageLanguage),
      messages: pageMessages(pageLanguage),
      attemptsLeft: left,
      timeoutMs: limits.hostedPaymentTimeoutMs,
      company: channel.company,
      ...(opened.resumed ? { resume: true } : {}),
    },
  });
}

/** The vaulting app's title and headings, in the page's language. */
function pageHeader(language: LanguageCode, company: string, style: string) {
  const t = translatorFor(language);
  return { language, title: t('titleVault'), heading: t('titleVault'), subheading: t('vaultFor', { company }), style };
}

export async function sitePathOf(context: AppContext, siteId: number): Promise<string> {
  return (await context.db.one<{ path: string }>('SELECT path FROM sites WHERE id = $1', [siteId])).path;
}
