/**
 * Temporary database files for tests and benchmarks: each test gets its own directory (its own state), and
 * `cleanup` removes it with the WAL and shared-memory files next to the database.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory holding one database path. */
export interface TempDatabase {
  dir: string;
  filename: string;
  cleanup(): void;
}

/**
 * Creates a fresh temporary directory and names a database file inside it (not yet created).
 *
 * @example
 * ```ts
 * const temp = tempDatabase();
 * const outbox = createSqliteOutbox({ filename: temp.filename });
 * // …
 * await outbox.close();
 * temp.cleanup();
 * ```
 */
export function tempDatabase(name = 'postback.db'): TempDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'postback-sqlite-'));
  return {
    dir,
    filename: join(dir, name),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
