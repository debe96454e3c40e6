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
    const statement = await cli(noDatabase, ['statement', '-h']);
    expect(statement.stderr).toContain('--channel <value>');
    expect(statement.stderr).toContain('--format <value>');
  });

  it('answers an unknown option with exit 2 and where to find the options', async () => {
    const result = await cli(noDatabase, ['statement', '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Unknown option '--bogus'");
    expect(result.stderr).toContain('`trustfare statement --help` lists its options');
  });
});
