/**
 * `postback worker`: delivers the outbox's jobs to the ad service until SIGTERM/SIGINT, then shuts down
 * gracefully — no new claims, in-flight sends finish or are released within the shutdown timeout, so
 * nothing is left `inflight`. One log line per Dispatcher event; the API key (from `POSTBACK_API_KEY`)
 * is never printed.
 */
import { DEFAULT_TIMEOUT_MS } from '@postback/client';
import {
  DEFAULT_BACKOFF,
  DEFAULT_CONCURRENCY,
  DEFAULT_LEASE_MS,
  DEFAULT_POLL_INTERVAL_MS,
} from '@postback/core';
import {
  BACKEND_OPTIONS,
  backendFlags,
  EXIT,
  HELP_OPTION,
  parseFlags,
  positiveInt,
  runGuarded,
  UsageError,
} from '../args.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { text } from '../format.ts';
import { createLogger, type LogFormat, safeFields } from '../log.ts';
import type { Command } from '../main.ts';
import { type DispatcherHandle, realFactories, type WorkerFactories } from '../worker-factories.ts';

/**
 * How long a graceful shutdown waits for in-flight sends before releasing them.
 * @defaultValue 30_000
 */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

const HELP = `Usage: postback worker (--db FILE | --pg URL | --sqs URL) [--base-url URL] [options]

Delivers queued confirmations and refunds to the ad service until SIGTERM or SIGINT, then stops
gracefully (in-flight sends finish or are given back; nothing is left inflight).

Environment:
  POSTBACK_API_KEY        the API key (required; never printed)
  POSTBACK_API_URL        the service's base URL, when --base-url is not given

Options:
  --base-url URL          the service's base URL (http or https)
  --concurrency N         sends in flight at once (default ${DEFAULT_CONCURRENCY})
  --lease-ms N            how long a claim holds before another worker may take the job
                          (default ${DEFAULT_LEASE_MS}; renewed while a send runs)
  --poll-ms N             how often to look for due jobs when idle (default ${DEFAULT_POLL_INTERVAL_MS})
  --backoff-base-ms N     first retry delay ceiling, doubling per attempt, full jitter
                          (default ${DEFAULT_BACKOFF.baseMs}); never past a job's deadline
  --backoff-max-ms N      largest retry delay ceiling (default ${DEFAULT_BACKOFF.maxMs})
  --backoff-min-ms N      shortest retry delay, also after Retry-After: 0 (default ${DEFAULT_BACKOFF.minMs})
  --request-timeout-ms N  timeout of one HTTP request (default ${DEFAULT_TIMEOUT_MS})
  --shutdown-timeout-ms N how long a graceful stop waits for in-flight sends (default ${DEFAULT_SHUTDOWN_TIMEOUT_MS})
  --drain                 exit once no job is due (or delivery is paused), instead of waiting
                          for a signal
  --log text|json         log format: text lines (default) or JSON lines
  -h, --help              show this help

Exit codes: 0 stopped gracefully (sends still running at the timeout are released to pending),
1 the worker failed (a store error, a stop that could not finish, an unexpected error), 2 usage error (bad flag, missing POSTBACK_API_KEY or base URL),
3 backend unreachable, 4 (--drain) delivery paused: the service refused the API key (401/403),
5 (--drain) delivery paused: answers that are not the service's (wrong base URL or proxy).
`;

const OPTIONS = {
  ...BACKEND_OPTIONS,
  ...HELP_OPTION,
  'base-url': { type: 'string' },
  concurrency: { type: 'string' },
  'lease-ms': { type: 'string' },
  'poll-ms': { type: 'string' },
  'backoff-base-ms': { type: 'string' },
  'backoff-max-ms': { type: 'string' },
  'backoff-min-ms': { type: 'string' },
  'request-timeout-ms': { type: 'string' },
  'shutdown-timeout-ms': { type: 'string' },
  drain: { type: 'boolean' },
  log: { type: 'string' },
} as const;

function optionalInt(flag: string, value: string | undefined): number | undefined {
  return value === undefined ? undefined : positiveInt(flag, value);
}

function parseBaseUrl(value: string | undefined): string {
  if (value === undefined || value === '')
    throw new UsageError('give --base-url URL or set POSTBACK_API_URL');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--base-url must be an http(s) URL, got '${value}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--base-url must be an http(s) URL, got '${value}'`);
  if (url.username !== '' || url.password !== '')
    throw new UsageError('--base-url must not carry credentials; use POSTBACK_API_KEY');
  // Kept without query or fragment: the client appends `/v1/...` to the path, and the URL is logged.
  return `${url.origin}${url.pathname}`.replace(/\/$/, '');
}

/**
 * The exit code and stderr line of a `--drain` run that ended with delivery paused: 4 when the service
 * refused the key (401/403), 5 for any other pause (an answer that is not the service's: a configuration
 * error). The reason is the Dispatcher's (already redacted); the key is scrubbed again all the same.
 */
function pausedExit(
  pause: { status: number | null; reason: string } | null,
  apiKey: string,
  io: { stderr(text: string): void },
): number {
  const keyRefused = pause === null || pause.status === 401 || pause.status === 403;
  const what = keyRefused
    ? 'the service refused the API key; check POSTBACK_API_KEY and its scopes'
    : "the answers are not the ad service's; check --base-url / POSTBACK_API_URL";
  const reason = pause === null ? '' : `: ${pause.reason.split(apiKey).join('[redacted]')}`;
  io.stderr(`${text`postback worker: delivery paused, jobs left pending (${what})${reason}`}\n`);
  return keyRefused ? EXIT.keyRefused : EXIT.misconfigured;
}

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
  return {
    summary: 'Deliver queued jobs to the ad service until SIGTERM/SIGINT',
    run: (args, io) =>
      runGuarded('worker', io, async () => {
        const { values } = parseFlags(args, OPTIONS);
        if (values.help) {
          io.stdout(HELP);
          return EXIT.ok;
        }
        const format = (values.log ?? 'text') as LogFormat;
        if (format !== 'text' && format !== 'json')
          throw new UsageError(`--log must be text or json, got '${values.log}'`);
        const apiKey = io.env.POSTBACK_API_KEY;
        if (apiKey === undefined || apiKey.trim() === '')
          throw new UsageError('set POSTBACK_API_KEY to the API key');
        const baseUrl = parseBaseUrl(values['base-url'] ?? io.env.POSTBACK_API_URL);
        const tuning = {
          concurrency: optionalInt('--concurrency', values.concurrency),
          leaseMs: optionalInt('--lease-ms', values['lease-ms']),
          pollMs: optionalInt('--poll-ms', values['poll-ms']),
          backoffBaseMs: optionalInt('--backoff-base-ms', values['backoff-base-ms']),
          backoffMaxMs: optionalInt('--backoff-max-ms', values['backoff-max-ms']),
          backoffMinMs: optionalInt('--backoff-min-ms', values['backoff-min-ms']),
          requestTimeoutMs: optionalInt('--request-timeout-ms', values['request-timeout-ms']),
        };
        const shutdownTimeoutMs = positiveInt(
          '--shutdown-timeout-ms',
          values['shutdown-timeout-ms'],
          DEFAULT_SHUTDOWN_TIMEOUT_MS,
        );
        const logger = createLogger(format, (line) => io.stdout(line), [apiKey]);

        const backend = await openFromFlags(ctx, backendFlags(values), io.env);
        let dispatcher: DispatcherHandle;
        try {
          dispatcher = await factories.createDispatcher({
            outbox: backend.outbox,
            baseUrl,
            apiKey,
            wake: backend.wake,
            now: ctx.now,
            ...tuning,
          });
        } catch (error) {
          await backend.outbox.close();
          throw error;
        }
        for (const event of factories.events) {
          dispatcher.on(event.name, (payload: unknown) =>
            logger.log(event.level, event.name, safeFields(payload)),
          );
        }
        // The pause delivery is in, if any: a --drain run that ends paused must not exit 0.
        let pause: { status: number | null; reason: string } | null = null;
        dispatcher.on('paused', (payload) => {
          const { status, reason } = payload as { status: number | null; reason: string };
          pause = { status, reason };
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
        let batch: Promise<{ claimed: number }> | undefined;
        const deliver = async (): Promise<number> => {
          logger.log('info', 'worker.started', {
            backend: backend.describe,
            baseUrl,
            ...Object.fromEntries(Object.entries(tuning).filter(([, v]) => v !== undefined)),
          });
          if (values.drain) {
            // Batch by batch until a claim finds nothing due (or a 401/403 pauses delivery, or a signal).
            const interrupted = aborted(io.signal).then(() => null);
            for (;;) {
              batch = dispatcher.runOnce();
              const round = await Promise.race([batch, interrupted]);
              if (round === null || round.claimed === 0 || dispatcher.paused()) break;
            }
          } else {
            dispatcher.start();
            await aborted(io.signal);
          }
          logger.log('info', 'worker.stopping', { timeoutMs: shutdownTimeoutMs });
          const result = await stopWithin();
          // Jobs still sending at the timeout were released to pending (not counted as an attempt):
          // nothing is lost or left inflight, so this is still a graceful stop.
          logger.log(result.released > 0 ? 'warn' : 'info', 'worker.stopped', { released: result.released });
          if (values.drain && dispatcher.paused()) return pausedExit(pause, apiKey, io);
          return EXIT.ok;
        };
        let outcome: { code: number } | { error: unknown };
        try {
          outcome = { code: await deliver() };
        } catch (error) {
          outcome = { error };
        }
        // Whatever failed, give claimed jobs back before the store closes.
        if (!stopped) await stopWithin().catch(() => {});
        if (batch !== undefined) await within(batch, STOP_GRACE_MS, 'the last batch').catch(() => {});
        const closed = await Promise.allSettled([
          within(dispatcher.close(), STOP_GRACE_MS, 'closing the HTTP client'),
          within(backend.outbox.close(), STOP_GRACE_MS, 'closing the backend'),
        ]);
        // The first failure is the one reported (runGuarded maps it to its exit code).
        if ('error' in outcome) throw outcome.error;
        for (const result of closed) if (result.status === 'rejected') throw result.reason;
        return outcome.code;
      }),
  };
}

export const command: Command = createWorkerCommand();
