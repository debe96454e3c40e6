// The start-up banner's CLI hints carry the settings the CLI needs to reach the server's data: run
// without them, the CLI opened (or created) another database and answered "no site".
import { describe, expect, it } from 'vitest';
import { cliEnvOf, startupBanner } from '../../src/storage/seed.js';

const defaults = { dataDir: '/srv/app/data', port: 3000, baseUrl: 'http://127.0.0.1:3000' };
const existing = { seeded: false as const, demoSiteExists: true };

function hints(cliEnv: string): string[] {
  return startupBanner({ baseUrl: 'http://127.0.0.1:3777', env: 'development', outcome: existing, dataLocation: 'x', cliEnv })
    .split('\n').filter((line) => line.includes('npm run cli'));
}

describe('the banner of a server on existing data', () => {
  it("names the server's DATABASE_URL without printing it, or its DATA_DIR, and its port", () => {
    const external = cliEnvOf({ databaseUrl: 'postgres://app:s3cret@db:5432/pay', dataDir: defaults.dataDir, port: 3777, baseUrl: 'http://127.0.0.1:3777' }, defaults);
    expect(external).toBe('DATABASE_URL="$DATABASE_URL" PORT=3777');
    expect(hints(external)).toEqual([
      '  or create an API token:  DATABASE_URL="$DATABASE_URL" PORT=3777 npm run cli -- token create --site demo --username demo --name laptop',
      '  Forgot the password?     DATABASE_URL="$DATABASE_URL" PORT=3777 npm run cli -- user password --username demo --password-stdin',
    ]);
    expect(cliEnvOf({ dataDir: '/tmp/other', port: 3000, baseUrl: 'http://127.0.0.1:3000' }, defaults)).toBe('DATA_DIR=/tmp/other');
    expect(cliEnvOf({ dataDir: defaults.dataDir, port: 3000, baseUrl: 'https://pay.example.com' }, defaults)).toBe('BASE_URL=https://pay.example.com');
  });

  it('adds nothing for a server on the defaults', () => {
    expect(cliEnvOf({ dataDir: defaults.dataDir, port: 3000, baseUrl: defaults.baseUrl }, defaults)).toBe('');
    expect(hints('')[0]).toContain('  or create an API token:  npm run cli -- token create');
  });
});
