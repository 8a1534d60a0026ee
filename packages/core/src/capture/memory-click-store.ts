/**
 * A `ClickStore` in process memory: for tests, single-process apps and as the reference the conformance
 * suite is checked against. Lost on restart; use the SQLite or Postgres store in production.
 */
import type { ClickStamp, ClickStore } from '../click.ts';
import { OutboxClosedError } from '../errors.ts';
import { DEFAULT_CONFIRM_WINDOW_MS } from '../policy.ts';

/** Options of {@link createMemoryClickStore}. */
export interface MemoryClickStoreOptions {
  /** Clicks older than this are not returned and are swept. @defaultValue {@link DEFAULT_CONFIRM_WINDOW_MS} */
  confirmWindowMs?: number;
}

/**
 * Creates an in-memory click store.
 *
 * @example
 * ```ts
 * const store = createMemoryClickStore();
 * app.use(postback({ secrets, store, key: (req) => req.session?.customerId }));
 * ```
 */
export function createMemoryClickStore(options: MemoryClickStoreOptions = {}): ClickStore {
  const windowMs = options.confirmWindowMs ?? DEFAULT_CONFIRM_WINDOW_MS;
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) {
    throw new RangeError('confirmWindowMs must be a positive safe integer of milliseconds');
  }
  const clicks = new Map<string, ClickStamp>();
  let closed = false;
  const open = (): void => {
    if (closed) throw new OutboxClosedError('the memory click store');
  };
  return {
    async put(key, click) {
      open();
      if (typeof key !== 'string' || key === '') throw new TypeError('key must be a non-empty string');
      if (typeof click?.token !== 'string' || !Number.isSafeInteger(click.clickedAt)) {
        throw new TypeError('click must be { token: string, clickedAt: integer epoch ms }');
      }
      const kept = clicks.get(key);
      // The same token seen again keeps its first time (see ClickStore.put).
      const clickedAt =
        kept !== undefined && kept.token === click.token
          ? Math.min(kept.clickedAt, click.clickedAt)
          : click.clickedAt;
      clicks.set(key, { token: click.token, clickedAt });
    },
    async get(key, now) {
      open();
      const click = clicks.get(key);
      // "Older than the window" is strict: a click exactly windowMs old is still returned.
      if (click === undefined || now - click.clickedAt > windowMs) return null;
      return { ...click };
    },
    async delete(key) {
      open();
      clicks.delete(key);
    },
    async sweep(now) {
      open();
      let deleted = 0;
      for (const [key, click] of clicks) {
        if (now - click.clickedAt > windowMs) {
          clicks.delete(key);
          deleted++;
        }
      }
      return deleted;
    },
    async close() {
      closed = true;
      clicks.clear();
    },
  };
}
