/**
 * The PostgreSQL backend of the CLI (`--pg URL`): opens the outbox in the schema named by
 * `POSTBACK_PG_SCHEMA` (default `postback`), after checking that the server answers and the schema is
 * migrated — the CLI never changes a schema except through `postback migrate`. Also hands the worker the
 * LISTEN/NOTIFY wake-up, so it reacts to new jobs at once instead of at its next poll.
 */
import { OptionsError } from '@postback/core';
import {
  createPostgresClickStore,
  createPostgresOutbox,
  DEFAULT_SCHEMA,
  LATEST_SCHEMA_VERSION,
  schemaVersion,
} from '@postback/postgres';
import type { OpenedBackend } from './backend.ts';
import { describePgUrl } from './pg-url.ts';

export { describePgUrl } from './pg-url.ts';

/** The schema the CLI uses: `POSTBACK_PG_SCHEMA` or the default. */
export function schemaFromEnv(env: Record<string, string | undefined>): string {
  const value = env.POSTBACK_PG_SCHEMA;
  return value === undefined || value === '' ? DEFAULT_SCHEMA : value;
}

/**
 * Opens the outbox on `url`.
 *
 * @example
 * ```ts
 * const { outbox, describe, wake } = await open('postgres://postgres@127.0.0.1/shop', process.env);
 * ```
 */
export async function open(url: string, env: Record<string, string | undefined>): Promise<OpenedBackend> {
  const schema = schemaFromEnv(env);
  let outbox: ReturnType<typeof createPostgresOutbox>;
  try {
    outbox = createPostgresOutbox({ connectionString: url, schema, poolSize: 4, onError: () => {} });
  } catch (error) {
    if (error instanceof OptionsError && error.field === 'schema') {
      throw new OptionsError('POSTBACK_PG_SCHEMA', error.message.replace(/^Invalid option [^:]+: /, ''));
    }
    throw error;
  }
  const where = describePgUrl(url);
  try {
    const version = await schemaVersion(outbox.pool, schema);
    if (version < LATEST_SCHEMA_VERSION) {
      throw new Error(
        `schema "${schema}" on ${where} is at version ${version}, this postback needs ${LATEST_SCHEMA_VERSION}: ` +
          `run \`postback migrate --pg <url> --schema ${schema}\``,
      );
    }
  } catch (error) {
    await outbox.close();
    throw error;
  }
  return {
    outbox,
    describe: `postgres ${where} (schema ${schema})`,
    wake: (wakeUp) => outbox.subscribe(wakeUp),
    // Shares the outbox's pool (the store does not close a pool it was given).
    clicks: () => createPostgresClickStore({ pool: outbox.pool, schema }),
  };
}
