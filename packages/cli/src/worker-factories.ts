/**
 * The one place where `postback worker` meets the Dispatcher of `@postback/core` and the client of
 * `@postback/client`: builds both from the worker's flags, and names the Dispatcher events the worker
 * logs. Kept apart from the command so the command stays about flags, signals and exit codes.
 */
import { type ClientOptions, createClient } from '@postback/client';
import {
  type AccountPause,
  type ConversionsClient,
  createDispatcher,
  type DispatcherEventName,
  type DispatcherOptions,
  type RunSummary,
} from '@postback/core';
import type { LogLevel } from './log.ts';

/** What the worker needs of a Dispatcher. */
export interface DispatcherHandle {
  start(): void;
  /** Stops claiming, waits for in-flight sends up to `timeoutMs`, releases the rest (nothing stays inflight). */
  stop(options: { timeoutMs: number }): Promise<{ released: number }>;
  /** Claims one batch and delivers it (without `start()`): how many jobs it claimed, and what became of them. */
  runOnce(): Promise<RunSummary>;
  /** Whether delivery is paused after a 401/403. */
  paused(): boolean;
  /** The accounts paused now (per-account keys: their key was refused or is unknown), oldest first. */
  pausedAccounts(): Promise<readonly AccountPause[]>;
  on(event: DispatcherEventName, listener: (payload: unknown) => void): void;
  /** Releases what the setup opened (the client's kept-alive connections). */
  close(): Promise<void>;
}

/**
 * What the worker hands its Dispatcher: the options objects themselves, as core's and the client's
 * schemas define them (the flags were mapped onto them by `worker-options.ts`).
 */
export interface WorkerSetup {
  /** The Dispatcher's options, all but its client (built from {@link WorkerSetup.client}). */
  dispatcher: Omit<DispatcherOptions, 'client'>;
  /** The ad-service client's options (`baseUrl`, `POSTBACK_API_KEY` as `apiKey` when set, `timeout`). */
  client: ClientOptions;
  /**
   * Removes every key the worker has read from a text, in every form a service may echo it (the client's
   * `createRedactor`): applied by the Dispatcher to every reason it stores or emits.
   */
  redact: (text: string) => string;
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
  { name: 'clock-skew', level: 'warn' },
  { name: 'paused', level: 'error' },
  { name: 'resumed', level: 'info' },
  { name: 'account-paused', level: 'warn' },
  { name: 'account-resumed', level: 'info' },
  // A campaign not on s2s: once per problem, an alert on the log; its jobs wait, held, until it is switched.
  { name: 'held', level: 'error' },
  { name: 'hold-released', level: 'info' },
  // The campaign of held orders accepts s2s now: with --on-switch ask they await 'postback held send|drop'.
  { name: 'switch-seen', level: 'error' },
  // Shadow mode (`postback shadow`): recorded, not sent; at debug like a delivery.
  { name: 'shadowed', level: 'debug' },
  { name: 'error', level: 'error' },
];

/**
 * The real Dispatcher and client, configured from the worker's flags.
 *
 * @example
 * ```ts
 * const dispatcher = await realFactories.createDispatcher({ dispatcher: { outbox }, client: { baseUrl, apiKey }, redact });
 * ```
 */
export const realFactories: WorkerFactories = {
  events: WORKER_EVENTS,
  async createDispatcher(setup) {
    // With per-account keys the Dispatcher passes each job's key with its request (`{ apiKey }`); the
    // client's own key (POSTBACK_API_KEY) may then be absent.
    const client = createClient(setup.client);
    // The client scrubs its own key and each request's; `setup.redact` knows every key the worker read.
    const conversions: ConversionsClient = { conversions: client.conversions, redact: setup.redact };
    const options: DispatcherOptions = { ...setup.dispatcher, client: conversions };
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
