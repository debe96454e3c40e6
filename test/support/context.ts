import { randomBytes } from 'node:crypto';
import type { DestinationStream } from 'pino';
import { inject } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { createAppContext, type AppContext, type ContextOverrides } from '../../src/context.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createDb, type Db } from '../../src/storage/db.js';
import { withDatabase } from './global-setup.js';

export interface TestContext {
  app: App;
  db: Db;
  context: AppContext;
  config: Config;
  /** Drops nothing (global teardown does); closes the app and the pool. */
  close(): Promise<void>;
}

const key = () => randomBytes(32).toString('base64');

/** Fixed-for-the-process test secrets: no files written, production checks not involved. */
export const testEnv: Record<string, string> = {
  NODE_ENV: 'test',
  JWT_SECRET: key(),
  CARD_KEYS: `test1:${key()},test0:${key()}`,
  CARD_FINGERPRINT_KEY: key(),
  SIGNING_SECRET: key(),
  BASE_URL: 'http://trustfare.test',
  DATA_DIR: '/tmp/trustfare-test-data',
  // The suite sends thousands of requests from one address; rate-limit tests set their own.
  RATE_LIMIT_PER_MINUTE: '10000000',
  LOGIN_RATE_LIMIT_PER_MINUTE: '10000000',
};

/** A fresh database cloned from the migrated template, and a pool of `poolSize` connections to it. */
export async function createTestDatabase(poolSize = 5): Promise<{ db: Db; url: string; name: string }> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = inject('testDatabasePrefix') + randomBytes(5).toString('hex');
  const admin = createDb(adminUrl, 1);
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
  } finally {
    await admin.close();
  }
  const url = withDatabase(adminUrl, name);
  return { db: createDb(url, poolSize), url, name };
}

export interface TestContextOptions extends ContextOverrides {
  /** Settings over `testEnv`. */
  env?: Record<string, string>;
  /** Connections in the app's pool (5 unless a test sends concurrent requests). */
  poolSize?: number;
  /** Where the app logs; without one it does not log. */
  logStream?: DestinationStream;
}

/** A fresh database and an app built on it. */
export async function createTestContext(overrides: TestContextOptions = {}): Promise<TestContext> {
  const { db, url } = await createTestDatabase(overrides.poolSize);
  const config = loadConfig({ ...testEnv, DATABASE_URL: url, ...overrides.env });
  const context: AppContext = createAppContext(config, db, overrides);
  const app = await buildApp({ context, ...(overrides.logStream ? { logStream: overrides.logStream } : { logger: false }) });
  await app.ready();
  return {
    app,
    db,
    context,
    config,
    async close() {
      await app.close();
      await context.close();
      await db.close();
    },
  };
}
