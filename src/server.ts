import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { limits } from './limits.js';
import { createAppContext } from './context.js';
import { openDatabase } from './storage/database.js';
import { isClusterWorker, runClusterPrimary, runsAsClusterPrimary, takeOverShutdownSignals } from './cluster.js';
import { seedDevelopmentData, startupBanner, type SeedOutcome } from './storage/seed.js';
import type { Config } from './config.js';
import { backgroundJobs, startJobRunner } from './jobs/index.js';

/** Starts one server process: configuration, database, app, listen, graceful shutdown. */
async function main(): Promise<void> {
  const config = loadConfig();
  // WORKERS > 1: this process supervises the workers (src/cluster.ts) and serves nothing itself.
  if (runsAsClusterPrimary(config)) {
    return runClusterPrimary(config, {
      prepare: async (database) => {
        const context = createAppContext(config, database.db);
        try {
          printBanner(config, await seedDevelopmentData(context));
        } finally {
          await context.close();
        }
      },
    });
  }
  // A worker reaches the database its primary started and migrated (DATABASE_URL in its env).
  const database = await openDatabase(config, { migrate: !isClusterWorker() });
  const context = createAppContext(config, database.db);
  // Development only, on an empty database: demo site, user, API token and test channel.
  const outcome = isClusterWorker() ? null : await seedDevelopmentData(context);
  const app = await buildApp({ context });
  await app.listen({ host: config.host, port: config.port });
  if (!isClusterWorker()) printBanner(config, outcome);
  // Every process runs the jobs; each claims rows with SKIP LOCKED (src/jobs).
  const jobs = startJobRunner(context, backgroundJobs, app.log);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => process.exit(1), limits.shutdownGraceMs);
    timer.unref();
    // Stop the jobs and accepting requests, let in-flight work finish, then stop the database.
    await jobs.stop();
    await app.close();
    await context.close();
    await database.close();
    process.exit(0);
  };
  takeOverShutdownSignals();
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/** Plain text on stdout for people; production keeps stdout to the JSON logs. */
function printBanner(config: Config, outcome: SeedOutcome | null): void {
  if (config.env === 'production') return;
  const dataLocation = config.databaseUrl ? 'the database of DATABASE_URL' : config.dataDir;
  console.log(startupBanner({ baseUrl: config.baseUrl, env: config.env, outcome, dataLocation }));
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? error.message : (error as Error).stack ?? String(error);
  console.error(`trustfare: ${message}`);
  process.exit(1);
});
