/**
 * Opens a database file the way every store here needs it: WAL journal (readers never block the writer, and
 * a commit is one sequential append plus one fsync), the chosen `synchronous` level, a busy timeout for
 * other processes on the same file, and the schema migrated to the current version.
 */
import { DatabaseSync } from 'node:sqlite';
import { migrate } from './schema.ts';

/** How to open a file: see the options of `createSqliteOutbox`. */
export interface OpenDatabaseOptions {
  synchronous: 'full' | 'extra' | 'normal';
  busyTimeoutMs: number;
}

/**
 * Opens (creating if needed) and migrates a database file.
 *
 * @example
 * ```ts
 * const db = openDatabase('postback.db', { synchronous: 'full', busyTimeoutMs: 5_000 });
 * ```
 */
export function openDatabase(filename: string, options: OpenDatabaseOptions): DatabaseSync {
  const db = new DatabaseSync(filename, { timeout: options.busyTimeoutMs });
  try {
    // PRAGMAs take no bound parameters; both values come from the validated options schema.
    db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}`);
    const mode = (db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode: string }).journal_mode;
    // An in-memory database reports `memory`: WAL does not apply and nothing is durable anyway.
    if (mode !== 'wal' && filename !== ':memory:' && filename !== '') {
      throw new Error(`could not switch ${filename} to WAL mode (journal_mode is ${mode})`);
    }
    db.exec(`PRAGMA synchronous = ${options.synchronous.toUpperCase()}`);
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** What the connection actually runs with, read back from SQLite (not from our options). */
export interface Durability {
  journalMode: string;
  synchronous: 'off' | 'normal' | 'full' | 'extra';
}

/**
 * Reads the journal mode and `synchronous` level of a connection back from SQLite.
 *
 * @example
 * ```ts
 * readDurability(db); // { journalMode: 'wal', synchronous: 'full' }
 * ```
 */
export function readDurability(db: DatabaseSync): Durability {
  const { journal_mode } = db.prepare('PRAGMA journal_mode').get() as { journal_mode: string };
  const { synchronous } = db.prepare('PRAGMA synchronous').get() as { synchronous: number };
  const levels = ['off', 'normal', 'full', 'extra'] as const;
  return { journalMode: journal_mode, synchronous: levels[synchronous] ?? 'off' };
}
