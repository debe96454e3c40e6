import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataDirProblem, writeFileAtomically } from '../src/files.js';
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

describe('dataDirProblem', () => {
  const failure = (code: string, syscall: string, at?: string) => Object.assign(new Error(`${code}: ${syscall}`), { code, syscall, ...(at ? { path: at } : {}) });

  it('names DATA_DIR, the code and what to do for a write that failed there, not for a file elsewhere or a socket', () => {
    expect(dataDirProblem(failure('ENOSPC', 'write'), '/srv/data')).toBe('cannot write in DATA_DIR /srv/data (ENOSPC): its disk is full. Free space there, or set DATA_DIR to a directory on a disk with room.');
    expect(dataDirProblem(failure('EACCES', 'open', '/srv/data/pg-password.1.tmp'), '/srv/data')).toMatch(/^cannot write in DATA_DIR \/srv\/data \(EACCES, open \/srv\/data\/pg-password\.1\.tmp\): this account may not write there/);
    // A missing file of the package, a Unix socket that is not there: someone else's trouble, told as it is.
    expect(dataDirProblem(failure('ENOENT', 'open', '/opt/trustfare/migrations/001_foundation.sql'), '/srv/data')).toBeNull();
    expect(dataDirProblem(failure('ENOENT', 'connect', '/run/postgresql/.s.PGSQL.5432'), '/srv/data')).toBeNull();
    expect(dataDirProblem(new Error('permission denied for table bookings'), '/srv/data')).toBeNull();
  });
});
