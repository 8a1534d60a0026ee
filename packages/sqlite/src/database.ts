/**
 * Opens a database file the way every store here needs it: WAL journal (readers never block the writer, and
 * a commit is one sequential append plus one fsync), the chosen `synchronous` level, a busy timeout for
 * other processes on the same file, and the schema migrated to the current version.
 *
 * Before any of that, the file is looked at read-only ({@link inspectDatabaseFile}): a database that is
 * not ours (tables of its own, no postback schema) is never switched to WAL nor given our tables unless
 * the caller adopts it explicitly, and a caller that only reads never creates or migrates anything.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { connectImmutable, connectReadOnly, folderWritable } from './read-only-connection.ts';
import { migrate, SCHEMA_VERSION, SchemaVersionError } from './schema.ts';

/**
 * Durability levels of the options (see `DEFAULT_SYNCHRONOUS`).
 *
 * @example
 * ```ts
 * const level: SynchronousOption = 'extra';
 * ```
 */
export type SynchronousOption = 'full' | 'extra' | 'normal';

/** How to open a file: see the options of `createSqliteOutbox`. */
export interface OpenDatabaseOptions {
  synchronous: SynchronousOption;
  busyTimeoutMs: number;
  /**
   * Whether opening may write our schema: create a missing or empty file, or migrate an older one.
   * `false` (tools that only read) refuses both with a {@link DatabaseFileError}. @defaultValue true
   */
  create?: boolean;
  /**
   * Whether a SQLite database holding tables of its own (not created by postback) may be given our schema
   * and switched to WAL. @defaultValue false
   */
  adoptForeign?: boolean;
}

/** What a file holds, as {@link inspectDatabaseFile} found it without changing it. */
export interface DatabaseFileInfo {
  /**
   * - `missing`: no such file; `empty`: a file of 0 bytes, or a SQLite database with nothing in it;
   * - `postback`: a database with postback's `jobs` table and a schema version (it may hold other tables,
   *   if it was adopted);
   * - `foreign`: a SQLite database of something else; `not-sqlite`: not a SQLite file at all.
   */
  kind: 'missing' | 'empty' | 'postback' | 'foreign' | 'not-sqlite';
  /** `PRAGMA user_version` (postback's schema version in its own files); 0 when there is none. */
  schemaVersion: number;
  /** Names of the file's tables (SQLite's own `sqlite_*` tables left out), sorted. */
  tables: string[];
}

/**
 * A database file this process will not open as asked. `code` says why:
 * - `foreign`: a SQLite database of something else (left untouched; see the `adoptForeign` option);
 * - `not_sqlite`: not a SQLite database at all (left untouched);
 * - `missing`: no postback database there, and the caller may not create one (`create: false`);
 * - `needs_migration`: a postback database of an older schema version, and the caller may not migrate it.
 *
 * @example
 * ```ts
 * try { createSqliteOutbox({ filename: 'shop.db' }); }
 * catch (err) { if (err instanceof DatabaseFileError && err.code === 'foreign') console.error(err.message); }
 * ```
 */
export class DatabaseFileError extends Error {
  override name = 'DatabaseFileError';
  readonly code: 'foreign' | 'not_sqlite' | 'missing' | 'needs_migration';
  /** The file, as given. */
  readonly filename: string;
  constructor(code: DatabaseFileError['code'], filename: string, message: string) {
    super(message);
    this.code = code;
    this.filename = filename;
  }
}

/** Columns of our `jobs` table that tell it from another application's table of the same name. */
const OUR_JOB_COLUMNS = ['kind', 'order_id', 'state', 'next_attempt_at', 'lease_token', 'click_token'];
const SQLITE_HEADER = 'SQLite format 3\0';

/** Whether `filename` names an in-memory database (nothing on disk to inspect or protect). */
export function isMemoryFilename(filename: string): boolean {
  return filename === ':memory:' || filename === '';
}

/**
 * Looks at a file without changing it: its first 16 bytes, then (for a SQLite file) a read-only connection
 * that reads `user_version` and the schema. Nothing is written, the journal mode is left as it is, and no
 * `-wal` or `-shm` is created beside it (works on a read-only folder or mount too).
 *
 * @example
 * ```ts
 * inspectDatabaseFile('shop.db'); // { kind: 'foreign', schemaVersion: 0, tables: ['orders'] }
 * ```
 */
export function inspectDatabaseFile(filename: string, busyTimeoutMs = 5_000): DatabaseFileInfo {
  const none = (kind: DatabaseFileInfo['kind']): DatabaseFileInfo => ({ kind, schemaVersion: 0, tables: [] });
  let size: number;
  try {
    size = statSync(filename).size;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return none('missing');
    throw error;
  }
  // A 0-byte file with a WAL beside it may hold a whole database in the WAL: read it through SQLite.
  if (size === 0 && !existsSync(`${filename}-wal`)) return none('empty');
  if (size > 0) {
    const header = Buffer.alloc(16);
    const fd = openSync(filename, 'r');
    try {
      readSync(fd, header, 0, 16, 0);
    } finally {
      closeSync(fd);
    }
    if (header.toString('latin1') !== SQLITE_HEADER) return none('not-sqlite');
  }
  // No `-wal`: no connection uses the file now, and a look at its schema creates none beside it (the file
  // may be another application's). With one, read through it: a writer may be at work.
  const db = existsSync(`${filename}-wal`)
    ? connectReadOnly(filename, busyTimeoutMs)
    : connectImmutable(filename);
  try {
    const { user_version: schemaVersion } = db.prepare('PRAGMA user_version').get() as {
      user_version: number;
    };
    const objects = db.prepare('SELECT type, name FROM sqlite_schema').all() as Array<{
      type: string;
      name: string;
    }>;
    const tables = objects
      .filter((o) => o.type === 'table' && !o.name.startsWith('sqlite_'))
      .map((o) => o.name)
      .sort();
    if (objects.length === 0 && schemaVersion === 0) return none('empty');
    const columns = tables.includes('jobs')
      ? (db.prepare('PRAGMA table_info(jobs)').all() as Array<{ name: string }>).map((c) => c.name)
      : [];
    const ours = schemaVersion >= 1 && OUR_JOB_COLUMNS.every((column) => columns.includes(column));
    return { kind: ours ? 'postback' : 'foreign', schemaVersion, tables };
  } finally {
    db.close();
  }
}

/** Refuses, before anything is written, to open a file in a way the caller did not ask for. */
function checkFile(filename: string, options: OpenDatabaseOptions): void {
  const info = inspectDatabaseFile(filename, options.busyTimeoutMs);
  const create = options.create !== false;
  switch (info.kind) {
    case 'not-sqlite':
      throw new DatabaseFileError(
        'not_sqlite',
        filename,
        `${filename} is not a SQLite database; postback left it untouched. Give the path of a postback database or of a new file`,
      );
    case 'foreign': {
      const shown = info.tables.slice(0, 5).join(', ') + (info.tables.length > 5 ? ', …' : '');
      const holds = info.tables.length === 0 ? 'a schema of its own' : `tables of its own (${shown})`;
      if (!options.adoptForeign || !create) {
        throw new DatabaseFileError(
          'foreign',
          filename,
          `${filename} is a SQLite database of another application (it holds ${holds} and no postback schema); ` +
            'postback left it untouched and changes no database it did not create. Give a file of its own, ' +
            'or adopt this one explicitly (the adoptForeign option)',
        );
      }
      if (info.schemaVersion !== 0) {
        throw new DatabaseFileError(
          'foreign',
          filename,
          `${filename} is versioned by another tool (user_version ${info.schemaVersion}), which postback uses ` +
            'for its own schema version; postback left it untouched. Give postback a file of its own',
        );
      }
      return;
    }
    case 'missing':
    case 'empty':
      if (!create) {
        throw new DatabaseFileError(
          'missing',
          filename,
          `no postback database at ${filename} (${info.kind === 'missing' ? 'no such file' : 'the file is empty'}); nothing was created. ` +
            'It is created by `postback migrate`, or by the first enqueue or worker run',
        );
      }
      return;
    case 'postback':
      // Refused before the read-write open: a newer file is not ours to touch either.
      if (info.schemaVersion > SCHEMA_VERSION) throw new SchemaVersionError(info.schemaVersion);
      if (!create && info.schemaVersion < SCHEMA_VERSION) {
        throw new DatabaseFileError(
          'needs_migration',
          filename,
          `${filename} has postback schema version ${info.schemaVersion}, this version needs ${SCHEMA_VERSION}; ` +
            'nothing was changed. Migrate it first (`postback migrate`, or open it once with a worker)',
        );
      }
      return;
  }
}

/**
 * Opens (creating if needed) and migrates a database file, after checking read-only that it is ours, new,
 * or adopted on purpose (see {@link OpenDatabaseOptions}); else a {@link DatabaseFileError}, nothing written.
 *
 * @example
 * ```ts
 * const db = openDatabase('postback.db', { synchronous: 'full', busyTimeoutMs: 5_000 });
 * ```
 */
export function openDatabase(filename: string, options: OpenDatabaseOptions): DatabaseSync {
  if (!isMemoryFilename(filename)) checkFile(filename, options);
  const db = new DatabaseSync(filename);
  try {
    // PRAGMAs take no bound parameters; both values come from the validated options schema.
    db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}`);
    const mode = (db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode: string }).journal_mode;
    // An in-memory database reports `memory`: WAL does not apply and nothing is durable anyway.
    if (mode !== 'wal' && !isMemoryFilename(filename)) {
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

/** A database opened by {@link openReadOnlyDatabase}. */
export interface ReadOnlyDatabase {
  /** The connection: every read works, every write fails (`SQLITE_READONLY`). */
  db: DatabaseSync;
  /** Closes the connection, and tidies what reading left beside the file (see {@link openReadOnlyDatabase}). */
  close(): void;
}

/**
 * Opens a postback database for reading only (tools such as `postback status`): after the same read-only
 * look as {@link openDatabase} with `create: false` (a missing, empty, older, newer or foreign file is
 * refused), a connection that cannot write — no journal mode set, nothing migrated, so it works on a
 * read-only file, folder or mount. In WAL mode SQLite reads through `-wal` and `-shm` files, which a
 * read-only connection creates if they are missing and never deletes; when there were none before,
 * `close()` lets SQLite delete them as it does when the last connection closes (a connection that reads
 * the schema version and closes: nothing is written to the database file). On a read-only folder they
 * cannot be created, and a file with no `-wal` is read as it is on disk (`immutable`).
 *
 * @example
 * ```ts
 * const { db, close } = openReadOnlyDatabase('postback.db', { busyTimeoutMs: 5_000 });
 * ```
 */
export function openReadOnlyDatabase(
  filename: string,
  options: Pick<OpenDatabaseOptions, 'busyTimeoutMs'>,
): ReadOnlyDatabase {
  const hadWal = existsSync(`${filename}-wal`);
  checkFile(filename, { ...options, synchronous: 'full', create: false });
  const db = connectReadOnly(filename, options.busyTimeoutMs);
  return {
    db,
    close() {
      db.close();
      if (hadWal || !existsSync(`${filename}-wal`) || !folderWritable(filename)) return;
      try {
        // Deletes the `-wal` and `-shm` only if no other connection uses them (SQLite's own rule).
        const tidy = new DatabaseSync(filename);
        try {
          tidy.prepare('PRAGMA schema_version').get();
        } finally {
          tidy.close();
        }
      } catch {
        // The files stay: SQLite's, harmless, removed by the next writer that closes last.
      }
    },
  };
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
  /** Whether a resolved write is on disk (fsynced by SQLite at every commit). */
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
export function readDurability(db: DatabaseSync): Durability {
  const { journal_mode } = db.prepare('PRAGMA journal_mode').get() as { journal_mode: string };
  const { synchronous } = db.prepare('PRAGMA synchronous').get() as { synchronous: number };
  const levels = ['off', 'normal', 'full', 'extra'] as const;
  const level = levels[synchronous] ?? 'off';
  return {
    journalMode: journal_mode,
    synchronous: level,
    durableOnResolve: journal_mode === 'wal' && (level === 'full' || level === 'extra'),
  };
}
