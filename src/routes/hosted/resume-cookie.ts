import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { pendingChallengeOf, type HostedPaymentAnswer, type ResumableSession } from '../../domain/hosted/payments.js';
import type { HostedSession } from '../../domain/hosted/sessions.js';
import { limits } from '../../limits.js';

/**
 * The cookie that lets a hosted page reloaded during its 3DS challenge (or its tab discarded by a
 * phone's browser while the payer was in the bank's app) show that challenge again: the payment
 * request page's (`tf_pay_<booking id>`, Path=/pay/) and the vaulting app's
 * (`tf_vault_<channel id>[_<session_id>]`, Path=/vault/). It holds the page's session token
 * while, and only while, the session's payment awaits its challenge: set by the answer that asks
 * for the challenge, cleared by the one that reads its outcome (both from /hosted/payments, so
 * the Path names the page's own path, where the page's load reads it). HttpOnly: the page's
 * script has the token already.
 * The modal frame has none: its host names the modal (docs/modal.md "A reloaded frame").
 */
export interface ResumeCookie {
  name: string;
  path: string;
}

export function payResumeCookie(bookingId: number): ResumeCookie {
  return { name: `tf_pay_${bookingId}`, path: '/pay/' };
}

/**
 * Named by the page's `session_id` too (alphanumeric, so a cookie name may hold it): two vaulting
 * pages of one channel awaiting their challenges in one browser (two integrator sessions in two
 * tabs) each keep their own, where one name had the second page's answer overwrite the first's.
 */
export function vaultResumeCookie(channelId: number, sessionId: string | undefined): ResumeCookie {
  return { name: sessionId === undefined ? `tf_vault_${channelId}` : `tf_vault_${channelId}_${sessionId}`, path: '/vault/' };
}

function resumeCookieOf(session: HostedSession): ResumeCookie | null {
  if (session.kind === 'pay' && session.bookingId !== null) return payResumeCookie(session.bookingId);
  return session.kind === 'vault' ? vaultResumeCookie(session.channelId, session.options.sessionId) : null;
}

function setCookie(context: AppContext, cookie: ResumeCookie, value: string, maxAgeSeconds: number): string {
  const secure = context.config.baseUrl.startsWith('https:') ? '; Secure' : '';
  return `${cookie.name}=${value}; Path=${cookie.path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`;
}

/**
 * After a page's payment answer (made, or read back): keeps the session's token for the page's
 * reload while the answer is a challenge to show, and forgets it once it is anything else.
 */
export function keepForResume(context: AppContext, reply: FastifyReply, session: HostedSession, token: string, answer: HostedPaymentAnswer): void {
  const cookie = resumeCookieOf(session);
  if (!cookie) return;
  const challenge = answer.outcome === 'challenge' && answer.challenge_url !== undefined;
  reply.header('set-cookie', challenge ? setCookie(context, cookie, token, limits.hostedSessionLifetimeSeconds) : setCookie(context, cookie, '', 0));
}

/**
 * How a page load finds the session the browser kept under `cookie`, when it brought one: its
 * payment must still await its challenge and `owns` (the page's own rule) accept it. A cookie
 * naming another page's session is left alone: that page, in another tab, may be reloaded yet.
 */
export function keptSession(context: AppContext, request: FastifyRequest, cookie: ResumeCookie): ResumableSession | undefined {
  const token = resumeToken(request.headers.cookie, cookie);
  if (!token) return undefined;
  return async (owns) => {
    const pending = await pendingChallengeOf(context, token, owns);
    return pending ? { token, session: pending.session } : null;
  };
}

function resumeToken(header: string | undefined, cookie: ResumeCookie): string | null {
  for (const pair of header?.split(';') ?? []) {
    const [key, value] = pair.trim().split('=', 2);
    if (key === cookie.name && value) return value;
  }
  return null;
}
