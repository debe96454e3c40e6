import { createHash } from 'node:crypto';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { docsStylesheet, renderDocs } from './render.js';

// The page's own policy: no scripts at all, only its inline stylesheet (by hash), not framable.
const stylesheetHash = createHash('sha256').update(docsStylesheet).digest('base64');
export const docsContentSecurityPolicy = `default-src 'none'; style-src 'sha256-${stylesheetHash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/** The human-readable API reference at /docs, rendered on the server from /openapi.json's document. */
export async function docsRoutes(app: App, _context: AppContext): Promise<void> {
  let page: string | null = null;
  app.get('/docs', { schema: { hide: true } }, async (_request, reply) => {
    // Routes never change after start-up, so the page is rendered once.
    page ??= renderDocs(app.swagger() as unknown as Record<string, unknown>);
    void reply.header('content-security-policy', docsContentSecurityPolicy);
    void reply.header('x-frame-options', 'DENY');
    void reply.header('cache-control', 'no-cache');
    return reply.type('text/html; charset=utf-8').send(page);
  });
}
