import type { Config } from './config.js';
import type { Db } from './storage/db.js';

/**
 * Everything routes, jobs and CLI commands need, built once per process and passed down
 * (one-way data flow: nothing reaches back up for globals). Add a service here, construct it in
 * createAppContext, and every entry point (server, CLI, tests) gets it.
 */
export interface AppContext {
  config: Config;
  db: Db;
  /** The clock; tests pass a fixed or moving one. */
  now: () => Date;
}

export interface ContextOverrides {
  now?: () => Date;
}

export function createAppContext(config: Config, db: Db, overrides: ContextOverrides = {}): AppContext {
  const now = overrides.now ?? (() => new Date());
  return { config, db, now };
}
