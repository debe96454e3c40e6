import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomically } from '../src/files.js';
import { tempDirForFile } from './support/temp-dir.js';

const directory = tempDirForFile('files');

describe('writeFileAtomically', () => {
  it('replaces the file whole, leaving no temporary file', () => {
    const file = path.join(directory, 'replaced');
    expect(writeFileAtomically(file, 'first', { mode: 0o600 })).toBe(true);
    expect(writeFileAtomically(file, 'second', { mode: 0o600 })).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('second');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('ifAbsent: the first writer wins and a later one is told so, as two processes making a key at once', () => {
    const file = path.join(directory, 'made-once');
    expect(writeFileAtomically(file, 'first', { mode: 0o600, ifAbsent: true })).toBe(true);
    expect(writeFileAtomically(file, 'second', { mode: 0o600, ifAbsent: true })).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('first');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(directory).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
