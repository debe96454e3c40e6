import { formatMoney } from '../../domain/money.js';
import { localeOf, normaliseLanguage, translate, type LanguageCode, type MessageKey } from '../../i18n/catalogue.js';
import type { ChallengeView } from '../../processor/sandbox/challenges.js';

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!);

const brandNames: Record<string, string> = { visa: 'Visa', master: 'Mastercard', amex: 'American Express' };

function layout(nonce: string, title: string, body: string, lang = 'en'): string {
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">
body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;display:flex;justify-content:center;padding:2rem 1rem}
main{background:#fff;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.15);max-width:26rem;width:100%;padding:1.5rem}
h1{font-size:1.25rem;margin:0 0 .5rem}.note{color:#555;font-size:.9rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{color:#555}dd{margin:0;font-weight:600}
form{display:flex;gap:.75rem;margin-top:1.25rem}button{flex:1;font-size:1rem;padding:.7rem;border-radius:6px;border:1px solid #888;cursor:pointer}
button[value=authenticate]{background:#1a7f37;color:#fff;border-color:#1a7f37}button[value=fail]{background:#fff;color:#b42318;border-color:#b42318}
button:focus-visible{outline:3px solid #0b5fff;outline-offset:2px}
</style>
</head>
<body><main>${body}</main></body>
</html>`;
}

/**
 * The hosted sandbox 3DS challenge: a summary and two real buttons in a plain POST form, in the
 * cardholder's language (the payment's, which the page around the challenge is shown in; English
 * for a payment that named none). It was English inside a page in any of the 15 languages.
 */
export function challengePage(view: ChallengeView, nonce: string, action: string): string {
  const language: LanguageCode = normaliseLanguage(view.language);
  const lang = localeOf(language);
  const t = (key: SandboxKey, vars?: Record<string, string>) => escapeHtml(sandboxText(language, key, vars));
  const brand = brandNames[view.cardBrand ?? ''] ?? sandboxText(language, 'card');
  const card = view.cardLastFour ? t('cardEnding', { brand, lastFour: view.cardLastFour }) : t('card');
  const merchant = view.merchantName ? escapeHtml(view.merchantName) : t('sandboxMerchant');
  const summary = `<dl>
<dt>${t('merchant')}</dt><dd>${merchant}</dd>
<dt>${t('amount')}</dt><dd>${escapeHtml(formatMoney(view.amount, view.currency, lang))}</dd>
<dt>${t('card')}</dt><dd>${card}</dd>
</dl>`;
  if (view.state !== 'pending') {
    const message = view.state === 'done' ? t('completed') : t('expired');
    return layout(nonce, '3-D Secure', `<h1>3-D Secure</h1>${summary}<p role="status">${message}</p>`, lang);
  }
  return layout(
    nonce,
    sandboxText(language, 'title'),
    `<h1>${t('heading')}</h1>
<p class="note">${t('note')}</p>
${summary}
<form method="post" action="${escapeHtml(action)}">
<button type="submit" name="result" value="authenticate">${t('authenticate')}</button>
<button type="submit" name="result" value="fail">${t('fail')}</button>
</form>`,
    lang,
  );
}

/** A key of the catalogue's `sandbox` namespace, without the namespace. */
type SandboxKey = MessageKey extends infer Key ? (Key extends `sandbox.${infer Name}` ? Name : never) : never;

function sandboxText(language: LanguageCode, key: SandboxKey, vars?: Record<string, string>): string {
  return translate(language, `sandbox.${key}`, vars);
}

/**
 * A link to no challenge: there is no payment to take a language from, so the page is in the
 * browser's (`language`, from its Accept-Language header) when that is one of the 15; otherwise it
 * stays neutral, the English of any unknown link (`lang="en"`, no locale claimed). It was English
 * whatever the browser asked for, beside a challenge page in the payer's language.
 */
export function notFoundPage(nonce: string, language: LanguageCode | undefined): string {
  if (!language) return layout(nonce, 'Not found', '<h1>Authentication not found</h1><p>This link is not valid.</p>');
  const heading = sandboxText(language, 'notFoundHeading');
  return layout(nonce, heading, `<h1>${escapeHtml(heading)}</h1><p>${escapeHtml(sandboxText(language, 'notFound'))}</p>`, localeOf(language));
}
