import type { Config } from '../config.js';
import type { Db } from '../storage/db.js';
import type { Connector } from './connector.js';
import { SandboxConnector } from './sandbox/sandbox.js';

export * from './connector.js';
export { parseForcedDeclineCode, forcedDeclines, forcedDeclineForAmount, sandboxCodes } from './sandbox/declines.js';
export { testCards, testCardByPan, testCardBySandboxToken, isSandboxToken, type TestCard } from './sandbox/test-cards.js';

/**
 * The payment processor the service talks to. Only the sandbox exists today; a real acquirer is
 * another Connector chosen here, with no change to the transaction code.
 */
export function createConnector(config: Config, db: Db): Connector {
  return new SandboxConnector(db, { baseUrl: config.baseUrl, latencyMs: config.sandboxLatencyMs, noAnswerMs: config.sandboxNoAnswerMs });
}
