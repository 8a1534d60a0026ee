/**
 * The one place where `postback worker` meets the Dispatcher of `@postback/core` and the client of
 * `@postback/client`: builds both from the worker's flags, and names the Dispatcher events the worker
 * logs. Kept apart from the command so the command stays about flags, signals and exit codes.
 */
import type { Outbox } from '@postback/core';

/** What the worker needs of a Dispatcher. */
export interface DispatcherHandle {
  start(): void;
  /** Stops claiming, waits for in-flight sends up to `timeoutMs`, releases the rest. */
  stop(options: { timeoutMs: number }): Promise<{ timedOut: boolean; released: number }>;
  /** Resolves once no job is due and none is in flight. */
  drain(): Promise<void>;
  on(event: string, listener: (payload: unknown) => void): void;
  /** Releases what the Dispatcher's setup opened (the client's kept-alive connections). */
  close(): Promise<void>;
}

/** Everything the worker's flags decide. `undefined` means the Dispatcher's default. */
export interface WorkerSetup {
  outbox: Outbox;
  baseUrl: string;
  apiKey: string;
  now: () => number;
  concurrency: number | undefined;
  leaseMs: number | undefined;
  pollMs: number | undefined;
  backoffBaseMs: number | undefined;
  backoffMaxMs: number | undefined;
  requestTimeoutMs: number | undefined;
}

/** How the worker builds its Dispatcher, and which of its events it logs at which level. */
export interface WorkerFactories {
  events: ReadonlyArray<{ name: string; level: 'info' | 'warn' | 'error' }>;
  createDispatcher(setup: WorkerSetup): Promise<DispatcherHandle>;
}

type LooseDispatcher = {
  start(): void;
  stop(options?: { timeoutMs?: number }): Promise<unknown>;
  drain(): Promise<unknown>;
  on(event: string, listener: (payload: unknown) => void): unknown;
};

function defined<T extends Record<string, unknown>>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The real Dispatcher and client. */
export const realFactories: WorkerFactories = {
  events: [
    { name: 'delivered', level: 'info' },
    { name: 'retry', level: 'warn' },
    { name: 'dead', level: 'error' },
    { name: 'expired', level: 'error' },
    { name: 'paused', level: 'error' },
    { name: 'resumed', level: 'info' },
    { name: 'error', level: 'error' },
  ],
  async createDispatcher(setup) {
    const core = (await import('@postback/core')) as unknown as Record<string, unknown>;
    const clientModule = (await import('@postback/client')) as unknown as Record<string, unknown>;
    const createClient = clientModule.createClient as (options: Record<string, unknown>) => unknown;
    const createDispatcher = core.createDispatcher as (options: Record<string, unknown>) => LooseDispatcher;
    const client = createClient(defined({ baseUrl: setup.baseUrl, apiKey: setup.apiKey, timeout: setup.requestTimeoutMs })) as {
      close?: () => Promise<void>;
    };
    const dispatcher = createDispatcher(
      defined({
        outbox: setup.outbox,
        client,
        now: setup.now,
        concurrency: setup.concurrency,
        leaseMs: setup.leaseMs,
        pollIntervalMs: setup.pollMs,
        ...(setup.backoffBaseMs === undefined && setup.backoffMaxMs === undefined
          ? {}
          : { backoff: defined({ baseMs: setup.backoffBaseMs, maxMs: setup.backoffMaxMs }) }),
      }),
    );
    return {
      start: () => dispatcher.start(),
      async stop(options) {
        const result = (await dispatcher.stop(options)) as { timedOut?: boolean; released?: number } | undefined;
        return { timedOut: result?.timedOut ?? false, released: result?.released ?? 0 };
      },
      async drain() {
        await dispatcher.drain();
      },
      on: (event, listener) => {
        dispatcher.on(event, listener);
      },
      close: async () => {
        await client.close?.();
      },
    };
  },
};
