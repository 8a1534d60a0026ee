/**
 * LISTEN/NOTIFY wake-ups: one connection per outbox listens on the schema's channel and calls every
 * subscriber when a job is enqueued (the NOTIFY is sent by the enqueueing statement, so it arrives only
 * when the app's transaction commits). Polling remains the fallback: a lost connection is re-opened with
 * a delay, and subscribers are woken after each reconnect, since notifications sent meanwhile are lost.
 */

import type { PoolLike, Queryable } from './queryable.ts';
import { quoteIdent } from './schema-name.ts';

/** A checked-out connection that can receive notifications. */
type ListenConnection = Queryable & {
  release(err?: Error | boolean): void;
  on(event: 'notification', listener: (message: unknown) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
};

/**
 * What `subscribe` returns: call it to stop; `ready` resolves once LISTEN is in effect.
 * @example
 * ```ts
 * const stop = outbox.subscribe(wakeUp);
 * await stop.ready;
 * stop();
 * ```
 */
export interface Subscription {
  (): void;
  /** Resolves when the listening connection is up (the first time). Never rejects: errors go to `onError`. */
  ready: Promise<void>;
}

/** Options of {@link createNotifyListener}. */
export interface NotifyListenerOptions {
  pool: PoolLike;
  channel: string;
  /** Called with connection errors; the listener keeps retrying meanwhile. */
  onError: (err: unknown) => void;
  /** Delay before re-opening a lost listening connection. */
  reconnectMs: number;
}

/** Fans the schema's notifications out to subscribers, holding one connection while any exist. */
export interface NotifyListener {
  subscribe(onWake: () => void): Subscription;
  close(): Promise<void>;
}

/**
 * Creates the listener of one outbox (internal; used through `outbox.subscribe`).
 *
 * @example
 * ```ts
 * const listener = createNotifyListener({ pool, channel: 'postback_postback', onError: console.error, reconnectMs: 1000 });
 * const stop = listener.subscribe(() => dispatcher.wake());
 * ```
 */
export function createNotifyListener(options: NotifyListenerOptions): NotifyListener {
  const subscribers = new Set<() => void>();
  let connection: ListenConnection | null = null;
  let starting: Promise<void> | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let generation = 0;
  let closed = false;

  const wakeAll = () => {
    for (const wake of [...subscribers]) {
      try {
        wake();
      } catch (err) {
        options.onError(err);
      }
    }
  };

  const drop = (err?: Error) => {
    const current = connection;
    connection = null;
    generation += 1;
    if (current !== null) {
      current.release(err ?? true);
    }
  };

  const scheduleRetry = () => {
    if (closed || subscribers.size === 0 || retryTimer !== null) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void start(true);
    }, options.reconnectMs);
    retryTimer.unref?.();
  };

  const start = (isReconnect: boolean): Promise<void> => {
    if (starting !== null) return starting;
    starting = (async () => {
      const myGeneration = ++generation;
      try {
        const client = (await options.pool.connect()) as ListenConnection;
        if (closed || subscribers.size === 0 || myGeneration !== generation) {
          client.release(true);
          return;
        }
        client.on('error', (err: Error) => {
          if (connection !== client) return;
          options.onError(err);
          drop(err);
          scheduleRetry();
        });
        client.on('notification', (message: unknown) => {
          if ((message as { channel?: string }).channel === options.channel) wakeAll();
        });
        await client.query(`LISTEN ${quoteIdent(options.channel)}`);
        connection = client;
        if (isReconnect) wakeAll();
      } catch (err) {
        options.onError(err);
        scheduleRetry();
      }
    })().finally(() => {
      starting = null;
    });
    return starting;
  };

  const stop = () => {
    if (retryTimer !== null) clearTimeout(retryTimer);
    retryTimer = null;
    drop();
  };

  return {
    subscribe(onWake) {
      if (closed) throw new Error('This outbox is closed');
      // A function identity per subscription, so subscribing the same callback twice is two subscriptions.
      const entry = () => onWake();
      subscribers.add(entry);
      const ready = connection !== null ? Promise.resolve() : start(false);
      const unsubscribe = (() => {
        if (!subscribers.delete(entry)) return;
        if (subscribers.size === 0) stop();
      }) as Subscription;
      unsubscribe.ready = ready;
      return unsubscribe;
    },
    async close() {
      closed = true;
      subscribers.clear();
      await starting;
      stop();
    },
  };
}

/** Decides, per enqueue, whether it notifies inside its transaction (see `DEFAULT_NOTIFY_COALESCE_MS`). */
export interface NotifyGate {
  /** True: notify in this enqueue's transaction. False: call {@link NotifyGate.skipped} once it is written. */
  take(): boolean;
  /** An enqueue that did not notify has been written: make sure a NOTIFY follows it. */
  skipped(): void;
  close(): void;
}

/**
 * Leading-edge notify with a trailing one: the first enqueue of a window notifies at its commit; the
 * others of the window are covered by one NOTIFY sent `windowMs` after the last of them was written,
 * outside any transaction (time for the caller to commit; if it commits later still, workers find the job
 * at their next claim or poll). Under steady load the leading notifications keep workers awake.
 *
 * @example
 * ```ts
 * const gate = createNotifyGate(25, () => pool.query('SELECT pg_notify($1, $2)', [channel, '']));
 * const notify = gate.take();
 * await tx.query(insertSql, [...values, notify]);
 * if (!notify) gate.skipped();
 * ```
 */
export function createNotifyGate(windowMs: number, sendTrailing: () => void): NotifyGate {
  let lastLeading = Number.NEGATIVE_INFINITY;
  let trailing: ReturnType<typeof setTimeout> | null = null;
  let closed = false;
  return {
    take() {
      // Real elapsed time, not the injected clock: this is about lock contention, not job times.
      const t = performance.now();
      if (windowMs === 0 || t - lastLeading >= windowMs) {
        lastLeading = t;
        return true;
      }
      return false;
    },
    skipped() {
      if (closed) return;
      if (trailing !== null) clearTimeout(trailing);
      trailing = setTimeout(() => {
        trailing = null;
        sendTrailing();
      }, windowMs);
      trailing.unref?.();
    },
    close() {
      closed = true;
      if (trailing !== null) clearTimeout(trailing);
      trailing = null;
    },
  };
}
