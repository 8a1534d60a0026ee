/**
 * `postback worker`: delivers the outbox's jobs to the ad service until SIGTERM/SIGINT, then shuts down
 * gracefully — no new claims, in-flight sends finish or are released within the shutdown timeout, so
 * nothing is left `inflight`. One log line per Dispatcher event; the API key (from `POSTBACK_API_KEY`)
 * is never printed, nor are per-account keys (`--keys-file`, `POSTBACK_API_KEY__<ACCOUNT>`: see keys.ts).
 */
import { hostname } from 'node:os';
import { createRedactor } from '@postback/client';
import type { RunSummary } from '@postback/core';
import { backendFlags, EXIT, UsageError } from '../args.ts';
import { parseBaseUrl } from '../base-url.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { type AccountKeys, KeysError, loadAccountKeys } from '../keys.ts';
import { createLogger, eventFields, type LogLevel } from '../log.ts';
import { storeReturnWindowMs } from '../retention.ts';
import { workerSpec } from '../specs/worker.ts';
import { cliVersion } from '../version.ts';
import { drainBatches } from '../worker-drain.ts';
import { drainExit } from '../worker-drain-exit.ts';
import { type DispatcherHandle, realFactories, type WorkerFactories } from '../worker-factories.ts';
import { startWorkerMetrics, type WorkerMetrics } from '../worker-metrics.ts';
import { tuningOptions } from '../worker-options.ts';
import { type GlobalPause, maxRequestsPerSecond, rateLimitedUntil } from '../worker-rate-limit.ts';
import { type Routines, startRoutines } from '../worker-routines.ts';
import { watchSpend } from '../worker-spend.ts';

/**
 * How much longer than `--shutdown-timeout-ms` a stop may take (giving jobs back, closing the store)
 * before the worker gives up on it and exits 1.
 * @defaultValue 5_000
 */
export const STOP_GRACE_MS = 5_000;

/** A step of the shutdown that did not finish in time. Exit 1. */
export class StopTimeoutError extends Error {
  override name = 'StopTimeoutError';
}

/** `promise`, or a {@link StopTimeoutError} naming `what` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new StopTimeoutError(
            `${what} did not finish within ${ms} ms (the backend stopped answering?); ` +
              'jobs still claimed go back to pending when their lease runs out',
          ),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Adds the counts of one `runOnce` to a total (in place). */
function add(total: RunSummary, round: RunSummary): void {
  for (const key of Object.keys(total) as Array<keyof RunSummary>) total[key] += round[key];
}

/** Waits until the signal aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * Builds the `worker` command with its dependencies (tests may inject the clock the Dispatcher uses).
 *
 * @example
 * ```ts
 * process.exitCode = await createWorkerCommand().run(['--db', 'postback.db'], io);
 * ```
 */
export function createWorkerCommand(
  ctx: CommandContext = defaultContext,
  factories: WorkerFactories = realFactories,
): Command {
  return defineCommand(workerSpec, async ({ values }, io) => {
    const format = values.log;
    const envKey = io.env.POSTBACK_API_KEY;
    const apiKey = envKey === undefined || envKey === '' ? undefined : envKey;
    const baseUrl = parseBaseUrl(values['base-url']);
    // The tuning flags are the Dispatcher's and the client's own options (worker-options.ts).
    const tuning = tuningOptions(values);
    const shutdownTimeoutMs = values['shutdown-timeout-ms'];
    // Per-account keys (keys.ts): the keys file is read now (a bad one is a usage error), then watched.
    // The logger asks `keys` at each line: it is set before anything but a keys-file warning logs.
    let keys: AccountKeys | undefined;
    const envRedact = createRedactor(apiKey ?? []);
    const redact = (line: string) => (keys === undefined ? envRedact(line) : keys.redact(line));
    // Logs go to stderr (stdout stays free for output a script reads); pino's JSON lines with --log json.
    const logger = createLogger(format, (line) => io.stderr(line), redact, Date.now, {
      level: values['log-level'] as LogLevel,
    });
    try {
      keys = await loadAccountKeys({
        defaultKey: apiKey,
        env: io.env,
        keysFile: values['keys-file'],
        onReload: (reload) => logger.log('info', 'worker.keys-reloaded', { ...reload }),
        onError: (message) => logger.log('error', 'worker.keys-file', { error: message }),
        onExposed: (message) => logger.log('warn', 'worker.keys-file-readable', { warning: message }),
      });
    } catch (error) {
      if (error instanceof KeysError) throw new UsageError(error.message);
      throw error;
    }
    const accountKeys = keys;
    if (apiKey === undefined && !accountKeys.perAccount) {
      accountKeys.close();
      throw new UsageError(
        'set POSTBACK_API_KEY to the API key (or give per-account keys: --keys-file, POSTBACK_API_KEY__<ACCOUNT>)',
      );
    }

    let backend: Awaited<ReturnType<typeof openFromFlags>>;
    try {
      backend = await openFromFlags(ctx, backendFlags(values), io.env);
    } catch (error) {
      accountKeys.close();
      throw error;
    }
    let dispatcher: DispatcherHandle;
    try {
      dispatcher = await factories.createDispatcher({
        dispatcher: {
          outbox: backend.outbox,
          now: ctx.now,
          // Who this worker is in its heart-beats (`postback status`): the CLI's version, this machine.
          worker: { version: cliVersion(), host: hostname() },
          // The worker prunes on its own schedule (`--prune-every`, clicks too): not the Dispatcher's.
          prune: false,
          ...(accountKeys.perAccount ? { apiKeyFor: accountKeys.keyFor } : {}),
          ...(backend.wake === undefined ? {} : { wake: backend.wake }),
          ...tuning.dispatcher,
          // A dedicated worker has no pages to give way to: full speed unless --pace adaptive.
          pace: values.pace as 'adaptive' | 'off',
          onSwitch: values['on-switch'] as 'ask' | 'send' | 'drop',
          ...maxRequestsPerSecond(values),
        },
        client: { baseUrl, ...(apiKey === undefined ? {} : { apiKey }), ...tuning.client },
        redact: accountKeys.redact,
      });
    } catch (error) {
      accountKeys.close();
      await backend.outbox.close();
      throw error;
    }
    for (const event of factories.events) {
      dispatcher.on(event.name, (payload: unknown) =>
        logger.log(event.level, event.name, eventFields(event.name, payload)),
      );
    }
    // The campaign spend at a hold's start and at its switch, for `postback held` (worker-spend.ts).
    const spend = watchSpend({
      dispatcher,
      outbox: backend.outbox,
      baseUrl,
      keyFor: accountKeys.keyFor,
      now: ctx.now,
      logger,
    });
    // `--metrics-port`: /metrics, /healthz, /readyz while the worker runs (see worker-metrics.ts).
    let metricsServer: WorkerMetrics | undefined;
    if (values['metrics-port'] !== undefined) {
      const where = { port: values['metrics-port'], host: values['metrics-host'] };
      try {
        metricsServer = await startWorkerMetrics(dispatcher, backend.outbox, { ...where, logger });
      } catch (error) {
        accountKeys.close();
        await Promise.allSettled([dispatcher.close(), backend.outbox.close()]);
        throw error;
      }
      logger.log('info', 'worker.metrics', { url: metricsServer.url });
    }
    // The pause delivery is in, if any: a --drain run that ends paused must not exit 0.
    let pause: GlobalPause | null = null;
    dispatcher.on('paused', (payload) => {
      const { status, reason, until, cause } = payload as GlobalPause;
      pause = { status, reason, until, ...(typeof cause === 'string' ? { cause } : {}) };
    });
    dispatcher.on('resumed', () => {
      pause = null;
    });
    // Every step of a stop is bounded: a store that stopped answering (a pool whose connections were
    // all lost, a locked table) must end in exit 1, not in a process that hangs or exits 13.
    let stopped = false;
    const stopWithin = () => {
      stopped = true;
      return within(
        dispatcher.stop({ timeoutMs: shutdownTimeoutMs }),
        shutdownTimeoutMs + STOP_GRACE_MS,
        'stopping delivery',
      );
    };
    // The batch of `--drain` still running when a signal came: awaited before the store closes.
    let batch: Promise<RunSummary> | undefined;
    // What the batches of a `--drain` run did, added up.
    let drained: RunSummary | undefined;
    // The summary and the scheduled prune (worker-routines.ts), stopped before the store closes.
    let routines: Routines | undefined;
    const deliver = async (): Promise<number> => {
      const retention = {
        olderThanMs: values['prune-older-than'],
        returnWindowMs: values['return-window'] ?? storeReturnWindowMs(backend.outbox),
      };
      // The effective settings, defaults resolved; the API key only as set (never its value).
      logger.log('info', 'worker.started', {
        backend: backend.describe,
        baseUrl,
        apiKey: apiKey === undefined ? 'unset' : 'set',
        // Per-account keys: how many accounts have one (never the keys), and where they come from.
        accountKeys: accountKeys.accounts(),
        keysFile: values['keys-file'] ?? 'none',
        // The Dispatcher's and the client's options as their schemas resolved them.
        ...tuning.dispatcher,
        pace: values.pace,
        ...maxRequestsPerSecond(values),
        client: tuning.client,
        shutdownTimeoutMs,
        drain: values.drain,
        pruneEveryMs: backend.outbox.features.prune ? values['prune-every'] : 0,
        pruneOlderThanMs: retention.olderThanMs,
        returnWindowMs: retention.returnWindowMs,
        clickSweep: backend.clicks !== undefined && values['prune-every'] > 0,
        summaryEveryMs: values['summary-every'],
        logLevel: values['log-level'],
        logFormat: format,
      });
      routines = startRoutines({
        backend,
        dispatcher,
        logger,
        now: ctx.now,
        summaryEveryMs: values['summary-every'],
        pruneEveryMs: values['prune-every'],
        retention,
      });
      if (values.drain) {
        // Batch by batch until a claim finds nothing due (or a 401/403 pauses delivery, or a signal),
        // waiting for its own retries due within seconds (worker-drain.ts) and out a 429's pause.
        const total = {
          claimed: 0,
          delivered: 0,
          retried: 0,
          held: 0,
          dead: 0,
          expired: 0,
          unmatched: 0,
          shadowed: 0,
          deferred: 0,
          lost: 0,
        };
        drained = total;
        await drainBatches(dispatcher, {
          now: ctx.now,
          interrupted: aborted(io.signal),
          onBatch: (b) => {
            batch = b;
          },
          onRound: (round) => add(total, round),
          rateLimited: () => rateLimitedUntil(pause, dispatcher),
          nearestDeadline: async () => {
            try {
              return (await backend.outbox.stats(ctx.now())).nearestDeadline?.deadline ?? null;
            } catch {
              return null; // the store cannot say now: the wait is bounded by the run's own bound anyway
            }
          },
          ...(values['rate-limit-wait'] === undefined ? {} : { rateLimitWaitMs: values['rate-limit-wait'] }),
        });
      } else {
        dispatcher.start();
        await aborted(io.signal);
      }
      logger.log('info', 'worker.stopping', { timeoutMs: shutdownTimeoutMs });
      const result = await stopWithin();
      // A prune under way ends before the worker says it stopped: `worker.stopped` is the last line of
      // its work (under load, the last scheduled prune used to log after it).
      const running = routines;
      routines = undefined;
      if (running !== undefined)
        await within(running.stop(), STOP_GRACE_MS, 'the last prune').catch(() => {});
      // Jobs still sending at the timeout were released to pending (not counted as an attempt):
      // nothing is lost or left inflight, so this is still a graceful stop.
      logger.log(result.released > 0 ? 'warn' : 'info', 'worker.stopped', { released: result.released });
      // What a `--drain` run did, at the default level: the line a cron log keeps. (A batch cut short by
      // a signal is not in it: its jobs were released or recorded during the stop.)
      if (drained !== undefined) logger.log('info', 'worker.drained', { ...drained });
      if (!values.drain) return EXIT.ok;
      return drainExit({
        paused: dispatcher.paused(),
        pause,
        accounts: await dispatcher.pausedAccounts(),
        perAccount: accountKeys.perAccount,
        redact: accountKeys.redact,
        stderr: (line) => io.stderr(line),
      });
    };
    let outcome: { code: number } | { error: unknown };
    try {
      outcome = { code: await deliver() };
    } catch (error) {
      outcome = { error };
    }
    accountKeys.close();
    // Whatever failed, give claimed jobs back before the store closes.
    if (!stopped) await stopWithin().catch(() => {});
    if (batch !== undefined) await within(batch, STOP_GRACE_MS, 'the last batch').catch(() => {});
    if (routines !== undefined)
      await within(routines.stop(), STOP_GRACE_MS, 'the last prune').catch(() => {});
    // The last spend reading writes to the outbox: done before it closes.
    await within(spend.close(), STOP_GRACE_MS, 'the last spend reading').catch(() => {});
    const closed = await Promise.allSettled([
      within(dispatcher.close(), STOP_GRACE_MS, 'closing the HTTP client'),
      within(backend.outbox.close(), STOP_GRACE_MS, 'closing the backend'),
      within(metricsServer?.close() ?? Promise.resolve(), STOP_GRACE_MS, 'closing the metrics server'),
    ]);
    // The first failure is the one reported (runGuarded maps it to its exit code).
    if ('error' in outcome) throw outcome.error;
    for (const result of closed) if (result.status === 'rejected') throw result.reason;
    return outcome.code;
  });
}

export const command: Command = createWorkerCommand();
