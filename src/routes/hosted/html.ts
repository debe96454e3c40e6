import type { FastifyReply } from 'fastify';

/**
 * Server-rendered HTML for the hosted pages. Every interpolated value is escaped unless it is a
 * `SafeHtml` made by this module, so page inputs can never inject markup. Pages carry no inline
 * script or style: behaviour comes from the versioned bundles under `dist/web/`.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);
}

type Interpolation = SafeHtml | string | number | null | undefined | false | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, index) => {
    out += render(value) + strings[index + 1]!;
  });
  return new SafeHtml(out);
}

/** JSON for a `<script type="application/json">` data block: inert, and `<` cannot close the tag. */
export function jsonData(id: string, data: unknown): SafeHtml {
  const json = JSON.stringify(data).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
  return new SafeHtml(`<script type="application/json" id="${escapeHtml(id)}">${json}</script>`);
}

export interface PageFrame {
  /** BCP 47 locale for `<html lang>`. */
  lang: string;
  title: string;
  /** Stylesheet and script paths (same origin). */
  styles: string[];
  scripts: string[];
  body: SafeHtml;
  bodyClass?: string;
}

/**
 * The icon is empty (`data:,`): without one the browser asks for /favicon.ico, a 404 in the
 * console of every page. A data: URL, which the CSP's img-src already allows, needs no route.
 */
export function page(frame: PageFrame): string {
  return html`<!doctype html>
<html lang="${frame.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${frame.title}</title>
<link rel="icon" href="data:,">
${frame.styles.map((href) => html`<link rel="stylesheet" href="${href}">`)}
${frame.scripts.map((src) => html`<script src="${src}" defer></script>`)}
</head>
<body class="${frame.bodyClass ?? ''}">
${frame.body}
</body>
</html>
`.value;
}

export interface CspOptions {
  /** `'none'`, or the origins allowed to frame the page. */
  frameAncestors: string;
  /** Origins the page may frame (the 3DS challenge). */
  frameSrc?: string;
  /** Where forms may submit and the page may navigate by form; redirects are followed by script. */
  formAction?: string;
}

/**
 * The hosted pages' Content-Security-Policy: nothing but our own scripts and styles, no inline
 * code, no plugins, no third parties. Set here so the platform's default header hook leaves it.
 */
export function contentSecurityPolicy(options: CspOptions): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `frame-src ${options.frameSrc ?? "'self'"}`,
    `form-action ${options.formAction ?? "'self'"}`,
    "base-uri 'none'",
    `frame-ancestors ${options.frameAncestors}`,
  ].join('; ');
}

export function sendPage(reply: FastifyReply, status: number, body: string, csp: CspOptions): FastifyReply {
  reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', contentSecurityPolicy(csp))
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .header('permissions-policy', 'camera=(), microphone=(), geolocation=(), payment=()');
  // Older browsers ignore frame-ancestors; X-Frame-Options covers the "never framed" pages.
  if (csp.frameAncestors === "'none'") reply.header('x-frame-options', 'DENY');
  return reply.send(body);
}
