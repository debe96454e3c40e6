import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

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

/** What to do about a failure to write in DATA_DIR, by its code. */
const dataDirHints: Record<string, string> = {
  ENOSPC: 'its disk is full. Free space there, or set DATA_DIR to a directory on a disk with room',
  EDQUOT: "this account's disk quota there is used up. Free space there, or set DATA_DIR to a directory on another disk",
  EROFS: 'it is on a read-only file system. Set DATA_DIR to a writable directory (in a container, a volume)',
  EACCES: 'this account may not write there. Give it a directory of its own (chown), or set DATA_DIR to one',
  EPERM: 'this account may not write there. Give it a directory of its own (chown), or set DATA_DIR to one',
  ENOTDIR: 'a part of its path is a file, not a directory. Set DATA_DIR to a directory',
  // Node's recursive mkdir says ENOENT where the file system refuses the new directory (read-only).
  ENOENT: 'it cannot be made there (a read-only file system, or a parent that cannot be made). Make it, or set DATA_DIR to a writable directory',
};

// Its cluster too: one restored from a backup by another account (root) is refused the same way.
const postgresAccessHint = (dataDir: string) => `the account PostgreSQL runs as (postgres, when trustfare runs as root) cannot reach it or its cluster. Let every directory above it be passed through by others (chmod o+x), give that account its cluster (chown -R postgres ${path.join(dataDir, 'pg')}, after a restore by another account), or set DATA_DIR to a directory it can reach`;

// The file system's calls (a socket's `connect` fails with ENOENT too: not DATA_DIR's).
const fileSyscalls = new Set(['open', 'write', 'mkdir', 'chmod', 'link', 'rename', 'unlink', 'rmdir', 'fsync', 'close', 'copyfile', 'symlink']);

// The same failures in the words of a program the start runs there (initdb, postgres).
const reportedCauses: [RegExp, string][] = [
  [/No space left on device/i, 'ENOSPC'],
  [/Disk quota exceeded/i, 'EDQUOT'],
  [/Read-only file system/i, 'EROFS'],
  [/Permission denied/i, 'EACCES'],
];

/**
 * One line for a start that could not write in DATA_DIR (its secrets, the embedded PostgreSQL's
 * password and cluster): where, the system's code and what to do; null for any other failure. A
 * full disk or a directory the account may not write in printed a stack trace.
 */
export function dataDirProblem(error: unknown, dataDir: string): string | null {
  if (!(error instanceof Error)) return null;
  const { code, syscall, path: at } = error as NodeJS.ErrnoException;
  // A file elsewhere (the migrations, the package's own) is no part of DATA_DIR's trouble.
  const inDataDir = at === undefined || at.startsWith(dataDir) || dataDir.startsWith(at);
  const own = code !== undefined && syscall !== undefined && fileSyscalls.has(syscall) && inDataDir ? code : undefined;
  const cause = own ?? reportedCauses.find(([pattern]) => pattern.test(error.message))?.[1];
  // The embedded PostgreSQL runs as its own account (`postgres`, when trustfare runs as root).
  const hint = cause === 'EACCES' && own === undefined ? postgresAccessHint(dataDir) : cause === undefined ? undefined : dataDirHints[cause];
  if (cause === undefined || hint === undefined || (own === undefined && !error.message.includes(dataDir))) return null;
  const where = at !== undefined && at !== dataDir ? `, ${syscall} ${at}` : own === undefined ? ', PostgreSQL could not write its files' : '';
  return `cannot write in DATA_DIR ${dataDir} (${cause}${where}): ${hint}.`;
}
