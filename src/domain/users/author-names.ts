import { makeRoomForOne } from '../../bounded.js';
import { limits } from '../../limits.js';
import type { Db, Statement } from '../../storage/db.js';
import { credentialEpochSql } from '../credentials.js';

/** A user's names as a booking shows its author (`author`, `authorname`). */
export type AuthorNames = {
  author_username: string;
  author_name: string;
};

type RememberedNames = AuthorNames & {
  /** credential_epoch as read by the statement that read the names. */
  epoch: string;
};

const authorNamesStatement: Statement = {
  name: 'author_names',
  text: `SELECT u.username AS author_username, u.display_name AS author_name, ${credentialEpochSql}::text AS epoch FROM users u WHERE u.id = $1`,
};

/**
 * Authors' names remembered by this process (issue 7: GET booking reads the booking without
 * joining users, which saved about a twentieth of the machine's CPU per read, docs/performance.md).
 * Each entry keeps the credential epoch (migration 016) read with the names, and serves only a
 * request whose own statement read the same epoch: every change of a username or display name
 * bumps the epoch in the changing transaction (migration 026), so an equal epoch means the names
 * are still the current ones, in every process.
 */
export class AuthorNameMemory {
  private readonly entries = new Map<number, RememberedNames>();

  constructor(private readonly max: number = limits.authorNamesRememberedMax) {}

  /** The names of `userId` if this process read them at `epoch`. */
  known(userId: number, epoch: string): AuthorNames | undefined {
    const entry = this.entries.get(userId);
    return entry !== undefined && entry.epoch === epoch ? entry : undefined;
  }

  /** Reads the names of `userId` (an author: the foreign key keeps the user) and remembers them. */
  async read(db: Db, userId: number): Promise<AuthorNames> {
    const entry = await db.one<RememberedNames>(authorNamesStatement, [userId]);
    if (!this.entries.has(userId)) makeRoomForOne(this.entries, this.max);
    this.entries.set(userId, entry);
    return entry;
  }
}
