import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { App } from '../../app.js';
import type { AppContext } from '../../context.js';
import { limits } from '../../limits.js';
import { completeChallenge, findChallenge } from '../../processor/sandbox/challenges.js';
import { challengePage, notFoundPage } from './page.js';
import { preferredLanguage } from '../../i18n/catalogue.js';

const ChallengeParams = Type.Object({ id: Type.String({ pattern: '^[A-Za-z0-9_-]{32}$' }) });
const ChallengeForm = Type.Object({ result: Type.Union([Type.Literal('authenticate'), Type.Literal('fail')]) }, { additionalProperties: false });

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

/**
 * The sandbox issuer's framing policy: any http(s) page may frame the challenge. Real issuers'
 * challenge pages (the ACS of EMV 3-D Secure 2) are built to be shown in an iframe of the
 * merchant's checkout, which is often itself a frame of a payment provider under the shop's
 * page; `frame-ancestors` checks every ancestor, so `'self'` broke the payment modal (our frame
 * under the integrator's page). Acceptable here: the page has no scripts, only test-card
 * challenges reach it (no real money, no real card data: it shows brand and last four), and what
 * a clickjacker could make someone press is "Authenticate" on a sandbox payment, whose outcome the
 * payments code takes from the processor's record anyway.
 */
export const sandboxFrameAncestors = 'http: https:';

/** Strict CSP: no scripts at all, one nonce'd style block, the form may post here and land on the return URL. */
function sendPage(reply: FastifyReply, status: number, html: (nonce: string) => string, returnUrl?: string): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  const formTargets = ["'self'", returnUrl ? originOf(returnUrl) : ''].filter(Boolean).join(' ');
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', `default-src 'none'; style-src 'nonce-${nonce}'; form-action ${formTargets}; frame-ancestors ${sandboxFrameAncestors}; base-uri 'none'`)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .send(html(nonce));
}

/** The sandbox processor's hosted 3DS challenge page (challengeUrl of a `challenge` outcome). */
export async function sandboxRoutes(app: App, context: AppContext): Promise<void> {
  await app.register(async (scope) => {
    // A plain HTML form posts urlencoded; parsed only in this scope, with a tiny body limit.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: limits.sandboxFormBytesMax }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });

    scope.get('/sandbox/3ds/:id', { schema: { params: ChallengeParams, hide: true } }, async (request, reply) => {
      const { id } = request.params as { id: string };
      const view = await findChallenge(context.db, id);
      if (!view) return sendPage(reply, 404, (nonce) => notFoundPage(nonce, preferredLanguage(request.headers['accept-language'])));
      // 410 once expired, as the answer to its form (docs/sandbox.md); the page says so either way.
      return sendPage(reply, view.state === 'expired' ? 410 : 200, (nonce) => challengePage(view, nonce, `/sandbox/3ds/${id}`), view.returnUrl);
    });

    // The route's own bound, whatever the media type: a JSON body went to the global parser's
    // 256 KiB (session 29's audit), where the form is held to its tiny one.
    scope.post('/sandbox/3ds/:id', { bodyLimit: limits.sandboxFormBytesMax, schema: { params: ChallengeParams, body: ChallengeForm, hide: true } }, async (request, reply) => {
      const { id } = request.params as { id: string };
      const { result } = request.body as { result: 'authenticate' | 'fail' };
      const view = await completeChallenge(context.db, id, result);
      if (!view) return sendPage(reply, 404, (nonce) => notFoundPage(nonce, preferredLanguage(request.headers['accept-language'])));
      if (view.state === 'expired') return sendPage(reply, 410, (nonce) => challengePage(view, nonce, `/sandbox/3ds/${id}`));
      // Back to the payment's return route, which asks the processor (lookup) for the outcome.
      return reply.code(303).header('cache-control', 'no-store').redirect(view.returnUrl, 303);
    });
  });
}
