import type { Config } from '../config.js';
import { limits } from '../limits.js';
import { embeddedMaxConnections } from './connections.js';
import { createDb, type Db } from './db.js';
import { startEmbeddedPostgres } from './embedded.js';
import { migrate } from './migrate.js';

export interface OpenDatabase {
  db: Db;
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * Connects to DATABASE_URL, or starts the embedded PostgreSQL under DATA_DIR, then applies the
 * migrations. The same SQL runs on both.
 */
export async function openDatabase(config: Config, options: { migrate?: boolean; poolSize?: number; statementTimeoutMs?: number } = {}): Promise<OpenDatabase> {
  // Sized for the configured WORKERS by whichever process starts it (the server, a CLI command).
  const embedded = config.databaseUrl ? null : await startEmbeddedPostgres(config.dataDir, { maxConnections: embeddedMaxConnections(config.workers) });
  const db = createDb(config.databaseUrl ?? embedded!.url, options.poolSize ?? limits.dbPoolSize, options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs });
  try {
    if (options.migrate !== false) await migrate(db);
  } catch (error) {
    await db.close();
    await embedded?.stop();
    throw error;
  }
  return {
    db,
    embedded: embedded !== null,
    async close() {
      await db.close();
      await embedded?.stop();
    },
  };
}
