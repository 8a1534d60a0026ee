/**
 * The Dispatcher's options: one zod schema that is the single source of truth for their types, defaults,
 * validation (unknown keys are rejected) and the README's table, plus the exported `DEFAULT_*` constants
 * it uses. Every option names the user who needs it.
 */
import { z } from 'zod';
import { documented, renderOptionsTable } from '../../options-table.ts';
import type { EpochMs } from '../../policy.ts';
import type { Outbox } from '../outbox-types.ts';
import {
  DEFAULT_CAMPAIGN_NOT_S2S_PATTERN,
  DEFAULT_HOLD_STATUSES,
  DEFAULT_WINDOW_CLOSED_PATTERN,
} from './classify.ts';
import { maxRequestsPerSecondOption, paceOption } from './pace-options.ts';
import { DEFAULT_PRUNE_EVERY_MS, DEFAULT_PRUNE_OLDER_THAN_MS } from './prune-schedule.ts';
import { shadowRefreshOption } from './shadow-options.ts';
import { onSwitchOption } from './switch-options.ts';
import type { DeliveryTracing } from './tracing.ts';

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
  /** Where requests go (e.g. `https://ads.example`), for traces (`url.full`, `server.address`); never holds the key. */
  readonly baseUrl?: string;
}

/**
 * What the Dispatcher passes with each request. `apiKey` is there only when the Dispatcher was given
 * `apiKeyFor`: the key of the job's account, to send this request with instead of the client's own (and to
 * scrub from anything the client throws). `createClient` from `@postback/client` supports it.
 */
export interface SendOptions {
  signal: AbortSignal;
  apiKey?: string;
  /**
   * Headers to add to the request: the trace context of the delivery (`traceparent`, `tracestate`) when
   * `tracing` gives one. A client that does not support them sends without (traces then stop here).
   */
  headers?: Record<string, string>;
  /** To be called with the status of the service's answer (a 2xx's too), for the history and traces. */
  onStatus?: (status: number) => void;
}

/**
 * Gives the API key of an advertiser account (`null`: jobs enqueued without one), or `undefined` when none
 * is known (that account pauses, like a refused key, and is asked again at its probe). Called before every
 * send, so a key changed in a keys file is used from the next send on; keep it fast (read a map).
 */
export type ApiKeyResolver = (
  account: string | null,
) => string | undefined | null | Promise<string | undefined | null>;

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
 * Backoff between attempts: full jitter over `baseMs · 2^(attempt−1)`, at most `maxMs`, at least `minMs`
 * (so a zero jitter or `Retry-After: 0` cannot spin a job in a hot loop), and never past the job's
 * deadline. Every retry is durable (there are no in-process retries), so the first ones are quick: a
 * network blip is tried again within a second, the next within two, then four, … up to an hour.
 * @defaultValue `{ baseMs: 1_000, maxMs: 3_600_000, minMs: 500 }`
 */
export const DEFAULT_BACKOFF = Object.freeze({ baseMs: 1_000, maxMs: 3_600_000, minMs: 500 });
/**
 * How long delivery pauses after a 401/403 (or an answer that is not the service's: a wrong base URL)
 * before one job probes whether delivery works again. With `apiKeyFor`, a 401/403 pauses only the job's
 * account, for as long.
 * @defaultValue 60_000
 */
export const DEFAULT_AUTH_PAUSE_MS = 60_000;
/**
 * How long the probe of a held problem (one job per account and campaign not on s2s) waits before it is
 * sent again to see whether the campaign was switched; its success releases the problem's held jobs at once.
 * @defaultValue 600_000 (10 minutes)
 */
export const DEFAULT_HOLD_PROBE_MS = 600_000;
/**
 * How many consecutive distinct jobs of one account meeting the same 4xx answer make the refusal
 * systematic: the account pauses (cause `systematic-refusal`) instead of dead-lettering the rest.
 * @defaultValue 5
 */
export const DEFAULT_SYSTEMATIC_REFUSAL_AFTER = 5;
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
  outbox: documented(
    z.custom<Outbox>(
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        OUTBOX_METHODS.every((m) => isFunction((v as Record<string, unknown>)[m])),
      `must implement the Outbox interface (${OUTBOX_METHODS.join(', ')})`,
    ),
    'Outbox',
    'required',
    'The store jobs are claimed from and their outcomes recorded in.',
  ),
  /** Sends the jobs (e.g. `createClient({ apiKey })` from `@postback/client`). Required. */
  client: documented(
    z.custom<ConversionsClient>((v) => {
      const conversions = (v as { conversions?: Record<string, unknown> } | null)?.conversions;
      return (
        typeof conversions === 'object' &&
        conversions !== null &&
        isFunction(conversions.confirm) &&
        isFunction(conversions.refund)
      );
    }, 'must have conversions.confirm and conversions.refund methods'),
    'ConversionsClient',
    'required',
    'Sends the requests: `createClient` from `@postback/client`, or any object with `conversions.confirm` and `conversions.refund` (its `redact`, when present, is applied to every reason stored or emitted).',
  ),
  /**
   * For a platform that delivers for many advertiser accounts, each with its own key: each job is sent
   * with `apiKeyFor(job.account)` (see {@link ApiKeyResolver}), and a 401/403 (or no key) pauses that
   * account only. Without it every job is sent with the client's own key and a 401/403 pauses all
   * delivery. Keys are never stored in the outbox.
   */
  apiKeyFor: documented(
    z.custom<ApiKeyResolver>(isFunction, 'must be a function (account) => apiKey').optional(),
    '(account) => apiKey \\| undefined',
    '—',
    "For a platform delivering for many advertiser accounts, each with its own key (see [Many advertisers](#many-advertisers-one-fleet)): each job goes with its account's key (sync or async), and a 401/403 or no key pauses that account only. Without it every job goes with the client's own key.",
  ),
  /**
   * Sends in flight at once: a worker draining a backlog against a service that takes more raises it (the
   * CLI's `--concurrency`). @defaultValue {@link DEFAULT_CONCURRENCY}
   */
  concurrency: documented(
    z.number().int().min(1).max(1_000).default(DEFAULT_CONCURRENCY),
    'number',
    `\`${DEFAULT_CONCURRENCY}\` (\`DEFAULT_CONCURRENCY\`)`,
    'Sends in flight at once. A worker draining a backlog against a service that takes more raises it (`postback worker --concurrency`).',
  ),
  /**
   * Most jobs per claim: an SQS worker sets what one receive returns (at most 10), a worker at a high
   * concurrency larger claims. @defaultValue {@link DEFAULT_BATCH_SIZE}
   */
  batchSize: documented(
    z.number().int().min(1).max(1_000).default(DEFAULT_BATCH_SIZE),
    'number',
    `\`${DEFAULT_BATCH_SIZE}\` (\`DEFAULT_BATCH_SIZE\`)`,
    'Most jobs per claim; the loop keeps `2 × (batchSize + concurrency)` claimed ahead of free sending slots. An SQS worker sets what one receive returns (at most 10); a worker at a high concurrency, larger claims.',
  ),
  /** How long a read of the shadow settings is trusted (`shadow-options.ts`). @defaultValue 5_000 */
  shadowRefreshMs: shadowRefreshOption,
  /** How sends adapt to the host (`pace-options.ts`). @defaultValue `'adaptive'` */
  pace: paceOption,
  /** Known request limits of the service, kept below (`pace-options.ts`). */
  maxRequestsPerSecond: maxRequestsPerSecondOption,
  /**
   * Pause between claims when nothing was due: a worker without wake-ups that must react sooner lowers it
   * (the CLI's `--poll-ms`). @defaultValue {@link DEFAULT_POLL_INTERVAL_MS}
   */
  pollIntervalMs: documented(
    positiveMs().default(DEFAULT_POLL_INTERVAL_MS),
    'number',
    '`1_000` (`DEFAULT_POLL_INTERVAL_MS`)',
    'Pause between claims when nothing is due (`wake` cuts it short). A worker without wake-ups (SQLite from another process) that must react sooner lowers it (`postback worker --poll-ms`).',
  ),
  /**
   * How long a claim holds: a fleet whose workers may stall longer (a suspended VM) raises it, one that
   * wants a crashed worker's jobs retaken sooner lowers it (the CLI's `--lease-ms`).
   * @defaultValue {@link DEFAULT_LEASE_MS}
   */
  leaseMs: documented(
    z.number().int().min(100).default(DEFAULT_LEASE_MS),
    'number',
    '`60_000` (`DEFAULT_LEASE_MS`)',
    "Claim lease, renewed every third of it while the job is held. A fleet whose workers may stall longer raises it; one that wants a crashed worker's jobs retaken sooner lowers it (`postback worker --lease-ms`).",
  ),
  /**
   * A send still running after this is aborted as a timeout: for a worker whose client has no timeout of
   * its own (a custom `client`), or a service slower than 30 s. @defaultValue {@link DEFAULT_SEND_TIMEOUT_MS}
   */
  sendTimeoutMs: documented(
    positiveMs().default(DEFAULT_SEND_TIMEOUT_MS),
    'number',
    '`30_000` (`DEFAULT_SEND_TIMEOUT_MS`)',
    'A send still running after this is aborted (a timeout), at most a quarter of it (and 1 s) late. For a worker whose client has no timeout of its own (a custom `client`), or a slower service.',
  ),
  /**
   * Durable backoff: a worker whose service asks for another retry schedule sets it (the CLI's
   * `--backoff-*-ms`). @defaultValue {@link DEFAULT_BACKOFF}
   */
  backoff: documented(
    z
      .strictObject({
        baseMs: positiveMs().default(DEFAULT_BACKOFF.baseMs),
        maxMs: positiveMs().default(DEFAULT_BACKOFF.maxMs),
        minMs: ms().default(DEFAULT_BACKOFF.minMs),
      })
      .prefault({}),
    '{ baseMs?, maxMs?, minMs? }',
    '`{ baseMs: 1_000, maxMs: 3_600_000, minMs: 500 }` (`DEFAULT_BACKOFF`)',
    'Durable full-jitter backoff, at least `minMs`, capped by the job\'s last chance (see "Waits answer to the deadline"); every retry (a blip too) is a recorded attempt. A worker whose service asks for another retry schedule sets it (`postback worker --backoff-base-ms` …).',
  ),
  /**
   * A 4xx whose `detail` matches makes the job `expired` (its window has closed), not `dead`: for a shop
   * whose service (or proxy) words a closed window otherwise (the spec does not show the wording).
   * @defaultValue {@link DEFAULT_WINDOW_CLOSED_PATTERN}
   */
  windowClosedPattern: documented(
    z.instanceof(RegExp).default(DEFAULT_WINDOW_CLOSED_PATTERN),
    'RegExp',
    '`/older than\\|window (?:is \\|has )?closed\\|expired\\|too (?:old\\|late)/i` (`DEFAULT_WINDOW_CLOSED_PATTERN`)',
    'A 4xx whose `detail` matches expires the job (its window has closed) instead of dead-lettering it. For a shop whose service (or proxy) words a closed window otherwise: the spec does not show the wording.',
  ),
  /**
   * A 4xx whose `detail` matches (and not `windowClosedPattern`) holds the job instead of dead-lettering
   * it: its campaign is not on s2s, which the advertiser fixes by switching it. For a shop whose service
   * words it otherwise (the spec does not show the wording). @defaultValue {@link DEFAULT_CAMPAIGN_NOT_S2S_PATTERN}
   */
  campaignNotS2sPattern: documented(
    z.instanceof(RegExp).default(DEFAULT_CAMPAIGN_NOT_S2S_PATTERN),
    'RegExp',
    '`/conversion source\\|not (?:on \\|set to \\|using )?s2s\\|pixel/i` (`DEFAULT_CAMPAIGN_NOT_S2S_PATTERN`)',
    'A 4xx whose `detail` matches (and not `windowClosedPattern`) holds the job (see [Held jobs](#held-jobs-a-campaign-not-on-s2s)) instead of dead-lettering it: its campaign is not on s2s. For a shop whose service words it otherwise: the spec does not show the wording.',
  ),
  /**
   * The statuses whose answer may hold a job (its `detail` matching `campaignNotS2sPattern`): for a shop
   * whose service answers a campaign not on s2s with another status (the spec does not show it). A 409 (a
   * conflict) is never a hold. @defaultValue {@link DEFAULT_HOLD_STATUSES}
   */
  holdStatuses: documented(
    z
      .array(
        z
          .number()
          .int()
          .min(400)
          .max(499)
          .refine((status) => status !== 409 && status !== 429, 'a 409 or 429 never holds'),
      )
      .readonly()
      .default(DEFAULT_HOLD_STATUSES),
    'number[]',
    '`[422]` (`DEFAULT_HOLD_STATUSES`)',
    "The 4xx statuses whose answer may hold a job, when its `detail` (the request's own values taken out) matches `campaignNotS2sPattern`. A 409 or a 429 never holds. For a service that answers a campaign not on s2s with another status: the spec does not show it.",
  ),
  /**
   * How long a problem's probe (one held job per account and campaign) waits before it is sent again: a
   * shop that switches campaigns and wants delivery back sooner lowers it.
   * @defaultValue {@link DEFAULT_HOLD_PROBE_MS}
   */
  holdProbeMs: documented(
    positiveMs().default(DEFAULT_HOLD_PROBE_MS),
    'number',
    '`600_000` (`DEFAULT_HOLD_PROBE_MS`)',
    "How long a problem's probe (one held job per account and campaign) waits before it is sent again (never past its last chance: see \"Waits answer to the deadline\"); the problem's other jobs wait for its answer. Its success releases the problem's held jobs at once. Lower it to see a switched campaign sooner.",
  ),
  /** What a held campaign's switch to s2s does to its held orders (`switch-options.ts`). @defaultValue `'ask'` */
  onSwitch: onSwitchOption,
  /**
   * Consecutive distinct jobs of one account refused alike (same status, same words once the request's
   * own values are taken out) before the account pauses as a systematic refusal. @defaultValue
   * {@link DEFAULT_SYSTEMATIC_REFUSAL_AFTER}
   */
  systematicRefusalAfter: documented(
    z.number().int().min(2).max(10_000).default(DEFAULT_SYSTEMATIC_REFUSAL_AFTER),
    'number',
    '`5` (`DEFAULT_SYSTEMATIC_REFUSAL_AFTER`)',
    "Consecutive distinct jobs of one account that meet the same 4xx answer (status and the service's words, the request's own values taken out) before the account pauses (cause `systematic-refusal`, `authPauseMs`, then one probe) instead of dead-lettering the rest: a wrong base path, a refusal worded otherwise than the patterns. The jobs refused before it are dead (replay them once fixed).",
  ),
  /**
   * How long a refused key pauses delivery before a probe: an operator who fixes keys within minutes
   * lowers it (the CLI's `--auth-pause-ms`). @defaultValue {@link DEFAULT_AUTH_PAUSE_MS}
   */
  authPauseMs: documented(
    positiveMs().default(DEFAULT_AUTH_PAUSE_MS),
    'number',
    '`60_000` (`DEFAULT_AUTH_PAUSE_MS`)',
    "Pause after a 401/403 (or an answer that is not the service's) before one job probes again. An operator who fixes keys within minutes lowers it (`postback worker --auth-pause-ms`).",
  ),
  /**
   * How often a running Dispatcher records its heart-beat and looks for at-risk jobs: a fleet whose
   * operators want `postback status` to see a worker sooner lowers it. @defaultValue {@link DEFAULT_WATCH_INTERVAL_MS}
   */
  watchIntervalMs: documented(
    positiveMs().default(DEFAULT_WATCH_INTERVAL_MS),
    'number',
    '`30_000` (`DEFAULT_WATCH_INTERVAL_MS`)',
    'While running: how often the worker records its heart-beat (`outbox.beat`) and looks for jobs entering the at-risk window (24 h, `DEFAULT_AT_RISK_WITHIN_MS`). A fleet whose operators want `postback status` to see a worker (or a gone one) sooner lowers it.',
  ),
  /**
   * How this worker names itself in its heart-beats: a fleet whose operator tells workers apart (a stable
   * id per deployment slot, the app's version). @defaultValue a random id, version
   * {@link DEFAULT_WORKER_VERSION}, and the host name and pid where the runtime has them
   */
  worker: documented(
    z
      .strictObject({
        id: z.string().min(1).max(200).optional(),
        version: z.string().max(100).default(DEFAULT_WORKER_VERSION),
        host: z.string().max(255).nullable().optional(),
        pid: z.number().int().nullable().optional(),
      })
      .prefault({}),
    '{ id?, version?, host?, pid? }',
    "`{ version: 'unknown' }`, a random `id`, the runtime's host and pid",
    "How this worker names itself in heart-beats. A fleet whose operator tells workers apart in `postback status` and the dashboard gives a stable id per deployment slot and the app's version.",
  ),
  /**
   * Traces of every delivery and its request, with the trace context sent to the service: an operator
   * who follows deliveries in OpenTelemetry passes `traceDeliveries({ tracer })` from
   * `@postback/metrics/otel`.
   */
  tracing: documented(
    z
      .custom<DeliveryTracing>(
        (v) => typeof v === 'object' && v !== null && isFunction((v as { delivery?: unknown }).delivery),
        'must have a delivery(job, startedAt) method (e.g. traceDeliveries from @postback/metrics/otel)',
      )
      .optional(),
    'DeliveryTracing',
    '—',
    'Traces each delivery (a span) and its HTTP request (a child CLIENT span), and sends the trace context to the service. An operator who follows deliveries in OpenTelemetry passes `traceDeliveries({ tracer })` from `@postback/metrics/otel`.',
  ),
  /**
   * The Dispatcher's own retention: while running, it prunes its outbox at start and every `everyMs`
   * (final jobs older than `olderThanMs`, a charged confirmation kept for the store's return window; the
   * ledger by its own 400-day retention). `false` turns it off (the CLI worker, which prunes clicks too).
   * @defaultValue `{ everyMs: DEFAULT_PRUNE_EVERY_MS, olderThanMs: DEFAULT_PRUNE_OLDER_THAN_MS }` (1 h, 30 d)
   */
  prune: documented(
    z
      .union([
        z.literal(false),
        z.strictObject({
          everyMs: positiveMs().default(DEFAULT_PRUNE_EVERY_MS),
          olderThanMs: ms().default(DEFAULT_PRUNE_OLDER_THAN_MS),
        }),
      ])
      .prefault({}),
    'false, or { everyMs?, olderThanMs? }',
    '`{ everyMs: 3_600_000, olderThanMs: 30 days }` (`DEFAULT_PRUNE_EVERY_MS`, `DEFAULT_PRUNE_OLDER_THAN_MS`)',
    "The Dispatcher's own retention: at start and every `everyMs` it prunes final jobs older than `olderThanMs` (never before their deadline; a charged confirmation kept for the store's return window; the ledger kept 400 days). `false` turns it off (the CLI worker prunes on its own schedule).",
  ),
  /** Clock: a test or a simulation that runs on another clock (the sandbox's). @defaultValue `Date.now` */
  now: documented(
    z.custom<() => EpochMs>(isFunction, 'must be a function returning epoch ms').default(() => Date.now),
    '() => number',
    '`Date.now`',
    "The clock. A test or a simulation that runs on another clock (the sandbox's) passes its own.",
  ),
  /** Random source in [0, 1) for backoff jitter: a test that needs it fixed. @defaultValue `Math.random` */
  random: documented(
    z
      .custom<() => number>(isFunction, 'must be a function returning a number in [0, 1)')
      .default(() => Math.random),
    '() => number',
    '`Math.random`',
    'Jitter source in [0, 1). A test that needs the backoff fixed passes its own.',
  ),
  /**
   * Lets an outside signal cut a poll short: a worker on Postgres (`LISTEN/NOTIFY`) or in the shop's own
   * process (an enqueue) that delivers new jobs at once. Called at `start()` with a `wakeUp` function; may
   * return an unsubscribe function, called at `stop()`.
   */
  wake: documented(
    z.custom<(wakeUp: () => void) => unknown>(isFunction, 'must be a function').optional(),
    '(wakeUp) => unsubscribe?',
    '—',
    "Lets an outside signal cut a poll short: a worker on Postgres (`LISTEN/NOTIFY`) or in the shop's own process (an enqueue) that delivers new jobs at once instead of at the next poll.",
  ),
});

/** Options of `createDispatcher` (input form: everything but `outbox` and `client` has a default). */
export type DispatcherOptions = z.input<typeof dispatcherOptionsSchema>;
/** Options with every default filled in. */
export type ResolvedDispatcherOptions = z.output<typeof dispatcherOptionsSchema>;

/**
 * The options table of the core README, rendered from {@link dispatcherOptionsSchema} (a test keeps the
 * two equal, so no default is written twice).
 *
 * @example
 * ```ts
 * console.log(renderDispatcherOptionsTable());
 * ```
 */
export function renderDispatcherOptionsTable(): string {
  return renderOptionsTable(dispatcherOptionsSchema.shape);
}
