/**
 * @postback/sqlite — the embedded default backend: a durable `Outbox` and `ClickStore` on one SQLite file
 * (`node:sqlite`, WAL, `synchronous=FULL`, group commit).
 */

/** Core's `OutboxClosedError`, re-exported so `import { OutboxClosedError } from '@postback/sqlite'` keeps working. */
export { OutboxClosedError } from '@postback/core';
export { createSqliteClickStore, MAX_CLICK_KEY_LENGTH, type SqliteClickStore } from './click-store.ts';
export {
  DatabaseFileError,
  type DatabaseFileInfo,
  type Durability,
  inspectDatabaseFile,
  type SynchronousOption,
} from './database.ts';
export {
  DEFAULT_ADOPT_FOREIGN,
  DEFAULT_BUSY_TIMEOUT_MS,
  DEFAULT_CREATE,
  DEFAULT_MAX_BATCH_SIZE,
  DEFAULT_READ_ONLY,
  DEFAULT_SYNCHRONOUS,
  DEFAULT_THREAD,
  type SqliteClickStoreOptions,
  type SqliteOutboxOptions,
  sqliteClickStoreOptionsSchema,
  sqliteOutboxOptionsSchema,
} from './options.ts';
export { createSqliteOutbox, type SqliteOutbox } from './outbox.ts';
export { SCHEMA_VERSION, SchemaVersionError } from './schema.ts';
