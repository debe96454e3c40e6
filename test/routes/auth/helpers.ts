import type { TestContext } from '../../support/context.js';

export function authPath(site: string, endpoint: string): string {
  return `/${site}/site-json/jwt-auth/v1/${endpoint}`;
}

export async function postToken(t: TestContext, site: string, body: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: authPath(site, 'token'), payload: body });
}

export const userObjectKeys = [
  'id', 'name', 'username', 'user_email', 'user_nicename', 'user_display_name', 'usertype', 'type', 'read_only', 'can_sign_off_payout',
  'default_site', 'site_count', 'two_factor_confirmed_at', 'sites', 'token', 'refresh_token',
].sort();
