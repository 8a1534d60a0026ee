/**
 * The shop's backend (SQLite outbox `POSTBACK_DB`, and the in-process Dispatcher unless
 * `POSTBACK_WORKER=off`), one per server process. Next loads `instrumentation.ts` and each route in
 * separate module graphs, so the instance lives on `globalThis`, not in a module variable.
 */
import { openShopBackend, readShopConfig, type ShopBackend } from '@postback/example-shop-kit';

const KEY = Symbol.for('@postback/example-next-shop/backend');
const slot = globalThis as unknown as Record<symbol, ShopBackend | undefined>;

/**
 * The process's backend, opened on first use from the environment.
 *
 * @throws {ShopConfigError} naming the missing or invalid environment variable.
 * @example
 * ```ts
 * const { outbox } = shopBackend();
 * ```
 */
export function shopBackend(): ShopBackend {
  slot[KEY] ??= openShopBackend(readShopConfig(process.env));
  return slot[KEY];
}
