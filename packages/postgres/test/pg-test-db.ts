/**
 * Test helpers: the real PostgreSQL server of the machine (override with POSTBACK_TEST_PG_URL), and a
 * fresh, randomly named schema per test that is dropped afterwards, so tests never share state.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../src/index.ts';

/** The test database. */
export const TEST_PG_URL = process.env.POSTBACK_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A pool on the test database; small, since the machine's connection limit is shared. */
export function testPool(max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: TEST_PG_URL, max });
  pool.on('error', () => {});
  return pool;
}

/** A schema name no other test uses. */
export function randomSchema(prefix = 'pbt'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Creates and migrates a fresh schema; returns it with the function that drops it. */
export async function freshSchema(
  pool: pg.Pool,
  prefix?: string,
): Promise<{ schema: string; drop: () => Promise<void> }> {
  const schema = randomSchema(prefix);
  await migrate(pool, { schema });
  return { schema, drop: () => dropSchema(pool, schema) };
}

/** Drops a test schema and everything in it. */
export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
