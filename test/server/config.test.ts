// Settings as configuration gives them: a key that is not really base64, a placeholder, one key in
// two roles or a CARD_KEYS id named twice, a port, address or proxy list the server could not use,
// or a development secrets file cut short stops the start with a one-line reason, in every mode.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, developmentSecretsPath, loadConfig, startWarnings } from '../../src/config.js';
import { testEnv } from '../support/context.js';

const key = () => randomBytes(32).toString('base64');
const refusal = (env: Record<string, string>) => {
  try {
    loadConfig({ ...testEnv, NODE_ENV: 'production', ...env });
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
};

describe('secrets', () => {
  it('takes four distinct random base64 keys', () => {
    expect(refusal({})).toBeNull();
  });

  it('refuses a passphrase that Node would quietly decode as shorter base64', () => {
    expect(refusal({ JWT_SECRET: 'correct horse battery staple correct horse battery staple!!' })).toBe('JWT_SECRET must be base64 (as openssl rand -base64 32 prints it)');
  });

  it('refuses a placeholder key, all zeros or a repeated pattern', () => {
    expect(refusal({ SIGNING_SECRET: Buffer.alloc(32).toString('base64') })).toMatch(/^SIGNING_SECRET is not a random key/);
    expect(refusal({ CARD_FINGERPRINT_KEY: Buffer.from('abcd'.repeat(8)).toString('base64') })).toMatch(/^CARD_FINGERPRINT_KEY is not a random key/);
  });

  it('refuses one key in two roles', () => {
    const shared = key();
    expect(refusal({ JWT_SECRET: shared, SIGNING_SECRET: shared })).toBe('SIGNING_SECRET and JWT_SECRET are the same key; each needs its own (openssl rand -base64 32)');
    expect(refusal({ CARD_KEYS: `k1:${shared}`, CARD_FINGERPRINT_KEY: shared })).toMatch(/^CARD_KEYS key k1 and CARD_FINGERPRINT_KEY are the same key/);
  });

  it('refuses a CARD_KEYS id named twice, and an entry with more than id and key', () => {
    expect(refusal({ CARD_KEYS: `dup:${key()},dup:${key()}` })).toBe('CARD_KEYS names key dup twice');
    expect(refusal({ CARD_KEYS: `k1:${key()}:junk` })).toBe('CARD_KEYS must be id:base64key[,id:base64key]');
  });
});

/** The one-line refusal of these settings over testEnv's, or null when they are taken. */
const refused = (env: Record<string, string | undefined>) => {
  try {
    loadConfig({ ...testEnv, ...env });
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
};

describe('settings', () => {
  it('refuses a base URL that is not an absolute http(s) URL, and an unknown log level, in one line', () => {
    expect(refused({ BASE_URL: 'not a url' })).toBe('BASE_URL must be an absolute http(s) URL such as https://pay.example.com (got "not a url")');
    expect(refused({ BASE_URL: 'ftp://x/' })).toMatch(/^BASE_URL must be/);
    expect(refused({ VAULT_APP_URL: 'junk' })).toMatch(/^VAULT_APP_URL must be/);
    expect(refused({ LOG_LEVEL: 'verbose' })).toBe('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent');
    expect(loadConfig({ ...testEnv, BASE_URL: 'https://pay.example.com/' }).baseUrl).toBe('https://pay.example.com');
  });

  it('refuses a NODE_ENV it does not know (a typo ran as development, with generated keys and demo data)', () => {
    expect(refused({ NODE_ENV: 'prod' })).toBe('NODE_ENV must be production, development or test (got "prod")');
    expect(loadConfig({ ...testEnv, NODE_ENV: '' }).env).toBe('development');
  });

  it('names the payment processor with PROCESSOR: sandbox, the only one, by default', () => {
    expect(loadConfig({ ...testEnv }).processor).toBe('sandbox');
    expect(loadConfig({ ...testEnv, PROCESSOR: 'sandbox' }).processor).toBe('sandbox');
    // A name this build has no connector for never falls back to the sandbox.
    expect(refused({ PROCESSOR: 'stripe' })).toBe('PROCESSOR must be sandbox, the only payment processor of this build (got "stripe")');
  });

  it('checks SMTP_URL at start, without echoing its password', () => {
    const message = refused({ SMTP_URL: 'mailer:hunter2@mail.example.com' });
    expect(message).toMatch(/^SMTP_URL must be smtp:\/\//);
    expect(message).not.toContain('hunter2');
    expect(refused({ SMTP_URL: 'http://mail.example.com' })).toMatch(/^SMTP_URL must be/);
    expect(loadConfig({ ...testEnv, SMTP_URL: 'smtps://u:p@mail.example.com:465' }).smtpUrl).toBe('smtps://u:p@mail.example.com:465');
  });
});

describe('BASE_URL in production', () => {
  const withoutBaseUrl = (env: Record<string, string>) => ({ ...testEnv, BASE_URL: undefined, ...env });

  it('refuses to start without it: every link in mails and pages would name the listening address', () => {
    expect(() => loadConfig(withoutBaseUrl({ NODE_ENV: 'production', HOST: '0.0.0.0' }))).toThrow(ConfigError);
    expect(() => loadConfig(withoutBaseUrl({ NODE_ENV: 'production' }))).toThrow(
      'NODE_ENV=production requires BASE_URL, the public origin that links in mails and pages are built on (such as https://pay.example.com); without it they would point at http://127.0.0.1:3000',
    );
    expect(loadConfig({ ...testEnv, NODE_ENV: 'production', BASE_URL: 'https://pay.example.com' }).baseUrl).toBe('https://pay.example.com');
  });

  it('warns at start when a public origin is plain http: card pages and payment links would go to payers without TLS', () => {
    const production = (env: Record<string, string>) => startWarnings(loadConfig({ ...testEnv, NODE_ENV: 'production', ...env }));
    expect(production({ BASE_URL: 'http://pay.example.com' })).toEqual([
      'BASE_URL is http://pay.example.com, plain http: payment links, receipts and the hosted card pages would reach payers without TLS; set the https origin the proxy answers on',
      'VAULT_APP_URL is http://pay.example.com, plain http: payment links, receipts and the hosted card pages would reach payers without TLS; set the https origin the proxy answers on',
    ]);
    expect(production({ BASE_URL: 'https://pay.example.com', VAULT_APP_URL: 'http://vault.example.com' })).toHaveLength(1);
    expect(production({ BASE_URL: 'https://pay.example.com' })).toEqual([]);
    // A machine's own address is no public origin: a benchmark or smoke test of a production build.
    expect(production({ BASE_URL: 'http://127.0.0.1:3000' })).toEqual([]);
    expect(production({ BASE_URL: 'http://localhost:3000' })).toEqual([]);
    expect(startWarnings(loadConfig({ ...testEnv, NODE_ENV: 'development', BASE_URL: 'http://pay.example.com' }))).toEqual([]);
  });

  it('is still optional in development and tests, where the listening address is the public one', () => {
    expect(loadConfig(withoutBaseUrl({ NODE_ENV: 'development' })).baseUrl).toBe('http://127.0.0.1:3000');
    expect(loadConfig(withoutBaseUrl({ NODE_ENV: 'test', PORT: '3777' })).baseUrl).toBe('http://127.0.0.1:3777');
  });
});

describe('where it listens', () => {
  // Without BASE_URL, which testEnv sets: the links are then built from HOST and PORT.
  const env = { ...testEnv, BASE_URL: undefined };

  it('takes an empty PORT or HOST (a bare PORT= line in a .env or unit file) as unset, as it does other empty settings', () => {
    const config = loadConfig({ ...env, PORT: '', HOST: '' });
    expect([config.host, config.port, config.baseUrl]).toEqual(['127.0.0.1', 3000, 'http://127.0.0.1:3000']);
    expect(loadConfig({ ...env, HOST: '::', PORT: '3777' }).baseUrl).toBe('http://[::]:3777');
  });

  it('refuses PORT=0, whose random port the banner and every link would name as :0', () => {
    expect(refused({ PORT: '0' })).toBe('PORT must be an integer from 1 to 65535 (0, a port picked at random, would leave BASE_URL and its links on port 0)');
    expect(refused({ PORT: '65536' })).toBe('PORT must be an integer from 1 to 65535');
  });

  it('refuses a HOST that is neither an address nor a host name, in one line', () => {
    expect(refused({ HOST: '[::1]' })).toBe('HOST must be an IP address or host name of this machine, such as 127.0.0.1, 0.0.0.0 or :: (got "[::1]")');
    expect(refused({ HOST: 'my host' })).toMatch(/^HOST must be an IP address or host name/);
  });
});

describe('TRUST_PROXY', () => {
  const message = 'TRUST_PROXY must be a hop count (1-10) or comma-separated proxy addresses or CIDRs, such as 10.0.0.1,10.1.0.0/16';

  it('refuses what is not an address or CIDR with its one line, before the app compiles it (which threw a TypeError stack)', () => {
    for (const value of ['fe', ':::', '10.0.0.0/99', '::/129', '10.0.0.0/0', '10.0.0.1,', '1::2::3']) {
      expect(() => loadConfig({ ...testEnv, TRUST_PROXY: value }), value).toThrow(new ConfigError(message));
    }
  });

  it('takes addresses, CIDRs and named ranges, each of which the app compiles', () => {
    const value = '10.0.0.1, 10.1.0.0/16,::1,fe80::/10,::ffff:10.0.0.1,loopback';
    const config = loadConfig({ ...testEnv, TRUST_PROXY: value });
    expect(config.trustProxy).toBe('10.0.0.1,10.1.0.0/16,::1,fe80::/10,::ffff:10.0.0.1,loopback');
    expect(() => Fastify({ trustProxy: config.trustProxy as string })).not.toThrow();
  });
});

describe('development secrets file', () => {
  const { JWT_SECRET: _j, CARD_KEYS: _c, CARD_FINGERPRINT_KEY: _f, SIGNING_SECRET: _s, ...withoutSecrets } = testEnv;
  const development = (dataDir: string) => ({ ...withoutSecrets, NODE_ENV: 'development', DATA_DIR: dataDir });
  const dataDir = () => mkdtempSync(path.join(os.tmpdir(), 'trustfare-dev-secrets-'));
  const directories: string[] = [];
  afterAll(() => directories.forEach((directory) => rmSync(directory, { recursive: true, force: true })));
  const withFile = (text: string) => {
    const directory = dataDir();
    directories.push(directory);
    writeFileSync(developmentSecretsPath(directory), text);
    return directory;
  };

  it('is written once, whole (no temporary file left), readable by this account only, and read back by the next start', () => {
    const directory = dataDir();
    directories.push(directory);
    const first = loadConfig(development(directory));
    expect(readdirSync(directory)).toEqual(['dev-secrets.json']);
    expect(statSync(developmentSecretsPath(directory)).mode & 0o777).toBe(0o600);
    expect(loadConfig(development(directory)).secrets).toEqual(first.secrets);
  });

  it('an empty or cut-short file stops the start with one line naming it and the way out, at its price', () => {
    for (const text of ['', '{\n  "JWT_SECRET": "abc']) {
      const directory = withFile(text);
      const file = developmentSecretsPath(directory);
      expect(() => loadConfig(development(directory))).toThrow(ConfigError);
      expect(() => loadConfig(development(directory))).toThrow(new RegExp(`^${file.replace(/[.]/g, '\\.')} is not valid JSON, as a first start cut short leaves it \\(.+\\): delete it to generate new development keys \\(cards vaulted, two-factor secrets enrolled and links signed under the old keys can no longer be read\\)$`));
    }
  });

  it('a file without the keys the environment does not give names those keys', () => {
    const directory = withFile(JSON.stringify({ JWT_SECRET: randomBytes(32).toString('base64') }));
    const file = developmentSecretsPath(directory);
    expect(() => loadConfig(development(directory))).toThrow(new ConfigError(`${file} holds no CARD_KEYS, CARD_FINGERPRINT_KEY, SIGNING_SECRET: delete it to generate new development keys (cards vaulted, two-factor secrets enrolled and links signed under the old keys can no longer be read), or set them in the environment`));
    expect(() => loadConfig(development(withFile('[]')))).toThrow(/holds no JWT_SECRET, CARD_KEYS, CARD_FINGERPRINT_KEY, SIGNING_SECRET/);
  });

  it('is not taken from a DATA_DIR that any account may write in (as /tmp): the start is refused', () => {
    // Another account put its own keys there first; they would sign this server's tokens and links.
    const directory = withFile(JSON.stringify({ JWT_SECRET: key(), CARD_KEYS: `x:${key()}`, CARD_FINGERPRINT_KEY: key(), SIGNING_SECRET: key() }));
    chmodSync(directory, 0o1777);
    expect(() => loadConfig(development(directory))).toThrow(new ConfigError(`DATA_DIR ${directory} is writable by every account (as /tmp is), so another could put its own keys or database password there first: give trustfare a directory of its own, such as ${path.join(directory, 'trustfare')}`));
    // Nor in production, where it holds the embedded database and its password.
    expect(refusal({ DATA_DIR: directory })).toMatch(/^DATA_DIR .* is writable by every account/);
  });

  it('one it cannot read stops the start naming it and why', () => {
    const directory = dataDir();
    directories.push(directory);
    mkdirSync(developmentSecretsPath(directory));
    expect(() => loadConfig(development(directory))).toThrow(new ConfigError(`${developmentSecretsPath(directory)} cannot be read (EISDIR): give this account access to it, or delete it to generate new development keys (cards vaulted, two-factor secrets enrolled and links signed under the old keys can no longer be read)`));
  });
});
