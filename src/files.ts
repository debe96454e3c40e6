import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

/**
 * Writes `file` whole or not at all: the text goes to a temporary file in the same directory,
 * reaches the disk, and is renamed over `file`. A crash or a full disk half-way leaves the
 * former file (or none), never a truncated one that every later start would trip on. The
 * temporary name is the writer's own, so two processes writing at once never mix their bytes.
 */
export function writeFileAtomically(file: string, text: string, options: { mode?: number } = {}): void {
  const temporary = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    const descriptor = openSync(temporary, 'wx', options.mode ?? 0o666);
    try {
      writeFileSync(descriptor, text);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
