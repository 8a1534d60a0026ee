/**
 * Connections that cannot write, for looking at a file and for the `readOnly` outbox (see
 * `openReadOnlyDatabase` in `database.ts`): they work on a read-only file, folder or mount, and a file no
 * connection uses is read without creating anything beside it.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';

/** SQLite's result code for a file it cannot open (here: a `-shm` it cannot create). */
const SQLITE_CANTOPEN = 14;

/**
 * A connection that can only read `filename`, as it is now. A database in WAL mode is read through its
 * `-wal` and `-shm` files, which SQLite creates beside it if they are missing; where it cannot (a
 * read-only directory or mount) and no `-wal` exists (so no connection is using the file: a writer would
 * have created one, and could not here), the file is opened `immutable`, read as it is on disk.
 */
export function connectReadOnly(filename: string, busyTimeoutMs: number): DatabaseSync {
  const db = new DatabaseSync(filename, { readOnly: true });
  try {
    db.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    db.prepare('PRAGMA schema_version').get();
    return db;
  } catch (error) {
    db.close();
    const code = (error as { errcode?: unknown }).errcode;
    if (typeof code !== 'number' || (code & 0xff) !== SQLITE_CANTOPEN || existsSync(`${filename}-wal`))
      throw error;
  }
  return connectImmutable(filename);
}

/**
 * A read-only connection that takes `filename` as unchanging: it creates nothing beside it and reads no
 * `-wal`. Only for a file no connection is using (no `-wal` beside it).
 */
export function connectImmutable(filename: string): DatabaseSync {
  return new DatabaseSync(`${pathToFileURL(resolve(filename)).href}?immutable=1`, { readOnly: true });
}

/** Whether this process may create files in the folder of `filename` (SQLite's `-wal` and `-shm`). */
export function folderWritable(filename: string): boolean {
  try {
    accessSync(dirname(resolve(filename)), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
