/**
 * The Postgres ClickStore: the core ClickStore conformance suite, each test in its own schema, plus what
 * is particular to Postgres (shared table across stores of one schema, keys of other stores untouched).
 */
import { describeClickStore } from '@postback/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresClickStore } from '../src/index.ts';
import { freshSchema, testPool } from './pg-test-db.ts';

const pool = testPool();
afterAll(() => pool.end());

describeClickStore('postgres', async ({ policy }) => {
  const { schema, drop } = await freshSchema(pool);
  return { store: createPostgresClickStore({ pool, schema, policy }), cleanup: drop };
});

describe('postgres click store', () => {
  it('shares clicks between processes through the database (a second store sees the first one’s put)', async () => {
    const { schema, drop } = await freshSchema(pool);
    const other = testPool(1);
    try {
      const a = createPostgresClickStore({ pool, schema });
      const b = createPostgresClickStore({ pool: other, schema });
      const now = Date.now();
      await a.put('customer_42', { token: 'tok_shared_1', clickedAt: now - 1000 });
      expect(await b.get('customer_42', now)).toEqual({ token: 'tok_shared_1', clickedAt: now - 1000 });
    } finally {
      await other.end();
      await drop();
    }
  });

  it('opens and ends its own pool from a connection string', async () => {
    const { schema, drop } = await freshSchema(pool);
    try {
      const store = createPostgresClickStore({
        connectionString: 'postgres://postgres@127.0.0.1:5432/test',
        schema,
      });
      await store.put('k', { token: 'tok_own_pool', clickedAt: Date.now() });
      expect(await store.get('k', Date.now())).not.toBeNull();
      await store.close();
      await expect(store.get('k', Date.now())).rejects.toThrow(/closed/);
    } finally {
      await drop();
    }
  });
});
