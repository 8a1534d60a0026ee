/**
 * Opens a database file the way every store here needs it: WAL journal (readers never block the writer, and
 * a commit is one sequential append plus one fsync), the chosen `synchronous` level, a busy timeout for
 * other processes on the same file, and the schema migrated to the current version.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { migrate } from './schema.ts';

/**
 * Durability levels of the options (see `DEFAULT_SYNCHRONOUS`).
 *
 * @example
 * ```ts
 * const level: SynchronousOption = 'full-async';
 * ```
 */
export type SynchronousOption = 'full' | 'extra' | 'normal' | 'full-async';

/** How to open a file: see the options of `createSqliteOutbox`. */
export interface OpenDatabaseOptions {
  synchronous: SynchronousOption;
  busyTimeoutMs: number;
}

/** `full-async` lets SQLite commit at NORMAL; the WAL is then synced by {@link openWalSync}. */
const SQLITE_LEVEL: Record<SynchronousOption, string> = {
  full: 'FULL',
  extra: 'EXTRA',
  normal: 'NORMAL',
  'full-async': 'NORMAL',
};

/**
 * Opens (creating if needed) and migrates a database file.
 *
 * @example
 * ```ts
 * const db = openDatabase('postback.db', { synchronous: 'full', busyTimeoutMs: 5_000 });
 * ```
 */
export function openDatabase(filename: string, options: OpenDatabaseOptions): DatabaseSync {
  const db = new DatabaseSync(filename);
  try {
    // PRAGMAs take no bound parameters; both values come from the validated options schema.
    db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}`);
    const mode = (db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode: string }).journal_mode;
    // An in-memory database reports `memory`: WAL does not apply and nothing is durable anyway.
    if (mode !== 'wal' && filename !== ':memory:' && filename !== '') {
      throw new Error(`could not switch ${filename} to WAL mode (journal_mode is ${mode})`);
    }
    db.exec(`PRAGMA synchronous = ${SQLITE_LEVEL[options.synchronous]}`);
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * What the connection actually runs with, read back from SQLite (not from our options).
 *
 * @example
 * ```ts
 * if (!outbox.durability.durableOnResolve) console.warn('enqueues may be lost on power loss');
 * ```
 */
export interface Durability {
  journalMode: string;
  /** SQLite's own `synchronous` level. */
  synchronous: 'off' | 'normal' | 'full' | 'extra';
  /** Whether a resolved write is on disk (fsynced by SQLite at commit, or by us off the event loop). */
  durableOnResolve: boolean;
}

/**
 * Reads the journal mode and `synchronous` level of a connection back from SQLite.
 *
 * @example
 * ```ts
 * readDurability(db); // { journalMode: 'wal', synchronous: 'full' }
 * ```
 */
export function readDurability(db: DatabaseSync, walSynced = false): Durability {
  const { journal_mode } = db.prepare('PRAGMA journal_mode').get() as { journal_mode: string };
  const { synchronous } = db.prepare('PRAGMA synchronous').get() as { synchronous: number };
  const levels = ['off', 'normal', 'full', 'extra'] as const;
  const level = levels[synchronous] ?? 'off';
  return {
    journalMode: journal_mode,
    synchronous: level,
    durableOnResolve: journal_mode === 'wal' && (level === 'full' || level === 'extra' || walSynced),
  };
}

/** An open handle on a database's WAL file that syncs it on libuv's thread pool. */
export interface WalSync {
  /** fdatasync of the WAL: every transaction committed before the call is on disk when it resolves. */
  sync(): Promise<void>;
  close(): void;
}

/**
 * Opens the WAL file of an open WAL-mode database for `full-async` durability. The file is never replaced
 * while a connection is open (SQLite deletes it only when the last connection closes, and restarts it in
 * place only after a checkpoint synced its frames into the database), so one descriptor serves for the
 * life of the connection. Returns null for an in-memory database (nothing to sync).
 *
 * @example
 * ```ts
 * const wal = openWalSync('postback.db');
 * await wal?.sync();
 * ```
 */
export function openWalSync(filename: string): WalSync | null {
  if (filename === ':memory:' || filename === '') return null;
  const fd = openSync(`${filename}-wal`, 'r');
  return {
    sync: () =>
      new Promise<void>((resolve, reject) => {
        fdatasync(fd, (error) => (error === null ? resolve() : reject(error)));
      }),
    close: () => closeSync(fd),
  };
}
