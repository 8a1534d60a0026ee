/**
 * A `ClickStore` on Postgres: server-side clicks keyed by visitor or customer id, in the `clicks` table of
 * the same schema as the outbox (created by the same migration). A click older than the confirmation
 * window is never returned and is deleted by `sweep`.
 */
import { type ClickStamp, type ClickStore, type EpochMs, OutboxClosedError } from '@postback/core';
import { type PostgresClickStoreOptions, resolveClickStoreOptions } from './options.ts';
import { run } from './queryable.ts';
import { quoteIdent } from './schema-name.ts';

/**
 * A {@link ClickStore} on Postgres.
 * @example
 * ```ts
 * const clicks: PostgresClickStore = createPostgresClickStore({ pool });
 * ```
 */
export interface PostgresClickStore extends ClickStore {
  /** The schema holding the `clicks` table. */
  readonly schema: string;
}

/**
 * Longest key accepted (visitor or customer ids).
 * @defaultValue 255
 * @example
 * ```ts
 * if (customerId.length <= MAX_CLICK_KEY_LENGTH) await clicks.put(customerId, click);
 * ```
 */
export const MAX_CLICK_KEY_LENGTH = 255;

function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_CLICK_KEY_LENGTH) {
    throw new TypeError(`key must be a non-empty string of at most ${MAX_CLICK_KEY_LENGTH} characters`);
  }
  return key;
}

function checkClick(click: unknown): ClickStamp {
  const c = click as ClickStamp | null;
  if (typeof c !== 'object' || c === null || typeof c.token !== 'string' || c.token.length === 0) {
    throw new TypeError('click.token must be a non-empty string');
  }
  if (!Number.isSafeInteger(c.clickedAt) || c.clickedAt < 0) {
    throw new TypeError('click.clickedAt must be a non-negative integer of epoch milliseconds');
  }
  return { token: c.token, clickedAt: c.clickedAt };
}

/**
 * Creates a Postgres click store. Run `migrate` first (it creates the `clicks` table with the jobs).
 *
 * @example
 * ```ts
 * const clicks = createPostgresClickStore({ pool, schema: 'postback' });
 * await clicks.put(customerId, click);
 * const stamp = await clicks.get(customerId, Date.now());
 * ```
 */
export function createPostgresClickStore(options: PostgresClickStoreOptions): PostgresClickStore {
  const { pool, ownsPool, schema, confirmWindowMs } = resolveClickStoreOptions(options);
  const s = quoteIdent(schema);
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new OutboxClosedError(`the Postgres click store in schema ${schema}`);
  };
  const q = (text: string, values: unknown[]) => run(pool, schema, text, values);
  // Oldest click time still inside the window at `now`.
  const horizon = (now: EpochMs) => now - confirmWindowMs;

  const store = {
    schema,
    async put(key: string, click: ClickStamp): Promise<void> {
      assertOpen();
      // The same token seen again keeps its first time (the earlier one); another token replaces it.
      const stamp = checkClick(click);
      await q(
        `INSERT INTO ${s}.clicks (key, token, clicked_at) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET
           clicked_at = CASE WHEN clicks.token = excluded.token
             THEN LEAST(clicks.clicked_at, excluded.clicked_at) ELSE excluded.clicked_at END,
           token = excluded.token`,
        [checkKey(key), stamp.token, stamp.clickedAt],
      );
    },
    async get(key: string, now: EpochMs): Promise<ClickStamp | null> {
      assertOpen();
      const row = (
        await q(`SELECT token, clicked_at FROM ${s}.clicks WHERE key = $1 AND clicked_at >= $2`, [
          checkKey(key),
          horizon(now),
        ])
      ).rows[0];
      return row === undefined ? null : { token: String(row.token), clickedAt: Number(row.clicked_at) };
    },
    async delete(key: string): Promise<void> {
      assertOpen();
      await q(`DELETE FROM ${s}.clicks WHERE key = $1`, [checkKey(key)]);
    },
    async sweep(now: EpochMs): Promise<number> {
      assertOpen();
      return (await q(`DELETE FROM ${s}.clicks WHERE clicked_at < $1`, [horizon(now)])).rowCount ?? 0;
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (ownsPool) await pool.end();
    },
    toJSON: () => ({ type: 'PostgresClickStore', schema }),
    [Symbol.for('nodejs.util.inspect.custom')]: () => `PostgresClickStore { schema: '${schema}' }`,
  };
  return store;
}
