/**
 * The Dispatcher's options: one zod schema that is the single source of truth for their types, defaults
 * and validation (unknown keys are rejected), plus the exported `DEFAULT_*` constants it uses.
 */
import { z } from 'zod';
import type { EpochMs } from '../../policy.ts';
import { DEFAULT_URGENT_WITHIN_MS } from '../accounts.ts';
import { DEFAULT_AT_RISK_WITHIN_MS } from '../operator-types.ts';
import type { Outbox } from '../types.ts';
import { DEFAULT_WINDOW_CLOSED_PATTERN } from './classify.ts';

/** Body of POST /v1/conversions/s2s. */
export interface ConfirmBody {
  click_token: string;
  order_id: string;
  value_micros: number;
}

/** Body of POST /v1/conversions/s2s/refund. */
export interface RefundBody {
  campaign_id: string;
  order_id: string;
}

/**
 * The part of the ad-service client the Dispatcher uses. `createClient` from `@postback/client` fits it;
 * so does any object with these two methods (a test double, a client with custom transport).
 * Errors should be `AdServiceError`s (`status`, `retryable`, `retryAfterMs`, `detailFromService`); anything
 * else counts as transient. Answers are read tolerantly: only the `campaign_id` of a confirmation's answer
 * is used, when it has the form `cmp_<id>` and `redact` leaves it unchanged (else the campaign is unknown),
 * and any 2xx counts as applied.
 */
export interface ConversionsClient {
  conversions: {
    confirm(body: ConfirmBody, options: SendOptions): Promise<unknown>;
    refund(body: RefundBody, options: SendOptions): Promise<unknown>;
  };
  /**
   * Removes the secrets the client holds (its API key) from a text. When present, the Dispatcher applies
   * it to every reason it stores or emits, so a service that echoes the key back stores nothing secret.
   */
  redact?: (text: string) => string;
}

/**
 * What the Dispatcher passes with each request. `apiKey` is there only when the Dispatcher was given
 * `apiKeyFor`: the key of the job's account, to send this request with instead of the client's own (and to
 * scrub from anything the client throws). `createClient` from `@postback/client` supports it.
 */
export interface SendOptions {
  signal: AbortSignal;
  apiKey?: string;
}

/**
 * Gives the API key of an advertiser account (`null`: jobs enqueued without one), or `undefined` when none
 * is known (that account pauses, like a refused key, and is asked again at its probe). Called before every
 * send, so a key changed in a keys file is used from the next send on; keep it fast (read a map).
 */
export type ApiKeyResolver = (
  account: string | null,
) => string | undefined | null | Promise<string | undefined | null>;

/** Waits `ms`, resolving early (never rejecting) when `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * Jobs sent at the same time.
 * @defaultValue 4
 */
export const DEFAULT_CONCURRENCY = 4;
/**
 * Most jobs claimed in one claim. The running Dispatcher claims whole batches ahead of its free sending
 * slots (up to `2 × (batchSize + concurrency)` jobs ahead), so a steady stream costs one claim per batch.
 * @defaultValue 16
 */
export const DEFAULT_BATCH_SIZE = 16;
/**
 * Pause between claims when nothing was due (a `wake` call cuts it short).
 * @defaultValue 1_000
 */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;
/**
 * How long a claim holds before another worker may retake the job; renewed every third of it while a
 * send is in flight.
 * @defaultValue 60_000
 */
export const DEFAULT_LEASE_MS = 60_000;
/**
 * Longest a single HTTP send may take before it is aborted and counted as a timeout.
 * @defaultValue 30_000
 */
export const DEFAULT_SEND_TIMEOUT_MS = 30_000;
/**
 * Durable backoff between attempts: full jitter over `baseMs · 2^(attempt−1)`, at most `maxMs`, at least
 * `minMs` (so a zero jitter or `Retry-After: 0` cannot spin a job in a hot loop), and never
 * past the job's deadline.
 * @defaultValue `{ baseMs: 5_000, maxMs: 3_600_000, minMs: 1_000 }`
 */
export const DEFAULT_BACKOFF = Object.freeze({ baseMs: 5_000, maxMs: 3_600_000, minMs: 1_000 });
/**
 * In-process retries for network blips (connection errors, timeouts, 5xx), before falling back to the
 * durable backoff. Few and short: a worker should not sit on a job.
 * @defaultValue `{ retries: 2, minTimeoutMs: 100, maxTimeoutMs: 1_000 }`
 */
export const DEFAULT_QUICK_RETRIES = Object.freeze({ retries: 2, minTimeoutMs: 100, maxTimeoutMs: 1_000 });
/**
 * How long delivery pauses after a 401/403 (or an answer that is not the service's: a wrong base URL)
 * before one job probes whether delivery works again. With `apiKeyFor`, a 401/403 pauses only the job's
 * account, for as long.
 * @defaultValue 60_000
 */
export const DEFAULT_AUTH_PAUSE_MS = 60_000;
/**
 * How often a running Dispatcher records its heart-beat in the outbox and looks for open jobs whose
 * deadline entered the at-risk window (one small query each).
 * @defaultValue 30_000
 */
export const DEFAULT_WATCH_INTERVAL_MS = 30_000;
/**
 * The version a worker reports in its heart-beats when none is given (the CLI gives its own).
 * @defaultValue "unknown"
 */
export const DEFAULT_WORKER_VERSION = 'unknown';
/**
 * How long `stop()` waits for in-flight sends before releasing their jobs.
 * @defaultValue 10_000
 */
export const DEFAULT_STOP_TIMEOUT_MS = 10_000;

/**
 * Sleeps on a real timer; resolves early (never rejects) when the signal aborts. The default `sleep`.
 *
 * @example
 * ```ts
 * await realSleep(1_000, controller.signal);
 * ```
 */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    // Node clamps longer timers to 1 ms; keep them long instead.
    const timer = setTimeout(done, Math.min(Math.max(0, ms), 2_147_483_647));
    signal?.addEventListener('abort', done, { once: true });
  });

const isFunction = (v: unknown) => typeof v === 'function';
const ms = () => z.number().int().nonnegative();
const positiveMs = () => z.number().int().positive();

const OUTBOX_METHODS = ['claim', 'complete', 'retry', 'fail', 'release', 'extendLease', 'stats'] as const;

/**
 * The schema of {@link DispatcherOptions}: the single source of truth for their types and defaults.
 *
 * @example
 * ```ts
 * const resolved = dispatcherOptionsSchema.parse({ outbox, client }); // every default filled in
 * ```
 */
export const dispatcherOptionsSchema = z.strictObject({
  /** Where jobs are claimed from and their outcomes recorded. Required. */
  outbox: z.custom<Outbox>(
    (v) =>
      typeof v === 'object' &&
      v !== null &&
      OUTBOX_METHODS.every((m) => isFunction((v as Record<string, unknown>)[m])),
    `must implement the Outbox interface (${OUTBOX_METHODS.join(', ')})`,
  ),
  /** Sends the jobs (e.g. `createClient({ apiKey })` from `@postback/client`). Required. */
  client: z.custom<ConversionsClient>((v) => {
    const conversions = (v as { conversions?: Record<string, unknown> } | null)?.conversions;
    return (
      typeof conversions === 'object' &&
      conversions !== null &&
      isFunction(conversions.confirm) &&
      isFunction(conversions.refund)
    );
  }, 'must have conversions.confirm and conversions.refund methods'),
  /**
   * One key per advertiser account: each job is sent with `apiKeyFor(job.account)` (see
   * {@link ApiKeyResolver}), and a 401/403 (or no key) pauses that account only. Without it every job is
   * sent with the client's own key and a 401/403 pauses all delivery. Keys are never stored in the outbox.
   */
  apiKeyFor: z.custom<ApiKeyResolver>(isFunction, 'must be a function (account) => apiKey').optional(),
  /**
   * Due jobs whose deadline is this close are claimed first (nearest deadline first, whatever their
   * account); the rest in turns across accounts. @defaultValue {@link DEFAULT_URGENT_WITHIN_MS} (1 hour)
   */
  urgentWithinMs: ms().default(DEFAULT_URGENT_WITHIN_MS),
  /** @defaultValue {@link DEFAULT_CONCURRENCY} */
  concurrency: z.number().int().min(1).max(1_000).default(DEFAULT_CONCURRENCY),
  /** @defaultValue {@link DEFAULT_BATCH_SIZE} */
  batchSize: z.number().int().min(1).max(1_000).default(DEFAULT_BATCH_SIZE),
  /** @defaultValue {@link DEFAULT_POLL_INTERVAL_MS} */
  pollIntervalMs: positiveMs().default(DEFAULT_POLL_INTERVAL_MS),
  /** @defaultValue {@link DEFAULT_LEASE_MS} */
  leaseMs: z.number().int().min(100).default(DEFAULT_LEASE_MS),
  /** @defaultValue {@link DEFAULT_SEND_TIMEOUT_MS} */
  sendTimeoutMs: positiveMs().default(DEFAULT_SEND_TIMEOUT_MS),
  /** @defaultValue {@link DEFAULT_BACKOFF} */
  backoff: z
    .strictObject({
      baseMs: positiveMs().default(DEFAULT_BACKOFF.baseMs),
      maxMs: positiveMs().default(DEFAULT_BACKOFF.maxMs),
      minMs: ms().default(DEFAULT_BACKOFF.minMs),
    })
    .prefault({}),
  /** @defaultValue {@link DEFAULT_QUICK_RETRIES} */
  quickRetries: z
    .strictObject({
      retries: z.number().int().min(0).max(10).default(DEFAULT_QUICK_RETRIES.retries),
      minTimeoutMs: ms().default(DEFAULT_QUICK_RETRIES.minTimeoutMs),
      maxTimeoutMs: ms().default(DEFAULT_QUICK_RETRIES.maxTimeoutMs),
    })
    .prefault({}),
  /**
   * A 4xx whose `detail` matches makes the job `expired` (its window has closed), not `dead`.
   * @defaultValue {@link DEFAULT_WINDOW_CLOSED_PATTERN}
   */
  windowClosedPattern: z.instanceof(RegExp).default(DEFAULT_WINDOW_CLOSED_PATTERN),
  /** @defaultValue {@link DEFAULT_AUTH_PAUSE_MS} */
  authPauseMs: positiveMs().default(DEFAULT_AUTH_PAUSE_MS),
  /** @defaultValue {@link DEFAULT_WATCH_INTERVAL_MS} */
  watchIntervalMs: positiveMs().default(DEFAULT_WATCH_INTERVAL_MS),
  /** An open job whose deadline is this close emits `at-risk` (once). @defaultValue 24 hours (`DEFAULT_AT_RISK_WITHIN_MS`) */
  atRiskWithinMs: ms().default(DEFAULT_AT_RISK_WITHIN_MS),
  /**
   * How this worker names itself in its heart-beats. @defaultValue a random id, version
   * {@link DEFAULT_WORKER_VERSION}, and the host name and pid where the runtime has them
   */
  worker: z
    .strictObject({
      id: z.string().min(1).max(200).optional(),
      version: z.string().max(100).default(DEFAULT_WORKER_VERSION),
      host: z.string().max(255).nullable().optional(),
      pid: z.number().int().nullable().optional(),
    })
    .prefault({}),
  /** Clock. @defaultValue `Date.now` */
  now: z.custom<() => EpochMs>(isFunction, 'must be a function returning epoch ms').default(() => Date.now),
  /** Random source in [0, 1) for backoff jitter. @defaultValue `Math.random` */
  random: z
    .custom<() => number>(isFunction, 'must be a function returning a number in [0, 1)')
    .default(() => Math.random),
  /** Waits between polls, heart-beats and during `stop`. @defaultValue a `setTimeout` sleep */
  sleep: z
    .custom<Sleep>(isFunction, 'must be a function (ms, signal) => Promise<void>')
    .default(() => realSleep),
  /**
   * Lets an outside signal (Postgres `LISTEN/NOTIFY`, an in-process enqueue) cut a poll short: called at
   * `start()` with a `wakeUp` function; may return an unsubscribe function, called at `stop()`.
   */
  wake: z.custom<(wakeUp: () => void) => unknown>(isFunction, 'must be a function').optional(),
});

/** Options of `createDispatcher` (input form: everything but `outbox` and `client` has a default). */
export type DispatcherOptions = z.input<typeof dispatcherOptionsSchema>;
/** Options with every default filled in. */
export type ResolvedDispatcherOptions = z.output<typeof dispatcherOptionsSchema>;
