// A CLI command on the embedded database whose DATA_DIR cannot be written in says what to do in
// one line, as the server's start does (src/files.ts dataDirProblem); it printed the system's bare
// words ("ENOTDIR: not a directory, mkdir ...") until session 32.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirForFile } from '../support/temp-dir.js';
import { cli } from './helpers.js';

describe('a CLI command with a DATA_DIR it cannot write in', () => {
  it('exits 1 with one line naming the directory, the code and what to do', async () => {
    const file = path.join(tempDirForFile('cli-data-dir'), 'a-file');
    writeFileSync(file, '');
    const dataDir = path.join(file, 'data');
    const { code, stderr } = await cli('', ['migrate'], { DATA_DIR: dataDir });
    expect(code).toBe(1);
    expect(stderr).toBe(`trustfare migrate: cannot write in DATA_DIR ${dataDir} (ENOTDIR): a part of its path is a file, not a directory. Set DATA_DIR to a directory.`);
  });
});
