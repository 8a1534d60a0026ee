/**
 * Options: one strict schema, clear errors naming the option, and no connection secret in what the
 * outbox prints.
 */
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresClickStore, createPostgresOutbox } from '../src/index.ts';
import { testPool } from './pg-test-db.ts';

const pool = testPool(1);
afterAll(() => pool.end());

describe('createPostgresOutbox options', () => {
  it('rejects an unknown option by name (a typo is not silently ignored)', () => {
    expect(() => createPostgresOutbox({ pool, shema: 'x' } as never)).toThrow(
      expect.objectContaining({ name: 'OptionsError', field: 'shema' }),
    );
  });

  it('requires exactly one of pool and connectionString', () => {
    expect(() => createPostgresOutbox({})).toThrow(/exactly one of pool and connectionString/);
    expect(() => createPostgresOutbox({ pool, connectionString: 'postgres://x@localhost/db' })).toThrow(
      /exactly one/,
    );
  });

  it('rejects a pool that cannot hand out connections, naming the option', () => {
    expect(() => createPostgresOutbox({ pool: { query: async () => ({ rows: [] }) } as never })).toThrow(
      expect.objectContaining({ field: 'pool' }),
    );
  });

  it('rejects an unsafe schema name and a policy whose margin exceeds its window', () => {
    expect(() => createPostgresOutbox({ pool, schema: 'public; drop' })).toThrow(
      expect.objectContaining({ field: 'schema' }),
    );
    expect(() =>
      createPostgresOutbox({ pool, policy: { confirmWindowMs: 1000, safetyMarginMs: 2000 } }),
    ).toThrow(expect.objectContaining({ field: 'policy' }));
  });

  it('rejects a reconnect ceiling below the reconnect floor, naming reconnectMaxMs', () => {
    expect(() => createPostgresOutbox({ pool, reconnectMs: 5000, reconnectMaxMs: 1000 })).toThrow(
      expect.objectContaining({ name: 'OptionsError', field: 'reconnectMaxMs' }),
    );
    expect(() => createPostgresOutbox({ pool, reconnectMaxMs: 0 })).toThrow(
      expect.objectContaining({ field: 'reconnectMaxMs' }),
    );
  });

  it('rejects a preparedStatements that is not a boolean, naming it', () => {
    expect(() => createPostgresOutbox({ pool, preparedStatements: 'no' as never })).toThrow(
      expect.objectContaining({ name: 'OptionsError', field: 'preparedStatements' }),
    );
  });

  it('never prints the password of its connection string (inspect, JSON, errors)', async () => {
    const secret = 'S3cr3t-pa55word';
    const outbox = createPostgresOutbox({
      connectionString: `postgres://postgres:${secret}@127.0.0.1:1/test`,
      schema: 'postback',
    });
    const clicks = createPostgresClickStore({
      connectionString: `postgres://postgres:${secret}@127.0.0.1:1/test`,
    });
    try {
      expect(inspect(outbox, { depth: 10 })).not.toContain(secret);
      expect(JSON.stringify(outbox)).not.toContain(secret);
      expect(inspect(clicks, { depth: 10 })).not.toContain(secret);
      const error = await outbox.stats(Date.now()).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(Error);
      expect(inspect(error, { depth: 10 })).not.toContain(secret);
    } finally {
      await outbox.close();
      await clicks.close();
    }
  });
});
