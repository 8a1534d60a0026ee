/**
 * Delivery from a Cloudflare Worker: a Worker has no process that lives on, so nothing can call
 * `dispatcher.start()`. A Cron Trigger calls the Worker's `scheduled` handler instead; this helper turns a
 * Dispatcher factory into that handler, which drains what is due and keeps the isolate alive for it with
 * `ctx.waitUntil`. The outbox decides what survives between events: see "Cloudflare Workers" in the README.
 */
import type { Dispatcher, RunSummary } from '../queue/dispatcher/dispatcher.ts';

/** The part of a Workers `ExecutionContext` the helper uses. */
export interface WaitUntilContext {
  waitUntil(promise: Promise<unknown>): void;
}

/** What a factory may return: a Dispatcher, or one with a `close` to run after the drain (the client, a pool). */
export type ScheduledDispatcher = Dispatcher | { dispatcher: Dispatcher; close?: () => unknown };

/** Options of {@link drainOnSchedule}. */
export interface DrainOnScheduleOptions<Env> {
  /** Most claim rounds per event (each claims up to `batchSize` jobs). @defaultValue 1_000 */
  maxRounds?: number;
  /** Called with what the drain did (for a log line or a metric). */
  onDrained?: (summary: RunSummary, env: Env) => void;
}

/** A Workers `scheduled` handler: `(controller, env, ctx)`. */
export type ScheduledHandler<Env> = (
  controller: unknown,
  env: Env,
  ctx: WaitUntilContext,
) => Promise<RunSummary>;

function parts(made: ScheduledDispatcher): { dispatcher: Dispatcher; close: (() => unknown) | undefined } {
  return 'dispatcher' in made
    ? { dispatcher: made.dispatcher, close: made.close }
    : { dispatcher: made, close: undefined };
}

/**
 * A `scheduled` handler that builds a Dispatcher from the event's `env` (the API key and the outbox's
 * binding live there), runs `dispatcher.drain()` until nothing is due (or delivery is paused: a 401/403
 * or a misconfigured transport, reported through the Dispatcher's `paused` event), then runs `close`.
 * The work is handed to `ctx.waitUntil`, so the isolate is kept until it ends; the returned promise is
 * the same work, so a test (or a `fetch` route) can await it.
 *
 * @example
 * ```ts
 * export default {
 *   fetch: app,
 *   scheduled: drainOnSchedule((env: Env) => {
 *     const client = createClient({ baseUrl: env.AD_BASE_URL, apiKey: env.AD_API_KEY });
 *     return { dispatcher: createDispatcher({ outbox, client }), close: () => client.close() };
 *   }),
 * };
 * ```
 */
export function drainOnSchedule<Env>(
  create: (env: Env) => ScheduledDispatcher | Promise<ScheduledDispatcher>,
  options: DrainOnScheduleOptions<Env> = {},
): ScheduledHandler<Env> {
  const maxRounds = options.maxRounds ?? 1_000;
  return (_controller, env, ctx) => {
    const work = (async () => {
      const { dispatcher, close } = parts(await create(env));
      try {
        const summary = await dispatcher.drain({ maxRounds });
        options.onDrained?.(summary, env);
        return summary;
      } finally {
        await close?.();
      }
    })();
    ctx.waitUntil(work);
    return work;
  };
}
