import type { Config } from '../config.js';
import { limits } from '../limits.js';
import { createDb, type Db } from '../storage/db.js';
import type { Connector } from './connector.js';
import { SandboxConnector } from './sandbox/sandbox.js';

export * from './connector.js';
export { parseForcedDeclineCode, forcedDeclines, forcedDeclineForAmount, sandboxCodes } from './sandbox/declines.js';
export { testCards, testCardByPan, testCardBySandboxToken, isSandboxToken, type TestCard } from './sandbox/test-cards.js';

/**
 * The payment processor the service talks to, named by PROCESSOR (config.processor). Only the
 * sandbox exists today; a real acquirer is another Connector chosen here, with no change to the
 * transaction code.
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
 * Whether payments in the processor's `live` mode (every channel not in test mode: live, draft,
 * affiliate) may go to `connector`. In production only a connector that moves money takes them:
 * the sandbox approves any real card, so a live payment through it was recorded as paid, with its
 * ledger entries and receipt, while no money moved. Development and tests keep them on the
 * sandbox, to try the live flows with any card (docs/sandbox.md "Live channels").
 */
export function takesLiveMode(config: Pick<Config, 'env'>, connector: Pick<Connector, 'movesMoney'>): boolean {
  return connector.movesMoney || config.env !== 'production';
}

/** What the operator is told (start-up log, `channel set`) when production has no live processor. */
export const noLiveProcessorWarning =
  'no live payment processor is configured (PROCESSOR=sandbox moves no money): card payments on channels that are not in test mode are refused with 409 rest_no_live_processor; test channels work as usual';

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
