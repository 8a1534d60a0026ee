/**
 * The core Outbox conformance suite against the real Postgres server, each test in its own fresh schema.
 */
import { describeOutbox } from '@postback/core/testing';
import { afterAll } from 'vitest';
import { createPostgresOutbox } from '../src/index.ts';
import { freshSchema, testPool } from './pg-test-db.ts';

const pool = testPool();
afterAll(() => pool.end());

describeOutbox('postgres', async ({ now, policy }) => {
  const { schema, drop } = await freshSchema(pool);
  const outbox = createPostgresOutbox({ pool, schema, now, policy });
  return { outbox, cleanup: drop };
});
