/**
 * LISTEN/NOTIFY wake-ups: one connection per outbox listens on the schema's channel and calls every
 * subscriber when a job is enqueued (the NOTIFY is sent by the enqueueing statement, so it arrives only
 * when the app's transaction commits). Polling remains the fallback: a lost connection is re-opened after
 * a backoff with jitter, and subscribers are woken after each reconnect, since notifications sent
 * meanwhile are lost.
 *
 * Every path gives its connection back: a LISTEN that fails (the backend was terminated between
 * `connect()` and LISTEN, say) releases the client with the error, so `pg` destroys it instead of the pool
 * losing one slot per failure until `claim`, `stats` and `close` wait forever for a free connection.
 */
import { OutboxClosedError } from '@postback/core';
import { backoffDelay } from '@postback/core/store';
import { connectListening, type PoolLike, type Queryable } from './queryable.ts';
import { quoteIdent } from './schema-name.ts';

/** A checked-out connection that can receive notifications. */
type ListenConnection = Queryable & {
  release(err?: Error | boolean): void;
  on(event: 'notification', listener: (message: unknown) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
};

/**
 * What `subscribe` returns: call it to stop; `ready` resolves once the first attempt to listen ended.
 * @example
 * ```ts
 * const stop = outbox.subscribe(wakeUp);
 * await stop.ready;
 * stop();
 * ```
 */
export interface Subscription {
  (): void;
  /**
   * Resolves when the first attempt to listen ended: LISTEN is in effect, or it failed (reported to
   * `onError`) and the listener keeps retrying with backoff. Never rejects.
   */
  ready: Promise<void>;
}

/** Options of {@link createNotifyListener}. */
export interface NotifyListenerOptions {
  pool: PoolLike;
  channel: string;
  /** Called with connection errors; the listener keeps retrying meanwhile. Never called after `close`. */
  onError: (err: unknown) => void;
  /** Shortest delay before re-opening a lost listening connection (see {@link reconnectDelay}). */
  reconnectMs: number;
  /** Longest delay before re-opening it, however many attempts failed in a row. */
  reconnectMaxMs: number;
  /** Uniform random source in [0, 1) for the jitter. @defaultValue Math.random */
  random?: () => number;
}

/** Fans the schema's notifications out to subscribers, holding one connection while any exist. */
export interface NotifyListener {
  subscribe(onWake: () => void): Subscription;
  /** Stops listening and gives the connection back; answers at once, even while a connect is pending. */
  close(): Promise<void>;
}

/**
 * Delay before the next attempt to listen after `failures` attempts in a row failed (1 after the first):
 * `baseMs` plus a full-jitter exponential share (core's `backoffDelay`: uniform in
 * [0, min(maxMs, baseMs · 2^(failures−1)))), never more than `maxMs`. The floor keeps a dead server from
 * being hammered; the jitter keeps many workers that lost the server together from reconnecting together.
 *
 * @example
 * ```ts
 * reconnectDelay(3, { baseMs: 1000, maxMs: 30_000, random: Math.random }); // in [1 s, 5 s)
 * ```
 */
export function reconnectDelay(
  failures: number,
  options: { baseMs: number; maxMs: number; random: () => number },
): number {
  const jitter = backoffDelay(failures, options);
  return Math.min(options.maxMs, options.baseMs + jitter);
}

/**
 * Creates the listener of one outbox (internal; used through `outbox.subscribe`).
 *
 * @example
 * ```ts
 * const listener = createNotifyListener({ pool, channel: 'postback_postback', onError: console.error, reconnectMs: 1000, reconnectMaxMs: 30_000 });
 * const stop = listener.subscribe(() => dispatcher.wake());
 * ```
 */
export function createNotifyListener(options: NotifyListenerOptions): NotifyListener {
  const random = options.random ?? Math.random;
  const subscribers = new Set<() => void>();
  /** The connection LISTEN is in effect on. */
  let connection: ListenConnection | null = null;
  /** The connection whose LISTEN is in flight (released by `close` so it cannot hold it up). */
  let listening: ListenConnection | null = null;
  let starting: Promise<void> | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let failures = 0;
  let generation = 0;
  let closed = false;
  const released = new WeakSet<object>();

  /** Gives a client back once; with an error (or `true`) pg destroys it rather than reuse it. */
  const release = (client: ListenConnection, err: Error | true) => {
    if (released.has(client)) return;
    released.add(client);
    try {
      client.release(err);
    } catch (releaseErr) {
      if (!closed) options.onError(releaseErr);
    }
  };

  const wanted = () => !closed && subscribers.size > 0;

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
    if (current !== null) release(current, err ?? true);
  };

  const scheduleRetry = () => {
    if (!wanted() || retryTimer !== null) return;
    failures += 1;
    const delay = reconnectDelay(failures, {
      baseMs: options.reconnectMs,
      maxMs: options.reconnectMaxMs,
      random,
    });
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void start(true);
    }, delay);
    retryTimer.unref?.();
  };

  /** An attempt failed: report it (unless nobody wants the connection any more) and try again later. */
  const failed = (err: unknown) => {
    if (!wanted()) return;
    options.onError(err);
    scheduleRetry();
  };

  const start = (isReconnect: boolean): Promise<void> => {
    if (starting !== null) return starting;
    starting = (async () => {
      const myGeneration = ++generation;
      const current = () => wanted() && myGeneration === generation;
      let client: ListenConnection | undefined;
      // Listening from the moment of checkout (see connectListening): an error before LISTEN is ignored
      // here, since the LISTEN then fails and reports it; once listening, the connection is replaced.
      const onClientError = (err: Error) => {
        if (client === undefined || connection !== client) return;
        options.onError(err);
        drop(err);
        scheduleRetry();
      };
      try {
        client = (await connectListening(options.pool, onClientError)) as unknown as ListenConnection;
      } catch (err) {
        failed(err);
        return;
      }
      if (!current()) {
        release(client, true);
        return;
      }
      client.on('notification', (message: unknown) => {
        if ((message as { channel?: string }).channel === options.channel) wakeAll();
      });
      listening = client;
      try {
        await client.query(`LISTEN ${quoteIdent(options.channel)}`);
      } catch (err) {
        release(client, err instanceof Error ? err : new Error(String(err)));
        failed(err);
        return;
      } finally {
        listening = null;
      }
      if (!current()) {
        release(client, true);
        return;
      }
      connection = client;
      failures = 0;
      if (isReconnect) wakeAll();
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
      if (closed) throw new OutboxClosedError(`the Postgres outbox listening on ${options.channel}`);
      // A function identity per subscription, so subscribing the same callback twice is two subscriptions.
      const entry = () => onWake();
      subscribers.add(entry);
      // Listening, or waiting out a backoff: do not start another attempt ahead of it.
      const ready = connection !== null || retryTimer !== null ? Promise.resolve() : start(false);
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
      stop();
      // A LISTEN in flight is cut short (its connection destroyed); a connect still waiting for a pool slot
      // is not awaited: its client is given back as soon as it arrives.
      if (listening !== null) release(listening, new Error('the outbox was closed'));
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
