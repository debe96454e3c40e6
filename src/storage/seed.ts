import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import { createChannel } from '../domain/channels.js';
import { createSite, createUser, setMembership } from '../domain/users/accounts.js';
import { insertApiToken } from '../domain/users/api-tokens.js';

/** What the first development start creates, so a newcomer can call the API at once. */
export const demo = {
  sitePath: 'demo',
  siteName: 'Demo Travel',
  username: 'demo',
  email: 'demo@example.com',
  channelName: 'Demo test channel',
  channelCurrency: 'USD',
} as const;

export type SeedOutcome =
  | { seeded: true; sitePath: string; username: string; password: string; apiToken: string; channelId: number }
  | { seeded: false; demoSiteExists: boolean };

// Several processes may start at once (workers, a CLI): one seeds, the others see the data.
const seedLockId = 7_302_114_002;

/**
 * Development only (never production, never tests): on an EMPTY database (no site at all)
 * creates the demo site, a member_admin with a generated password, an API token and a test
 * channel in USD, in one transaction. Any existing data means no seed.
 */
export async function seedDevelopmentData(context: AppContext): Promise<SeedOutcome | null> {
  if (context.config.env !== 'development') return null;
  return context.db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [seedLockId]);
    const existing = await tx.one<{ any_site: boolean; demo_site: boolean }>('SELECT EXISTS (SELECT 1 FROM sites) AS any_site, EXISTS (SELECT 1 FROM sites WHERE path = $1) AS demo_site', [demo.sitePath]);
    if (existing.any_site) return { seeded: false, demoSiteExists: existing.demo_site };
    const password = randomBytes(12).toString('base64url');
    const site = await createSite(tx, { path: demo.sitePath, name: demo.siteName });
    const user = await createUser(tx, { username: demo.username, password, email: demo.email, displayName: 'Demo Admin' });
    await setMembership(tx, { siteId: site.id, userId: user.id, role: 'member_admin', readOnly: false });
    const token = await insertApiToken(tx, { siteId: site.id, userId: user.id, name: 'demo (created at first start)', now: context.now() });
    const channel = await createChannel(tx, { siteId: site.id, name: demo.channelName, currency: demo.channelCurrency });
    return { seeded: true, sitePath: site.path, username: user.username, password, apiToken: token.token, channelId: channel.id };
  });
}

/**
 * The start-up banner: where the service runs and how to make a first call. `cliEnv`: the
 * settings a CLI command needs to reach the same database and print the same links (cliEnvOf).
 */
export function startupBanner(options: { baseUrl: string; env: string; outcome: SeedOutcome | null; dataLocation: string; cliEnv?: string }): string {
  const { baseUrl, outcome } = options;
  const rule = '─'.repeat(72);
  const lines = [rule, `  trustfare is running at ${baseUrl}  (${options.env})`, `  API reference: ${baseUrl}/docs    OpenAPI: ${baseUrl}/openapi.json`];
  if (outcome?.seeded) {
    lines.push(
      '',
      `  First start on an empty database: demo data created in ${options.dataLocation}`,
      `    site        ${outcome.sitePath} (${demo.siteName})`,
      `    user        ${outcome.username}   role member_admin`,
      `    password    ${outcome.password}   (shown once)`,
      `    API token   ${outcome.apiToken}   (shown once)`,
      `    channel     ${outcome.channelId} "${demo.channelName}" (${demo.channelCurrency}, test mode)`,
      '',
      '  Try it:',
      `    curl -H "Authorization: Bearer ${outcome.apiToken}" ${baseUrl}/${outcome.sitePath}/site-json/vendor/v2/channels`,
    );
  } else if (outcome) {
    // The CLI talks to the database its own environment names: given the server's, or it opens
    // (and seeds nothing in) another one and answers "no site".
    // `-s`: npm's own lines would precede the command's JSON on stdout.
    const cli = `${options.cliEnv ? `${options.cliEnv} ` : ''}npm run -s cli -- `;
    const site = outcome.demoSiteExists ? demo.sitePath : '<site>';
    const user = outcome.demoSiteExists ? demo.username : '<username>';
    lines.push(
      '',
      `  Using the existing data in ${options.dataLocation}. To get a token:`,
      `    curl -X POST -H "Content-Type: application/json" -d '{"username":"${user}","password":"<password>"}' ${baseUrl}/${site}/site-json/jwt-auth/v1/token`,
      `  or create an API token:  ${cli}token create --site ${site} --username ${user} --name laptop`,
      `  Forgot the password?     ${cli}user password --username ${user} --password-stdin`,
    );
  }
  lines.push(rule);
  return lines.join('\n');
}

/**
 * The environment, beyond the defaults, that the CLI needs to work on this server's data: the
 * database (DATABASE_URL, its password masked: a console is no place for it), DATA_DIR (the
 * development secrets live there, so a CLI with another one cannot read the vault or 2FA
 * secrets, even on the same database) and the origin links are made from.
 */
export function cliEnvOf(config: { databaseUrl?: string | undefined; dataDir: string; port: number; baseUrl: string }, defaults: { dataDir: string; port: number; baseUrl: string }): string {
  const parts: string[] = [];
  if (config.databaseUrl) parts.push(`DATABASE_URL='${maskedPassword(config.databaseUrl)}'`);
  if (config.dataDir !== defaults.dataDir) parts.push(`DATA_DIR=${config.dataDir}`);
  if (config.baseUrl !== defaults.baseUrl) parts.push(config.port !== defaults.port && config.baseUrl === `http://127.0.0.1:${config.port}` ? `PORT=${config.port}` : `BASE_URL=${config.baseUrl}`);
  return parts.join(' ');
}

function maskedPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '<password>';
    return parsed.toString().replace('%3Cpassword%3E', '<password>');
  } catch {
    return '<the server\'s DATABASE_URL>';
  }
}
