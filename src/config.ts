import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import os from 'node:os';
import { limits } from './limits.js';
import { parsedUrl } from './net.js';
import { sendableAddress } from './domain/emails/mime.js';
import { writeFileAtomically } from './files.js';

/** Every setting of the service, read once from the environment. */
export interface Config {
  env: 'development' | 'production' | 'test';
  host: string;
  port: number;
  dataDir: string;
  /** External PostgreSQL; when absent the embedded server under dataDir is used. */
  databaseUrl: string | undefined;
  /**
   * The database is the embedded cluster under dataDir: no DATABASE_URL, or a cluster worker given
   * its primary's embedded cluster (DATABASE_URL and embeddedDatabaseWorkerEnv, src/cluster.ts).
   * /readyz watches that cluster's disk (docs/scaling.md).
   */
  databaseEmbedded: boolean;
  smtpUrl: string | undefined;
  /** Sender address of transactional mail (MAIL_FROM); the display name is the company. */
  mailFrom: string;
  /** Public origin of the REST API and token endpoints (no trailing slash). */
  baseUrl: string;
  /** Public origin of the vaulting app (no trailing slash). */
  vaultAppUrl: string;
  workers: number;
  logLevel: string;
  /**
   * Reverse proxies whose X-Forwarded-For is believed (TRUST_PROXY): a hop count, or
   * comma-separated addresses/CIDRs. Off by default: without a proxy the header is forged at will.
   */
  trustProxy: false | number | string;
  /** Requests per minute per API token, JWT or client IP (RATE_LIMIT_PER_MINUTE). */
  rateLimitPerMinute: number;
  /** Requests per minute per client IP on the token endpoints (LOGIN_RATE_LIMIT_PER_MINUTE). */
  loginRateLimitPerMinute: number;
  /**
   * The payment processor (PROCESSOR): `sandbox`, the only one today. The sandbox moves no money,
   * so in production it takes no live-mode payments (docs/sandbox.md "Live channels").
   */
  processor: 'sandbox';
  /** Bound on one payment processor call (PROCESSOR_TIMEOUT_MS); the outcome is then unknown. */
  processorTimeoutMs: number;
  /** Delay the sandbox processor adds before every answer (SANDBOX_LATENCY_MS, default 0). */
  sandboxLatencyMs: number;
  /** How long the sandbox's no-answer card hangs before failing the call (SANDBOX_NO_ANSWER_MS). */
  sandboxNoAnswerMs: number;
  secrets: Secrets;
}

export interface Secrets {
  /** HMAC key for user, refresh and cardvaultuser JWTs (HS256). */
  jwtSecret: Uint8Array;
  /** Key-encrypting keys for card data keys, by key id; `activeKeyId` wraps new data keys. */
  cardKeys: Record<string, Buffer>;
  activeCardKeyId: string;
  /** HMAC key for card fingerprints (duplicate detection). */
  cardFingerprintKey: Buffer;
  /** Signs payment request links and keys transaction hashes of channels without a secret. */
  signingSecret: Buffer;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/**
 * Set to 1 by a cluster's primary, beside DATABASE_URL, in the environment of workers it gives the
 * embedded cluster it started: not a setting of its own.
 */
export const embeddedDatabaseWorkerEnv = 'TRUSTFARE_EMBEDDED_DATABASE';

const secretNames = ['JWT_SECRET', 'CARD_KEYS', 'CARD_FINGERPRINT_KEY', 'SIGNING_SECRET'] as const;

/** How long a stopping server lets its requests in flight finish: a processor call's whole timeout, and then some. */
export function shutdownGraceMsOf(config: Pick<Config, 'processorTimeoutMs'>): number {
  return config.processorTimeoutMs + limits.shutdownGraceMs;
}

export function loadConfig(env: Env = process.env): Config {
  const mode = modeSetting(env.NODE_ENV);
  const host = hostSetting(env.HOST);
  const port = portSetting(env.PORT);
  const dataDir = dataDirSetting(env.DATA_DIR);
  const defaultOrigin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const baseUrl = httpUrlSetting(env.BASE_URL ?? defaultOrigin, 'BASE_URL');
  const workersDefault = mode === 'production' ? os.availableParallelism() : 1;
  const databaseUrl = databaseUrlSetting(env.DATABASE_URL);
  const config: Config = {
    env: mode,
    host,
    port,
    dataDir,
    databaseUrl,
    databaseEmbedded: databaseUrl === undefined || env[embeddedDatabaseWorkerEnv] === '1',
    smtpUrl: smtpUrlSetting(env.SMTP_URL),
    mailFrom: mailFromSetting(env.MAIL_FROM, baseUrl),
    baseUrl,
    vaultAppUrl: httpUrlSetting(env.VAULT_APP_URL ?? baseUrl, 'VAULT_APP_URL'),
    workers: parseInteger(env.WORKERS ?? String(workersDefault), 'WORKERS', 1, 64),
    logLevel: logLevelSetting(env.LOG_LEVEL ?? (mode === 'test' ? 'silent' : 'info')),
    ...processorSettings(env),
    trustProxy: trustProxySetting(env.TRUST_PROXY),
    rateLimitPerMinute: parseInteger(env.RATE_LIMIT_PER_MINUTE ?? String(limits.rateLimitPerMinute), 'RATE_LIMIT_PER_MINUTE', 1, 10_000_000),
    loginRateLimitPerMinute: parseInteger(env.LOGIN_RATE_LIMIT_PER_MINUTE ?? String(limits.loginRateLimitPerMinute), 'LOGIN_RATE_LIMIT_PER_MINUTE', 1, 10_000_000),
    secrets: loadSecrets(env, mode, dataDir),
  };
  // Required as the secrets are: payment request links, receipts and 3-D Secure returns sent to
  // payers would name the listening address, and HSTS (sent for an https BASE_URL) would be off.
  if (mode === 'production' && !env.BASE_URL) {
    throw new ConfigError(`NODE_ENV=production requires BASE_URL, the public origin that links in mails and pages are built on (such as https://pay.example.com); without it they would point at ${defaultOrigin}`);
  }
  return config;
}

/**
 * What a production start says it runs with though it should not, and goes on (server.ts logs
 * them): a public origin in plain http, on which payment links, receipts and the hosted card pages
 * reach payers. TLS is usually the proxy's, so http is refused nowhere, but the origin given must be
 * the one payers see. A machine's own address (a benchmark, a smoke test) is no public origin.
 */
export function startWarnings(config: Config): string[] {
  if (config.env !== 'production') return [];
  const origins = [['BASE_URL', config.baseUrl], ['VAULT_APP_URL', config.vaultAppUrl]] as const;
  return origins
    .filter(([, origin]) => {
      const url = new URL(origin);
      return url.protocol === 'http:' && !isLoopbackHost(url.hostname);
    })
    .map(([name, origin]) => `${name} is ${origin}, plain http: payment links, receipts and the hosted card pages would reach payers without TLS; set the https origin the proxy answers on`);
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || (isIP(hostname) === 4 && hostname.startsWith('127.'));
}

/**
 * Production refuses to start without real secrets. Development and tests generate them once
 * into DATA_DIR/dev-secrets.json (with a warning) so restarts keep vaulted cards readable.
 */
function loadSecrets(env: Env, mode: Config['env'], dataDir: string): Secrets {
  const missing = secretNames.filter((name) => !env[name]);
  if (missing.length > 0 && mode === 'production') {
    throw new ConfigError(`NODE_ENV=production requires ${missing.join(', ')}; refusing to start with generated keys`);
  }
  const generated = missing.length > 0 ? developmentSecrets(dataDir, missing) : {};
  const value = (name: (typeof secretNames)[number]): string => env[name] ?? generated[name]!;
  const cardKeys = parseCardKeys(value('CARD_KEYS'));
  const secrets = {
    jwtSecret: decodeKey(value('JWT_SECRET'), 'JWT_SECRET'),
    cardKeys: cardKeys.keys,
    activeCardKeyId: cardKeys.activeKeyId,
    cardFingerprintKey: decodeKey(value('CARD_FINGERPRINT_KEY'), 'CARD_FINGERPRINT_KEY'),
    signingSecret: decodeKey(value('SIGNING_SECRET'), 'SIGNING_SECRET'),
  };
  // One key in two roles: whoever learns it for one (a leaked signing key) has the other too.
  const roles = [['JWT_SECRET', secrets.jwtSecret], ['CARD_FINGERPRINT_KEY', secrets.cardFingerprintKey], ['SIGNING_SECRET', secrets.signingSecret],
    ...Object.entries(cardKeys.keys).map(([id, key]) => [`CARD_KEYS key ${id}`, key] as const)] as const;
  for (const [index, [name, key]] of roles.entries()) {
    const same = roles.slice(0, index).find(([, other]) => Buffer.compare(Buffer.from(other), Buffer.from(key)) === 0);
    if (same) throw new ConfigError(`${name} and ${same[0]} are the same key; each needs its own (openssl rand -base64 32)`);
  }
  return secrets;
}

/** CARD_KEYS is `id:base64key[,id:base64key...]`; the first entry is the active key. */
export function parseCardKeys(text: string): { keys: Record<string, Buffer>; activeKeyId: string } {
  // No prototype: an id such as `constructor` or `__proto__` is an id like any other.
  const keys: Record<string, Buffer> = Object.create(null);
  let activeKeyId = '';
  for (const entry of text.split(',').map((part) => part.trim()).filter(Boolean)) {
    const parts = entry.split(':');
    const [id, encoded] = parts;
    if (parts.length !== 2 || !id || !encoded || !/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new ConfigError('CARD_KEYS must be id:base64key[,id:base64key]');
    // A repeated id would silently replace the key cards were wrapped with (the first is active).
    if (keys[id] !== undefined) throw new ConfigError(`CARD_KEYS names key ${id} twice`);
    const key = decodeKey(encoded, `CARD_KEYS key ${id}`);
    if (key.length !== 32) throw new ConfigError(`CARD_KEYS key ${id} must be 32 bytes (base64)`);
    keys[id] = key;
    activeKeyId ||= id;
  }
  if (!activeKeyId) throw new ConfigError('CARD_KEYS is empty');
  return { keys, activeKeyId };
}

/**
 * A key given as base64, strictly: Node's decoder skips what is not base64, so a passphrase would
 * quietly become a shorter, guessable key. At least 32 bytes, and not a placeholder: random
 * 32 bytes hold about 28 distinct values, so fewer than 16 is an all-zero or repeated pattern.
 */
function decodeKey(encoded: string, name: string): Buffer {
  const key = Buffer.from(encoded, 'base64');
  const canonical = (text: string) => text.replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || canonical(key.toString('base64')) !== canonical(encoded)) {
    throw new ConfigError(`${name} must be base64 (as openssl rand -base64 32 prints it)`);
  }
  if (key.length < 32) throw new ConfigError(`${name} must be at least 32 bytes, base64-encoded`);
  if (new Set(key).size < 16) throw new ConfigError(`${name} is not a random key (too few distinct bytes); generate one with openssl rand -base64 32`);
  return key;
}

export function developmentSecretsPath(dataDir: string): string {
  return path.join(dataDir, 'dev-secrets.json');
}

function developmentSecrets(dataDir: string, needed: readonly string[]): Record<string, string> {
  const file = developmentSecretsPath(dataDir);
  if (existsSync(file)) return storedDevelopmentSecrets(file, needed);
  // As the embedded start makes it: others may pass through to the cluster, not list or write.
  mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  const key = () => randomBytes(32).toString('base64');
  const secrets = {
    JWT_SECRET: key(),
    CARD_KEYS: `dev1:${key()}`,
    CARD_FINGERPRINT_KEY: key(),
    SIGNING_SECRET: key(),
  };
  // Whole or not at all: a first start cut short (a crash, a full disk) left an empty or half
  // file behind, and every later start failed on it. Made only if absent: of two processes
  // starting at once (a server and a CLI command), both use the keys of the first to write them.
  if (!writeFileAtomically(file, JSON.stringify(secrets, null, 2), { mode: 0o600, ifAbsent: true })) return storedDevelopmentSecrets(file, needed);
  process.emitWarning(`Generated development secrets in ${file}. Never use them in production.`, 'TrustfareWarning');
  return secrets;
}

/**
 * The secrets a former start generated, or a one-line refusal naming the file. One written before
 * the writes were atomic can be empty or cut short; its keys are then lost anyway, so the way out
 * is a new file, at the price stated.
 */
function storedDevelopmentSecrets(file: string, needed: readonly string[]): Record<string, string> {
  const remedy = `delete it to generate new development keys (cards vaulted, two-factor secrets enrolled and links signed under the old keys can no longer be read)`;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): give this account access to it, or ${remedy}`);
  }
  let stored: unknown;
  try {
    stored = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file} is not valid JSON, as a first start cut short leaves it (${(error as Error).message}): ${remedy}`);
  }
  const secrets = (typeof stored === 'object' && stored !== null ? stored : {}) as Record<string, unknown>;
  const absent = needed.filter((name) => typeof secrets[name] !== 'string' || secrets[name] === '');
  if (absent.length > 0) throw new ConfigError(`${file} holds no ${absent.join(', ')}: ${remedy}, or set ${absent.length > 1 ? 'them' : 'it'} in the environment`);
  return secrets as Record<string, string>;
}

/** Where DATA_DIR (`value`, empty or unset: ./data) is. */
export function dataDirPath(value: string | undefined): string {
  return path.resolve(value || './data');
}

/**
 * DATA_DIR: empty is unset, as for the other settings (resolved, '' was the working directory, a
 * checkout). It holds the development secrets, the embedded database's password and its cluster,
 * each read when present: in a directory any account may write in (/tmp), another could put its
 * own there first, and the embedded start made such a directory 0711, taking the sticky,
 * world-writable mode from everyone else's /tmp. So it is refused.
 */
function dataDirSetting(value: string | undefined): string {
  const dataDir = dataDirPath(value);
  let mode: number;
  try {
    mode = statSync(dataDir).mode;
  } catch {
    // Not there yet (it is made 0711 when needed), or not readable: the start says so when it uses it.
    return dataDir;
  }
  if ((mode & 0o002) !== 0) {
    throw new ConfigError(`DATA_DIR ${dataDir} is writable by every account (as /tmp is), so another could put its own keys or database password there first: give trustfare a directory of its own, such as ${path.join(dataDir, 'trustfare')}`);
  }
  return dataDir;
}

/**
 * DATABASE_URL: empty is unset (the embedded database). One that is no URL is refused in one line,
 * without echoing it (it holds a password); the driver's own parse printed a TypeError stack.
 */
function databaseUrlSetting(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('DATABASE_URL must be a URL such as postgres://user:password@host:5432/database (this one does not parse: check its port and percent-encode special characters in the password)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new ConfigError(`DATABASE_URL must start with postgres:// or postgresql:// (got ${url.protocol}//)`);
  return value;
}

/**
 * HOST is the address to listen on: an IP address or a host name. Empty is unset, as it is for
 * NODE_ENV, DATABASE_URL, SMTP_URL or TRUST_PROXY (a bare `HOST=` line in a .env or unit file
 * means "not set"); anything else it cannot be is refused here, not by the listen after the
 * database started (where an empty HOST also made a BASE_URL that was never set look wrong).
 */
function hostSetting(value: string | undefined): string {
  const host = value?.trim() || '127.0.0.1';
  const label = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
  if (isIP(host) === 0 && !new RegExp(`^${label}(\\.${label})*\\.?$`).test(host)) {
    throw new ConfigError(`HOST must be an IP address or host name of this machine, such as 127.0.0.1, 0.0.0.0 or :: (got ${JSON.stringify(value)})`);
  }
  return host;
}

/**
 * PORT: empty is unset (3000). 0 is refused: the system would pick a port at random while
 * BASE_URL, the banner and every link built on it named port 0.
 */
function portSetting(value: string | undefined): number {
  const text = value?.trim() || '3000';
  if (Number(text) === 0) throw new ConfigError('PORT must be an integer from 1 to 65535 (0, a port picked at random, would leave BASE_URL and its links on port 0)');
  return parseInteger(text, 'PORT', 1, 65535);
}

function processorSettings(env: Env): Pick<Config, 'processor' | 'processorTimeoutMs' | 'sandboxLatencyMs' | 'sandboxNoAnswerMs'> {
  const processorTimeoutMs = parseInteger(env.PROCESSOR_TIMEOUT_MS ?? String(limits.processorTimeoutMs), 'PROCESSOR_TIMEOUT_MS', 1, limits.processorTimeoutMsMax);
  // A name this build has no connector for (a real acquirer's, set ahead of its release) stops the
  // start: running on the sandbox instead would answer payments nobody processes.
  const processor = env.PROCESSOR?.trim() || 'sandbox';
  if (processor !== 'sandbox') throw new ConfigError(`PROCESSOR must be sandbox, the only payment processor of this build (got ${JSON.stringify(processor)})`);
  return {
    processor,
    processorTimeoutMs,
    sandboxLatencyMs: parseInteger(env.SANDBOX_LATENCY_MS ?? '0', 'SANDBOX_LATENCY_MS', 0, limits.sandboxLatencyMsMax),
    // By default the no-answer card outlasts the caller's timeout, so the caller sees a timeout.
    sandboxNoAnswerMs: parseInteger(env.SANDBOX_NO_ANSWER_MS ?? String(processorTimeoutMs + 1000), 'SANDBOX_NO_ANSWER_MS', 0, limits.sandboxLatencyMsMax + limits.processorTimeoutMsMax),
  };
}

/**
 * MAIL_FROM is a bare address that mail headers can carry as it is (sendableAddress); by
 * default no-reply@ the host of BASE_URL, or @localhost when that host is an IPv6 address.
 */
function mailFromSetting(value: string | undefined, baseUrl: string): string {
  const fallback = `no-reply@${new URL(baseUrl).hostname}`;
  const address = value?.trim() || (sendableAddress(fallback) === fallback ? fallback : 'no-reply@localhost');
  if (sendableAddress(address) !== address) throw new ConfigError('MAIL_FROM must be a bare email address such as payments@example.com (ASCII letters, digits and . _ + - and the like; a domain in its ASCII form)');
  return address;
}

/**
 * Behind a reverse proxy every request comes from the proxy's address, so per-address limits
 * (logins, unauthenticated calls) would be shared by all clients. TRUST_PROXY names the proxies
 * (`10.0.0.1,10.1.0.0/16`) or the number of proxy hops (`1`); `true` (trust anyone) is refused.
 */
function trustProxySetting(value: string | undefined): Config['trustProxy'] {
  const text = value?.trim() ?? '';
  if (text === '') return false;
  if (/^[0-9]+$/.test(text)) return parseInteger(text, 'TRUST_PROXY', 1, 10);
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.some((entry) => !trustedProxyEntry(entry))) {
    throw new ConfigError('TRUST_PROXY must be a hop count (1-10) or comma-separated proxy addresses or CIDRs, such as 10.0.0.1,10.1.0.0/16');
  }
  return entries.join(',');
}

/**
 * One TRUST_PROXY entry as @fastify/proxy-addr compiles it: a named range, or an IPv4/IPv6 address
 * with an optional prefix length from 1 to 32 / 128 (0 would trust every address). What it
 * cannot compile threw a TypeError stack at start, after the database had started.
 */
function trustedProxyEntry(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const match = /^([0-9A-Fa-f.:]+)(?:\/([0-9]{1,3}))?$/.exec(entry);
  const version = match ? isIP(match[1]!) : 0;
  if (version === 0) return false;
  const prefix = match![2];
  return prefix === undefined || (Number(prefix) >= 1 && Number(prefix) <= (version === 4 ? 32 : 128));
}

function parseInteger(text: string, name: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** An absolute http(s) URL without a trailing slash: links in mails and pages are built on it. */
function httpUrlSetting(value: string, name: string): string {
  const url = parsedUrl(value);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new ConfigError(`${name} must be an absolute http(s) URL such as https://pay.example.com (got ${JSON.stringify(value)})`);
  }
  return trimSlash(value);
}

/**
 * NODE_ENV names one of the three modes or is unset (development). Anything else is refused: a
 * typo such as `prod` ran as development, with generated keys, demo data and no refusal.
 */
function modeSetting(value: string | undefined): Config['env'] {
  if (value === undefined || value === '') return 'development';
  if (value === 'production' || value === 'development' || value === 'test') return value;
  throw new ConfigError(`NODE_ENV must be production, development or test (got ${JSON.stringify(value)})`);
}

/**
 * SMTP_URL is checked at start, not at the first mail: smtp:// or smtps:// with a host. Its
 * password is never echoed in the message.
 */
function smtpUrlSetting(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const url = parsedUrl(value);
  if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '') {
    throw new ConfigError('SMTP_URL must be smtp://[user:password@]host[:port] or smtps://... (such as smtp://mailer:secret@mail.example.com:587)');
  }
  return value;
}

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevelSetting(value: string): string {
  if (!logLevels.includes(value)) throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(', ')}`);
  return value;
}
