import type { Config } from '../config.js';
import { limits } from '../limits.js';
import { createDb, type Db } from '../storage/db.js';
import type { Connector } from './connector.js';
import { SandboxConnector } from './sandbox/sandbox.js';

export * from './connector.js';
export { parseForcedDeclineCode, forcedDeclines, forcedDeclineForAmount, sandboxCodes } from './sandbox/declines.js';
export { testCards, testCardByPan, testCardBySandboxToken, isSandboxToken, type TestCard } from './sandbox/test-cards.js';

/**
 * The payment processor the service talks to. Only the sandbox exists today; a real acquirer is
 * another Connector chosen here, with no change to the transaction code.
 *
 * The sandbox keeps its state in the service's database but, like the remote system it stands
 * for, through its own small pool (limits.sandboxDbPoolSize) on the same server as `db`: when
 * every connection of the API's pool is busy, a processor call still gets one at once instead of
 * queueing behind API requests while its processorTimeoutMs runs out (issue 7).
 */
export function createConnector(config: Config, db: Db): Connector & { close(): Promise<void> } {
  const connectionString = db.pool.options.connectionString;
  if (!connectionString) throw new Error('createConnector: the database handle has no connection string');
  const sandboxDb = createDb(withAsynchronousCommit(connectionString), limits.sandboxDbPoolSize, { applicationName: 'trustfare-sandbox', allowExitOnIdle: true });
  return new SandboxConnector(sandboxDb, { baseUrl: config.baseUrl, latencyMs: config.sandboxLatencyMs, noAnswerMs: config.sandboxNoAnswerMs });
}

/**
 * The sandbox's rows stand for a remote processor's state, not our books, so its connections
 * commit without waiting for the WAL flush (issue 7; docs/performance.md). Nothing that matters
 * can be lost: WAL is flushed in order, so the commit of any settlement that recorded a sandbox
 * answer also makes that answer's row durable; a crash can only forget calls whose transaction
 * is still `incomplete`, which reconciliation then fails as never received (no money moved, as
 * the sandbox no longer knows the call). The API's pool keeps synchronous commits for every
 * money table.
 */
export function withAsynchronousCommit(connectionString: string): string {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return connectionString;
  }
  url.searchParams.set('options', '-c synchronous_commit=off');
  return url.toString();
}
