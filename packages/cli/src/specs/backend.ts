/**
 * The flags and variables every queue command shares: exactly one backend (`--db`, `--pg`, `--sqs`;
 * `backends/index.ts` checks that one and only one is given) and the variables the backends read.
 */
import type { EnvSpec } from '../spec.ts';

/** The backend flags of a command that creates the SQLite file when it is missing. */
export const BACKEND_FLAGS = {
  db: { type: 'string', value: 'FILE', help: 'SQLite outbox file', oneOf: 'backend' },
  pg: { type: 'string', value: 'URL', help: 'PostgreSQL connection URL', oneOf: 'backend' },
  sqs: { type: 'string', value: 'URL', help: 'SQS queue URL', oneOf: 'backend' },
  schema: {
    type: 'string',
    value: 'NAME',
    env: 'POSTBACK_PG_SCHEMA',
    help: '--pg: the schema holding the tables (default postback)',
  },
} as const;

/** The backend flags of a reading command: the SQLite file must exist already. */
export const EXISTING_BACKEND_FLAGS = {
  ...BACKEND_FLAGS,
  db: { ...BACKEND_FLAGS.db, help: 'SQLite outbox file (must exist)' },
} as const;

/** The variables the backends read (see the README of each store). */
export const BACKEND_ENV: readonly EnvSpec[] = [
  { name: 'POSTBACK_SQLITE_SYNCHRONOUS', flag: 'db', help: "SQLite's synchronous level" },
  { name: 'POSTBACK_SQLITE_BUSY_TIMEOUT_MS', flag: 'db', help: 'how long to wait for a locked database' },
  { name: 'POSTBACK_SQS_DLQ_URL', flag: 'sqs', help: 'the dead-letter queue URL' },
];

/** The usage words of the backend choice. */
export const BACKEND_USAGE = '(--db FILE | --pg URL [--schema NAME] | --sqs URL)';
