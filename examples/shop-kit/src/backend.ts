/**
 * The shop's postback backend: a SQLite outbox (durable before the shopper gets an answer) and, unless
 * `POSTBACK_WORKER=off`, a Dispatcher in the same process that delivers it to the ad service.
 */
import { createClient } from '@postback/client';
import { createDispatcher, type Dispatcher, type Outbox } from '@postback/core';
import { createSqliteOutbox } from '@postback/sqlite';
import type { ShopConfig } from './config.ts';

/** The outbox, the optional in-process worker, and how to shut both down. */
export interface ShopBackend {
  outbox: Outbox;
  dispatcher: Dispatcher | null;
  /** Tells the worker a job was enqueued, so it does not wait for its next poll. */
  enqueued(): void;
  close(): Promise<void>;
}

/** What a shop's tests may set besides the environment. */
export interface ShopBackendOptions {
  /**
   * The clock of the outbox and the Dispatcher (and, in the shops, of click capture): a test gives the
   * sandbox's, so moving the sandbox clock moves the shop's windows too. @defaultValue `Date.now`
   */
  now?: () => number;
}

/**
 * Opens the outbox and starts the worker.
 *
 * @example
 * ```ts
 * const backend = openShopBackend(readShopConfig(process.env));
 * await backend.close();
 * ```
 */
export function openShopBackend(config: ShopConfig, options: ShopBackendOptions = {}): ShopBackend {
  const now = options.now ?? Date.now;
  const outbox = createSqliteOutbox({ filename: config.dbFile, now });
  if (!config.worker) return { outbox, dispatcher: null, enqueued() {}, close: () => outbox.close() };
  const client = createClient({ baseUrl: config.apiUrl, apiKey: config.apiKey });
  const dispatcher = createDispatcher({ outbox, client, now });
  dispatcher.on('dead', ({ job, reason }) =>
    console.warn(`postback dead: ${job.kind} ${job.orderId}: ${reason}`),
  );
  dispatcher.on('paused', ({ reason }) => console.warn(`postbacks paused: ${reason}`));
  dispatcher.start();
  return {
    outbox,
    dispatcher,
    enqueued: () => dispatcher.wake(),
    async close() {
      await dispatcher.stop({ timeoutMs: 5_000 });
      await client.close();
      await outbox.close();
    },
  };
}
