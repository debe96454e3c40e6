import type { Config } from './config.js';
import type { Db } from './storage/db.js';
import { createVault, type VaultDeps } from './domain/vault/index.js';
import { createConnector, type Connector } from './processor/index.js';
import { createRatesProvider, type RatesProvider } from './domain/forex/provider.js';
import { createMailer, type Mailer } from './domain/emails/transport.js';

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
  /** Card vault keys and clock (src/domain/vault). */
  vault: VaultDeps;
  /** The payment processor (the sandbox; src/processor). */
  connector: Connector;
  /** Forex rate quotes (operator-loaded, then sandbox for test channels); see docs/forex.md. */
  rates: RatesProvider;
  /** Mail transport: .eml files under DATA_DIR/mail, or SMTP when SMTP_URL is set (docs/emails.md). */
  mailer: Mailer;
  /** Releases what the context opened itself (the sandbox's own pool, the mail transport); not the shared `db`. */
  close(): Promise<void>;
}

export interface ContextOverrides {
  now?: () => Date;
  connector?: Connector;
  rates?: RatesProvider;
  mailer?: Mailer;
}

export function createAppContext(config: Config, db: Db, overrides: ContextOverrides = {}): AppContext {
  const now = overrides.now ?? (() => new Date());
  const rates = overrides.rates ?? createRatesProvider();
  const vault = createVault(config.secrets, now);
  const ownConnector = overrides.connector ? null : createConnector(config, db);
  const connector = overrides.connector ?? ownConnector!;
  const ownMailer = overrides.mailer ? null : createMailer(config);
  const mailer = overrides.mailer ?? ownMailer!;
  const close = async () => {
    await ownConnector?.close();
    // Pooled SMTP connections stay open between mails; closing them lets the process end.
    ownMailer?.close();
  };
  return { config, db, now, rates, vault, connector, mailer, close };
}
