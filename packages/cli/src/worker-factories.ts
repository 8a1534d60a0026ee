/**
 * The one place where `postback worker` meets the Dispatcher of `@postback/core` and the client of
 * `@postback/client`: builds both from the worker's flags, and names the Dispatcher events the worker
 * logs. Kept apart from the command so the command stays about flags, signals and exit codes.
 */
import { createClient, DEFAULT_TIMEOUT_MS } from '@postback/client';
import {
  createDispatcher,
  DEFAULT_BACKOFF,
  DEFAULT_CONCURRENCY,
  DEFAULT_LEASE_MS,
  DEFAULT_POLL_INTERVAL_MS,
  type DispatcherEventName,
  type DispatcherOptions,
  type Outbox,
} from '@postback/core';
import type { LogLevel } from './log.ts';

/** What the worker needs of a Dispatcher. */
export interface DispatcherHandle {
  start(): void;
  /** Stops claiming, waits for in-flight sends up to `timeoutMs`, releases the rest (nothing stays inflight). */
  stop(options: { timeoutMs: number }): Promise<{ released: number }>;
  /** Claims one batch and delivers it (without `start()`): how many jobs it claimed. */
  runOnce(): Promise<{ claimed: number }>;
  /** Whether delivery is paused after a 401/403. */
  paused(): boolean;
  on(event: DispatcherEventName, listener: (payload: unknown) => void): void;
  /** Releases what the setup opened (the client's kept-alive connections). */
  close(): Promise<void>;
}

/** Everything the worker's flags decide. `undefined` means the Dispatcher's (or client's) default. */
export interface WorkerSetup {
  outbox: Outbox;
  baseUrl: string;
  apiKey: string;
  now: () => number;
  /** The backend's early wake-up (Postgres LISTEN/NOTIFY; SQS interrupts its long poll at stop). */
  wake: ((wakeUp: () => void) => () => void) | undefined;
  concurrency: number | undefined;
  leaseMs: number | undefined;
  pollMs: number | undefined;
  backoffBaseMs: number | undefined;
  backoffMaxMs: number | undefined;
  backoffMinMs: number | undefined;
  requestTimeoutMs: number | undefined;
}

/** The tuning flags of a {@link WorkerSetup}. */
export type WorkerTuning = Pick<
  WorkerSetup,
  | 'concurrency'
  | 'leaseMs'
  | 'pollMs'
  | 'backoffBaseMs'
  | 'backoffMaxMs'
  | 'backoffMinMs'
  | 'requestTimeoutMs'
>;

/**
 * The tuning the Dispatcher and client run with: each flag given, else their own default (for the
 * worker's start line: the settings in effect, not only those given).
 *
 * @example
 * ```ts
 * effectiveTuning({ concurrency: 4 }).leaseMs; // DEFAULT_LEASE_MS
 * ```
 */
export function effectiveTuning(tuning: Partial<WorkerTuning>): { [K in keyof WorkerTuning]-?: number } {
  return {
    concurrency: tuning.concurrency ?? DEFAULT_CONCURRENCY,
    leaseMs: tuning.leaseMs ?? DEFAULT_LEASE_MS,
    pollMs: tuning.pollMs ?? DEFAULT_POLL_INTERVAL_MS,
    backoffBaseMs: tuning.backoffBaseMs ?? DEFAULT_BACKOFF.baseMs,
    backoffMaxMs: tuning.backoffMaxMs ?? DEFAULT_BACKOFF.maxMs,
    backoffMinMs: tuning.backoffMinMs ?? DEFAULT_BACKOFF.minMs,
    requestTimeoutMs: tuning.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
}

/** How the worker builds its Dispatcher, and which of its events it logs at which level. */
export interface WorkerFactories {
  events: ReadonlyArray<{ name: DispatcherEventName; level: LogLevel }>;
  createDispatcher(setup: WorkerSetup): Promise<DispatcherHandle>;
}

/**
 * The Dispatcher events the worker logs, with their level: a delivery at debug (the periodic
 * `worker.summary` at info counts them), what needs a look at warn or error.
 */
export const WORKER_EVENTS: WorkerFactories['events'] = [
  { name: 'delivered', level: 'debug' },
  { name: 'retried', level: 'warn' },
  { name: 'dead', level: 'error' },
  { name: 'expired', level: 'error' },
  { name: 'at-risk', level: 'warn' },
  { name: 'paused', level: 'error' },
  { name: 'resumed', level: 'info' },
  { name: 'error', level: 'error' },
];

/**
 * The real Dispatcher and client, configured from the worker's flags.
 *
 * @example
 * ```ts
 * const dispatcher = await realFactories.createDispatcher({ outbox, baseUrl, apiKey, now: Date.now, ... });
 * ```
 */
export const realFactories: WorkerFactories = {
  events: WORKER_EVENTS,
  async createDispatcher(setup) {
    const client = createClient({
      baseUrl: setup.baseUrl,
      apiKey: setup.apiKey,
      ...(setup.requestTimeoutMs === undefined ? {} : { timeout: setup.requestTimeoutMs }),
    });
    const options: DispatcherOptions = { outbox: setup.outbox, client, now: setup.now };
    if (setup.wake !== undefined) options.wake = setup.wake;
    if (setup.concurrency !== undefined) options.concurrency = setup.concurrency;
    if (setup.leaseMs !== undefined) options.leaseMs = setup.leaseMs;
    if (setup.pollMs !== undefined) options.pollIntervalMs = setup.pollMs;
    const backoff = {
      ...(setup.backoffBaseMs === undefined ? {} : { baseMs: setup.backoffBaseMs }),
      ...(setup.backoffMaxMs === undefined ? {} : { maxMs: setup.backoffMaxMs }),
      ...(setup.backoffMinMs === undefined ? {} : { minMs: setup.backoffMinMs }),
    };
    if (Object.keys(backoff).length > 0) options.backoff = backoff;
    let dispatcher: ReturnType<typeof createDispatcher>;
    try {
      dispatcher = createDispatcher(options);
    } catch (error) {
      await client.close();
      throw error;
    }
    return {
      start: () => dispatcher.start(),
      stop: (stopOptions) => dispatcher.stop(stopOptions),
      runOnce: () => dispatcher.runOnce(),
      paused: () => dispatcher.state === 'paused',
      on: (event, listener) => {
        dispatcher.on(event, listener);
      },
      close: () => client.close(),
    };
  },
};
