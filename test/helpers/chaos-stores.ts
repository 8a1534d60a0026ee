/**
 * An outbox for a cross-package chaos run on a given clock (the sandbox's): a SQLite file in its own temp
 * directory, or a fresh schema on the real PostgreSQL server (`POSTBACK_TEST_PG_URL`, else the machine's
 * `test` database). `close()` removes what it made.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Outbox } from '@postback/core';
import { createPostgresOutbox, migrate } from '@postback/postgres';
import { createSqliteOutbox } from '@postback/sqlite';
import pg from 'pg';

/** The test database of the Postgres store. */
export const TEST_PG_URL = process.env.POSTBACK_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The stores a chaos run may use. */
export const CHAOS_STORES = ['sqlite', 'postgres'] as const;
export type ChaosStoreKind = (typeof CHAOS_STORES)[number];

/** An outbox and the function that closes and removes it. */
export interface ChaosStore {
  outbox: Outbox;
  close(): Promise<void>;
}

/**
 * Opens an outbox of `kind` whose clock is `now`.
 *
 * @example
 * ```ts
 * const store = await openChaosStore('postgres', sandbox.now);
 * await store.outbox.confirm(input);
 * await store.close(); // the schema is dropped
 * ```
 */
export async function openChaosStore(kind: ChaosStoreKind, now: () => number): Promise<ChaosStore> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'postback-chaos-'));
    const outbox = createSqliteOutbox({ filename: join(dir, 'postback.db'), now });
    return {
      outbox,
      async close() {
        await outbox.close().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const pool = new pg.Pool({ connectionString: TEST_PG_URL, max: 4 });
  pool.on('error', () => {});
  const schema = `pbchaos_${randomBytes(6).toString('hex')}`;
  await migrate(pool, { schema });
  const outbox = createPostgresOutbox({ pool, schema, now, onError: () => {} });
  return {
    outbox,
    async close() {
      await outbox.close().catch(() => {});
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
    },
  };
}
