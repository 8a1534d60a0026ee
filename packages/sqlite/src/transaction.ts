/**
 * Write transactions. Every write starts with `BEGIN IMMEDIATE`: it takes the file's write lock up front, so
 * two processes never both read a job as claimable and then race to update it (a deferred transaction would
 * fail with SQLITE_BUSY at its first write instead of waiting), and `busy_timeout` applies to the wait.
 */
import type { DatabaseSync } from 'node:sqlite';

/**
 * Runs `fn` inside `BEGIN IMMEDIATE … COMMIT`; rolls back and rethrows if it throws. `fn` must be
 * synchronous: nothing else may use the connection while the transaction is open.
 *
 * @example
 * ```ts
 * const changed = inTransaction(db, () => db.prepare('UPDATE jobs SET … WHERE …').run().changes);
 * ```
 */
export function inTransaction<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  let result: T;
  try {
    result = fn();
  } catch (error) {
    rollback(db);
    throw error;
  }
  try {
    db.exec('COMMIT');
  } catch (error) {
    rollback(db);
    throw error;
  }
  return result;
}

/** Rolls back if a transaction is still open: a failed COMMIT or an I/O error may already have ended it. */
function rollback(db: DatabaseSync): void {
  try {
    db.exec('ROLLBACK');
  } catch {
    // "cannot rollback - no transaction is active": SQLite already rolled it back.
  }
}
