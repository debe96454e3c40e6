import type { Config } from '../config.js';
import { limits } from '../limits.js';
import { embeddedMaxConnections } from './connections.js';
import { createDb, type Db } from './db.js';
import { clusterDiskHasRoom, startEmbeddedPostgres } from './embedded.js';
import { migrate } from './migrate.js';

export interface OpenDatabase {
  db: Db;
  embedded: boolean;
  /**
   * The embedded PostgreSQL only: every limits.embeddedWatchIntervalMs, starts it again if it was
   * killed, telling `report` (a start that failed is tried again at the next tick). Until close().
   */
  watchEmbedded(report: (outcome: { restarted: true } | { restarted: false; error: unknown }) => void): void;
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
  let watcher: NodeJS.Timeout | undefined;
  let check: Promise<void> = Promise.resolve();
  return {
    db,
    embedded: embedded !== null,
    watchEmbedded(report) {
      if (!embedded) return;
      watcher = setInterval(() => {
        // One check at a time: a start (crash recovery) may take longer than the interval.
        check = check.then(() => embedded.restartIfStopped()).then(
          (restarted) => (restarted ? report({ restarted }) : undefined),
          (error: unknown) => report({ restarted: false, error }),
        );
      }, limits.embeddedWatchIntervalMs);
      watcher.unref();
    },
    async close() {
      clearInterval(watcher);
      await check;
      await db.close();
      await embedded?.stop();
    },
  };
}

/**
 * Logs what the watch of the embedded PostgreSQL did (OpenDatabase.watchEmbedded): each restart,
 * and the first failed start of a run of them (one line, not one every interval).
 */
export function logEmbeddedRestarts(database: OpenDatabase, log: { error(details: object, message: string): void }): void {
  let failing = false;
  database.watchEmbedded((outcome) => {
    if (outcome.restarted) {
      failing = false;
      log.error({}, 'the embedded PostgreSQL stopped without being asked (killed, or out of memory); started it again: requests and jobs go on, and reconciliation settles the payments it cut off');
    } else if (!failing) {
      failing = true;
      log.error({ err: outcome.error }, 'the embedded PostgreSQL stopped without being asked (killed, or out of memory) and cannot be started again; trying every few seconds (see DATA_DIR/pg)');
    }
  });
}

/**
 * Whether the database's disk has room to write: the embedded cluster's, looked at on this host.
 * An external database's disk is on its own host, out of sight here (its operator watches it; a
 * full one shows as 500s logged with SQLSTATE 53100): true.
 */
export function databaseDiskHasRoom(config: Pick<Config, 'databaseEmbedded' | 'dataDir'>): Promise<boolean> {
  return config.databaseEmbedded ? clusterDiskHasRoom(config.dataDir) : Promise.resolve(true);
}
