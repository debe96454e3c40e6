import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { limits } from './limits.js';
import { createAppContext } from './context.js';
import { openDatabase } from './storage/database.js';
import { isClusterWorker, runClusterPrimary, runsAsClusterPrimary, takeOverShutdownSignals } from './cluster.js';

/** Starts one server process: configuration, database, app, listen, graceful shutdown. */
async function main(): Promise<void> {
  const config = loadConfig();
  // WORKERS > 1: this process supervises the workers (src/cluster.ts) and serves nothing itself.
  if (runsAsClusterPrimary(config)) return runClusterPrimary(config);
  // A worker reaches the database its primary started and migrated (DATABASE_URL in its env).
  const database = await openDatabase(config, { migrate: !isClusterWorker() });
  const context = createAppContext(config, database.db);
  const app = await buildApp({ context });
  await app.listen({ host: config.host, port: config.port });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => process.exit(1), limits.shutdownGraceMs);
    timer.unref();
    // Stop accepting requests, let in-flight ones finish, then stop the database cleanly.
    await app.close();
    await database.close();
    process.exit(0);
  };
  takeOverShutdownSignals();
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? error.message : (error as Error).stack ?? String(error);
  console.error(`trustfare: ${message}`);
  process.exit(1);
});
