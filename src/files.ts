import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

/**
 * Writes `file` whole or not at all: the text goes to a temporary file in the same directory,
 * reaches the disk, and is renamed over `file`. A crash or a full disk half-way leaves the
 * former file (or none), never a truncated one that every later start would trip on. The
 * temporary name is the writer's own, so two processes writing at once never mix their bytes.
 * `ifAbsent`: the file is made only if none exists (linked into place, which refuses an existing
 * name, instead of renamed over it); returns false when another writer's file was there first, so
 * two processes making a key at once both end up with the same one, the first.
 */
export function writeFileAtomically(file: string, text: string, options: { mode?: number; ifAbsent?: boolean } = {}): boolean {
  const temporary = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    const descriptor = openSync(temporary, 'wx', options.mode ?? 0o666);
    try {
      writeFileSync(descriptor, text);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    if (!options.ifAbsent) {
      renameSync(temporary, file);
      return true;
    }
    try {
      linkSync(temporary, file);
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === 'EEXIST') return false;
      throw error;
    } finally {
      rmSync(temporary, { force: true });
    }
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
