import { formatMoney } from '../../domain/money.js';
import type { ChallengeView } from '../../processor/sandbox/challenges.js';

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!);

const brandNames: Record<string, string> = { visa: 'Visa', master: 'Mastercard', amex: 'American Express' };

function layout(nonce: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
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

/** The hosted sandbox 3DS challenge: a summary and two real buttons in a plain POST form. */
export function challengePage(view: ChallengeView, nonce: string, action: string): string {
  const card = view.cardLastFour ? `${brandNames[view.cardBrand ?? ''] ?? 'Card'} ending ${view.cardLastFour}` : 'Card';
  const summary = `<dl>
<dt>Merchant</dt><dd>${escapeHtml(view.merchantName ?? 'Sandbox merchant')}</dd>
<dt>Amount</dt><dd>${escapeHtml(formatMoney(view.amount, view.currency))}</dd>
<dt>Card</dt><dd>${escapeHtml(card)}</dd>
</dl>`;
  if (view.state !== 'pending') {
    const message = view.state === 'done' ? 'This authentication has already been completed.' : 'This authentication request has expired.';
    return layout(nonce, '3-D Secure', `<h1>3-D Secure</h1>${summary}<p role="status">${message}</p>`);
  }
  return layout(
    nonce,
    '3-D Secure authentication (sandbox)',
    `<h1>Confirm this payment</h1>
<p class="note">Sandbox 3-D Secure challenge. No real bank is involved: choose the outcome to simulate.</p>
${summary}
<form method="post" action="${escapeHtml(action)}">
<button type="submit" name="result" value="authenticate">Authenticate</button>
<button type="submit" name="result" value="fail">Fail</button>
</form>`,
  );
}

export function notFoundPage(nonce: string): string {
  return layout(nonce, 'Not found', '<h1>Authentication not found</h1><p>This link is not valid.</p>');
}
