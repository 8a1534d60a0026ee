/**
 * `createSqliteClickStore`: server-side clicks on SQLite, keyed by a visitor or customer id, so a click can
 * follow a shopper across devices once they log in. A click expires when it is older than the confirmation
 * window (it could no longer be confirmed); `sweep` deletes expired clicks in bounded chunks. Puts are
 * group-committed like the outbox's writes (landing pages put on every ad click).
 */

import type { DatabaseSync } from 'node:sqlite';
import { type ClickStamp, type ClickStore, type EpochMs, OutboxClosedError } from '@postback/core';
import { parseOptions, validateClickToken } from '@postback/core/store';
import { openDatabase } from './database.ts';
import { createGroupCommit } from './group-commit.ts';
import { type SqliteClickStoreOptions, sqliteClickStoreOptionsSchema } from './options.ts';
import { migrate } from './schema.ts';

/**
 * Longest key accepted (a visitor id, customer id or hash of one).
 * @defaultValue 255
 *
 * @example
 * ```ts
 * await clicks.put(customerId.slice(0, MAX_CLICK_KEY_LENGTH), click);
 * ```
 */
export const MAX_CLICK_KEY_LENGTH = 255;

/** Rows deleted per transaction by `sweep`, so a large sweep never holds the write lock for long. */
const SWEEP_CHUNK = 5_000;

/**
 * A SQLite click store: the `ClickStore` interface plus the window it expires clicks by.
 *
 * @example
 * ```ts
 * const clicks: SqliteClickStore = createSqliteClickStore({ filename: 'postback.db' });
 * clicks.windowMs; // 604_800_000
 * ```
 */
export interface SqliteClickStore extends ClickStore {
  /** How long after its click a click is kept (the confirmation window). */
  readonly windowMs: number;
}

function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_CLICK_KEY_LENGTH) {
    throw new TypeError(`key must be a non-empty string of at most ${MAX_CLICK_KEY_LENGTH} characters`);
  }
  return key;
}

function checkEpoch(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(
      `${field} must be a non-negative integer of epoch milliseconds, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * Opens a click store on a SQLite file, or on an open `DatabaseSync` shared with other code.
 *
 * @example
 * ```ts
 * import { createSqliteClickStore } from '@postback/sqlite';
 *
 * const clicks = createSqliteClickStore({ filename: 'postback.db' });
 * await clicks.put(customerId, { token, clickedAt: Date.now() });
 * const click = await clicks.get(customerId, Date.now());
 * ```
 */
export function createSqliteClickStore(options: SqliteClickStoreOptions): SqliteClickStore {
  const parsed = parseOptions(sqliteClickStoreOptionsSchema, options);
  const windowMs = parsed.policy.confirmWindowMs;
  const owned = parsed.database === undefined;
  let db: DatabaseSync;
  if (parsed.database === undefined) {
    db = openDatabase(parsed.filename as string, parsed);
  } else {
    db = parsed.database;
    migrate(db);
  }
  const writes = createGroupCommit(db, { maxBatchSize: parsed.maxBatchSize });
  const upsert = db.prepare(
    'INSERT INTO clicks (key, token, clicked_at) VALUES (?, ?, ?) ' +
      // The same token seen again keeps its first time; another token replaces the click.
      'ON CONFLICT (key) DO UPDATE SET clicked_at = CASE WHEN clicks.token = excluded.token ' +
      'THEN MIN(clicks.clicked_at, excluded.clicked_at) ELSE excluded.clicked_at END, token = excluded.token',
  );
  const select = db.prepare('SELECT token, clicked_at FROM clicks WHERE key = ? AND clicked_at >= ?');
  const remove = db.prepare('DELETE FROM clicks WHERE key = ?');
  const sweepChunk = db.prepare(
    'DELETE FROM clicks WHERE key IN (SELECT key FROM clicks WHERE clicked_at < ? ORDER BY clicked_at LIMIT ?)',
  );
  let closed = false;

  function write<T>(check: () => void, apply: () => T): Promise<T> {
    if (closed) return Promise.reject(new OutboxClosedError('the SQLite click store'));
    try {
      check();
    } catch (error) {
      return Promise.reject(error);
    }
    return writes.run(apply);
  }

  return {
    windowMs,

    put(key: string, click: ClickStamp) {
      return write(
        () => {
          checkKey(key);
          if (typeof click !== 'object' || click === null)
            throw new TypeError('click must be an object { token, clickedAt }');
          validateClickToken(click.token, 'click.token');
          checkEpoch(click.clickedAt, 'click.clickedAt');
        },
        () => void upsert.run(key, click.token, click.clickedAt),
      );
    },

    async get(key: string, now: EpochMs) {
      if (closed) throw new OutboxClosedError('the SQLite click store');
      checkKey(key);
      checkEpoch(now, 'now');
      // A click exactly `windowMs` old is still inside the window; one millisecond more and it is not.
      const row = select.get(key, now - windowMs) as { token: string; clicked_at: number } | undefined;
      return row === undefined ? null : { token: row.token, clickedAt: row.clicked_at };
    },

    delete(key: string) {
      return write(
        () => checkKey(key),
        () => void remove.run(key),
      );
    },

    async sweep(now: EpochMs) {
      checkEpoch(now, 'now');
      let total = 0;
      for (;;) {
        const deleted = await write(
          () => {},
          () => Number(sweepChunk.run(now - windowMs, SWEEP_CHUNK).changes),
        );
        total += deleted;
        if (deleted < SWEEP_CHUNK) return total;
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      writes.flush();
      if (owned) db.close();
    },
  };
}
