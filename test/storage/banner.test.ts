// The start-up banner's CLI hints carry the settings the CLI needs to reach the server's data: run
// without them, the CLI opened (or created) another database and answered "no site".
import { describe, expect, it } from 'vitest';
import { cliEnvOf, startupBanner } from '../../src/storage/seed.js';

const defaults = { dataDir: '/srv/app/data', port: 3000, baseUrl: 'http://127.0.0.1:3000' };
const existing = { seeded: false as const, demoSiteExists: true };

function hints(cliEnv: string): string[] {
  return startupBanner({ baseUrl: 'http://127.0.0.1:3777', env: 'development', outcome: existing, dataLocation: 'x', cliEnv })
    .split('\n').filter((line) => line.includes('npm run -s cli'));
}

describe('the banner of a server on existing data', () => {
  it("gives the server's DATABASE_URL with its password masked, its DATA_DIR (the development secrets) and its port", () => {
    const external = cliEnvOf({ databaseUrl: 'postgres://app:s3cret@db:5432/pay', dataDir: '/tmp/other', port: 3777, baseUrl: 'http://127.0.0.1:3777' }, defaults);
    expect(external).toBe("DATABASE_URL='postgres://app:<password>@db:5432/pay' DATA_DIR=/tmp/other PORT=3777");
    expect(hints(external)).toEqual([
      `  or create an API token:  ${external} npm run -s cli -- token create --site demo --username demo --name laptop`,
      `  Forgot the password?     ${external} npm run -s cli -- user password --username demo --password-stdin`,
    ]);
    // Without a password (trust or peer authentication) the line is ready to paste.
    expect(cliEnvOf({ databaseUrl: 'postgres://postgres@127.0.0.1:5432/test', dataDir: defaults.dataDir, port: 3000, baseUrl: defaults.baseUrl }, defaults)).toBe("DATABASE_URL='postgres://postgres@127.0.0.1:5432/test'");
    expect(cliEnvOf({ dataDir: '/tmp/other', port: 3000, baseUrl: 'http://127.0.0.1:3000' }, defaults)).toBe('DATA_DIR=/tmp/other');
    expect(cliEnvOf({ dataDir: defaults.dataDir, port: 3000, baseUrl: 'https://pay.example.com' }, defaults)).toBe('BASE_URL=https://pay.example.com');
  });

  it('adds nothing for a server on the defaults', () => {
    expect(cliEnvOf({ dataDir: defaults.dataDir, port: 3000, baseUrl: defaults.baseUrl }, defaults)).toBe('');
    expect(hints('')[0]).toContain('  or create an API token:  npm run -s cli -- token create');
  });
});
