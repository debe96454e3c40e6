import { parsedUrl } from '../net.js';

/** What a refused redirect is told, after the name of its parameter. */
export const followableUrlProblem = 'must be an absolute http or https URL, without a user name or password in it';

/**
 * Where the service may send a cardholder's browser: an absolute http or https URL with a host
 * and without credentials. `https://pay.example.com:pw@evil.example/` shows a trusted name before
 * the `@` while it leads elsewhere, and a password in a URL ends up in logs and histories. One
 * rule for every redirect the service follows: the vaulting app's `redirect`, a transaction's
 * `redirect_url` (checked when given and again before the 3-D Secure return follows it).
 * Returns the parsed URL, or null when it may not be followed.
 */
export function followableUrl(value: string): URL | null {
  const url = parsedUrl(value);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return null;
  return url.hostname !== '' && url.username === '' && url.password === '' ? url : null;
}

/**
 * The spec's redirects (the vaulting app's `redirect`, a transaction's `redirect_url`) arrive
 * "UTF-8 URL-encoded", decodable with decodeURIComponent: a value that cannot be followed as sent
 * is taken decoded once, when that can be. Returns the value to keep (as sent when it needs no
 * decoding), or null when neither form may be followed.
 */
export function decodedRedirect(value: string): string | null {
  if (followableUrl(value)) return value;
  const decoded = safeDecode(value);
  return decoded !== null && followableUrl(decoded) ? decoded : null;
}

function safeDecode(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}
