/**
 * The one place where `postback worker` meets the Dispatcher of `@postback/core` and the client of
 * `@postback/client`: builds both from the worker's flags, and names the Dispatcher events the worker
 * logs. Kept apart from the command so the command stays about flags, signals and exit codes.
 */
import { createClient, DEFAULT_TIMEOUT_MS } from '@postback/client';
import {
  type AccountPause,
  type ConversionsClient,
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
  /** The accounts paused now (per-account keys: their key was refused or is unknown), oldest first. */
  pausedAccounts(): Promise<readonly AccountPause[]>;
  on(event: DispatcherEventName, listener: (payload: unknown) => void): void;
  /** Releases what the setup opened (the client's kept-alive connections). */
  close(): Promise<void>;
}

/** Everything the worker's flags decide. `undefined` means the Dispatcher's (or client's) default. */
export interface WorkerSetup {
  outbox: Outbox;
  baseUrl: string;
  /** `POSTBACK_API_KEY`: the key of jobs without an account (undefined: none, with per-account keys). */
  apiKey: string | undefined;
  /**
   * Per-account keys (`--keys-file`, `POSTBACK_API_KEY__<ACCOUNT>`): the Dispatcher's `apiKeyFor`, so a
   * 401/403 or a missing key pauses only that account. Undefined: every job uses `apiKey`.
   */
  apiKeyFor: ((account: string | null) => string | undefined) | undefined;
  /** Every key in use or once used (per-account keys): what the client's `redact` scrubs. */
  secrets: () => readonly string[];
  /** How long a refused key pauses delivery (or its account) before a probe; undefined: the default. */
  authPauseMs: number | undefined;
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
  { name: 'account-paused', level: 'warn' },
  { name: 'account-resumed', level: 'info' },
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
    // With per-account keys the Dispatcher passes each job's key with its request (`{ apiKey }`); the
    // client's own key (POSTBACK_API_KEY) may then be absent.
    const client = createClient({
      baseUrl: setup.baseUrl,
      ...(setup.apiKey === undefined ? {} : { apiKey: setup.apiKey }),
      ...(setup.requestTimeoutMs === undefined ? {} : { timeout: setup.requestTimeoutMs }),
    });
    // The client scrubs its own key and each request's; this also scrubs every key the worker has seen.
    const conversions: ConversionsClient = {
      conversions: client.conversions,
      redact: (textValue) => {
        let out = client.redact(textValue);
        for (const secret of setup.secrets())
          if (secret.length > 0) out = out.split(secret).join('[redacted]');
        return out;
      },
    };
    const options: DispatcherOptions = { outbox: setup.outbox, client: conversions, now: setup.now };
    if (setup.apiKeyFor !== undefined) options.apiKeyFor = setup.apiKeyFor;
    if (setup.authPauseMs !== undefined) options.authPauseMs = setup.authPauseMs;
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
      pausedAccounts: async () => (await dispatcher.metrics()).pausedAccounts,
      on: (event, listener) => {
        dispatcher.on(event, listener);
      },
      close: () => client.close(),
    };
  },
};
