/**
 * @postback/postgres — the transactional outbox and click store for shops on PostgreSQL: enqueue inside
 * the order's own transaction, `FOR UPDATE SKIP LOCKED` claims for any number of workers, fencing
 * tokens, LISTEN/NOTIFY wake-ups, and versioned migrations in a schema of your choice.
 */
export { createPostgresClickStore, MAX_CLICK_KEY_LENGTH, type PostgresClickStore } from './click-store.ts';
export type { Subscription } from './listener.ts';
export {
  LATEST_SCHEMA_VERSION,
  type MigrateOptions,
  type MigrateResult,
  migrate,
  migrationScript,
  schemaVersion,
} from './migrations.ts';
export {
  DEFAULT_NOTIFY_COALESCE_MS,
  DEFAULT_POOL_SIZE,
  DEFAULT_PREPARED_STATEMENTS,
  DEFAULT_RECONNECT_MAX_MS,
  DEFAULT_RECONNECT_MS,
  type PostgresClickStoreOptions,
  type PostgresOutboxOptions,
} from './options.ts';
export { createPostgresOutbox, type PostgresOutbox } from './outbox.ts';
export { type PoolLike, type Queryable, type QueryResultLike, SchemaNotMigratedError } from './queryable.ts';
export { channelOf, DEFAULT_SCHEMA, SCHEMA_NAME_PATTERN, validateSchemaName } from './schema-name.ts';
