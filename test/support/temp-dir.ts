import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

function makeTempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `trustfare-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fresh directory under the OS temp dir, removed after the file's (or describe block's) tests: runs leave nothing behind. */
export function tempDirForFile(prefix: string): string {
  const { dir, remove } = makeTempDir(prefix);
  afterAll(remove);
  return dir;
}

/** The same, made inside a test and removed when that test ends. */
export function tempDirForTest(prefix: string): string {
  const { dir, remove } = makeTempDir(prefix);
  onTestFinished(remove);
  return dir;
}
