import { describe, expect, it } from 'vitest';
import { cli } from './helpers.js';

// Help needs no database: an address where nothing listens proves none is opened.
const noDatabase = 'postgres://postgres@127.0.0.1:1/none';

describe('trustfare <command> --help', () => {
  it('prints the usage and options of every command, exit 0, without a database', async () => {
    const list = await cli(noDatabase, ['help']);
    expect(list.code).toBe(0);
    const names = list.stderr.split('\n').filter((line) => line.startsWith('  ')).map((line) => line.slice(2, 24).trim());
    expect(names).toContain('statement');
    for (const name of names) {
      const help = await cli(noDatabase, [...name.split(' '), '--help']);
      expect(help.code, name).toBe(0);
      expect(help.stderr, name).toContain(`usage: trustfare ${name}`);
    }
    // The command list is where an operator looks for how to link suppliers: it left --suppliers out.
    const channelSet = list.stderr.split('\n').find((line) => line.startsWith('  channel set'));
    expect(channelSet).toContain('--suppliers');
    const statement = await cli(noDatabase, ['statement', '-h']);
    expect(statement.stderr).toContain('--channel <value>');
    expect(statement.stderr).toContain('--format <value>');
  });

  it('answers an unknown option with exit 2 and where to find the options', async () => {
    const result = await cli(noDatabase, ['statement', '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('trustfare statement: unknown option --bogus (`trustfare statement --help` lists its options)');
  });

  it('names an unknown command, an option missing its value and an argument the command does not take, exit 2', async () => {
    const unknown = await cli(noDatabase, ['sites', 'create']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe('trustfare: unknown command "sites create"');
    const noValue = await cli(noDatabase, ['site', 'create', '--path']);
    expect([noValue.code, noValue.stderr]).toEqual([2, 'trustfare site create: option --path needs a value; write --path=<value> for a value starting with - (`trustfare site create --help` lists its options)']);
    // An extra word was ignored, so a mistyped command line ran with what was left of it.
    const extra = await cli(noDatabase, ['site', 'create', '--path', 'acme', '--name', 'Acme', 'Travel']);
    expect([extra.code, extra.stderr]).toEqual([2, 'trustfare site create: unexpected argument "Travel" (`trustfare site create --help` lists its options)']);
  });

  it('says an option whose value starts with - needs a value, and how to give one (it said the option takes no value)', async () => {
    const negative = await cli(noDatabase, ['chargeback', '--site', 'demo', '--transaction', '2', '--total', '-5']);
    expect([negative.code, negative.stderr]).toEqual([2, 'trustfare chargeback: option --total needs a value; write --total=<value> for a value starting with - (`trustfare chargeback --help` lists its options)']);
    const nextOption = await cli(noDatabase, ['site', 'create', '--path', '--name', 'x']);
    expect([nextOption.code, nextOption.stderr]).toEqual([2, 'trustfare site create: option --path needs a value; write --path=<value> for a value starting with - (`trustfare site create --help` lists its options)']);
    // A switch given a value does take none.
    const switchValue = await cli(noDatabase, ['mail', 'retry', '--all=yes']);
    expect([switchValue.code, switchValue.stderr]).toEqual([2, 'trustfare mail retry: option --all takes no value (`trustfare mail retry --help` lists its options)']);
  });

  it('refuses options that exclude each other with exit 2 before opening a database: mail retry --request with --all', async () => {
    const both = await cli(noDatabase, ['mail', 'retry', '--request', '1', '--all']);
    expect([both.code, both.stderr]).toEqual([2, 'trustfare mail retry: give --request or --all, not both (`trustfare mail retry --help` lists its options)']);
    const resend = await cli(noDatabase, ['mail', 'resend', '--mail', '1', '--since', '2026-01-01']);
    expect([resend.code, resend.stderr]).toEqual([2, 'trustfare mail resend: give --mail or --since, not both (`trustfare mail resend --help` lists its options)']);
  });

  it('answers a missing required option or argument with exit 2 before opening a database, naming it, for every command', async () => {
    const cases: [string[], string][] = [
      [['site', 'create', '--name', 'X'], '--path is required'],
      [['user', 'create', '--site', 'a', '--username', 'u', '--email', 'u@a.test', '--role', 'member'], 'give --password or --password-stdin'],
      [['user', 'create', '--site', 'a', '--username', 'u', '--password', 'long enough', '--role', 'member'], '--email is required'],
      [['user', 'password', '--password', 'long enough'], '--username is required'],
      [['user', '2fa', 'enrol'], '--username is required'],
      [['user', '2fa', 'confirm', '--username', 'u'], '--code is required'],
      [['membership', 'add', '--site', 'a', '--username', 'u'], '--role is required'],
      [['membership', 'remove', '--site', 'a'], '--username is required'],
      [['token', 'create', '--site', 'a', '--username', 'u'], '--name is required'],
      [['channel', 'set', '--site', 'a', '--account-mode', 'live'], '--id is required'],
      [['channel', 'set', '--site', 'a', '--id', '1'], 'give at least one of --account-mode, --channel-status'],
      [['chargeback', '--site', 'a', '--transaction', '1'], '--total is required'],
      [['grant', 'allocate', '--from-site', 'a'], '--to-site is required'],
      [['grant', 'revoke', '--to-site', 'a'], '--from-site is required'],
      [['mail', 'render', '--language', 'enGB', '--out', 'x.eml'], '--kind is required'],
      [['mail', 'retry'], 'give --request or --all'],
      [['mail', 'resend'], 'give --mail or --since'],
      [['rates', 'list'], '--base is required'],
      [['rates', 'set'], 'the FILE argument is required'],
      [['suppliers', 'import'], 'the FILE argument is required'],
      [['statement', '--site', 'a', '--channel', '1', '--from', '2026-01-01'], '--to is required'],
      [['transaction', 'settle', '--site', 'a', '--transaction', '1', '--outcome', 'declined'], '--reason is required'],
      [['site', 'create', '--path=', '--name', 'X'], '--path is required'],
    ];
    for (const [args, message] of cases) {
      const result = await cli(noDatabase, args);
      expect([result.code, result.stderr], args.join(' ')).toEqual([2, expect.stringContaining(message)]);
      expect(result.stderr, args.join(' ')).toContain('--help` lists its options');
    }
  });
});
