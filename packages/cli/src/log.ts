/**
 * The worker's log, on stderr: one line per event, as JSON lines in pino's format (`--log json`) or as
 * text (`time level event key=value ...`, the default). A JSON line is exactly what pino writes —
 * `{"level":30,"time":<epoch ms>,"pid":…,"hostname":…,<fields>,"msg":"<event>"}`, levels 10 trace,
 * 20 debug, 30 info, 40 warn, 50 error, 60 fatal — so pino-pretty, pino transports and every log
 * pipeline that reads pino read it; it also carries `event` (the same as `msg`) for filters. Written by
 * hand rather than with pino: the format is a dozen lines, the worker writes a few lines a second at
 * most, and pino would bring ten packages (sonic-boom, thread-stream, ...) into a CLI a shop installs.
 *
 * Lines carry chosen fields only (job id, kind, order, attempts, status, reason, times in ISO 8601), never
 * a whole job (whose state would be a stale snapshot), a request, a header or the API key; and as a last
 * guard every line is scrubbed of the keys, in every form a service may echo them (the redactor the
 * worker gives: the client's `createRedactor`). Text lines escape control characters in every
 * value (a reason cannot forge a log line or reach the terminal as an escape sequence).
 */
import { hostname } from 'node:os';
import { jsonText, printable } from './format.ts';

/** Log line formats. */
export type LogFormat = 'text' | 'json';

/** Log levels, least severe first. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** pino's numbers of the levels. */
export const LOG_LEVEL_NUMBERS: Readonly<Record<LogLevel, number>> = Object.freeze({
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
});

/** The levels, for `--log-level`. */
export const LOG_LEVELS = Object.keys(LOG_LEVEL_NUMBERS) as readonly LogLevel[];

/** A structured logger writing one line per call, dropping lines below its level. */
export interface Logger {
  log(level: LogLevel, event: string, fields?: Record<string, unknown>): void;
  /** Whether a line at `level` would be written. */
  enabled(level: LogLevel): boolean;
}

/** Fields of a job worth a log line. Anything else a job holds (click token, lease) stays out. */
function jobFields(job: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['id', 'kind', 'orderId', 'state', 'attempts', 'campaignId']) {
    if (job[key] !== undefined) out[key] = job[key];
  }
  if (typeof job.deadline === 'number') out.deadline = new Date(job.deadline).toISOString();
  return out;
}

/**
 * Reduces an error to name, code, status and message (messages of our errors never hold secrets).
 *
 * @example
 * ```ts
 * errorFields(new Error('disk full')); // { name: 'Error', message: 'disk full' }
 * ```
 */
export function errorFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const out: Record<string, unknown> = { name: error.name, message: error.message };
  const e = error as Error & { code?: unknown; status?: unknown };
  if (typeof e.code === 'string') out.code = e.code;
  if (typeof e.status === 'number') out.status = e.status;
  return out;
}

/**
 * Flattens an event payload to loggable fields: jobs and errors are reduced, plain values kept, and
 * nested objects other than those dropped unless they are plain records of primitives.
 *
 * @example
 * ```ts
 * safeFields({ job, error }); // { job: { id, kind, orderId, ... }, error: { code, message } }
 * ```
 */
export function safeFields(payload: unknown): Record<string, unknown> {
  if (payload === null || payload === undefined) return {};
  if (typeof payload !== 'object') return { value: payload };
  if (payload instanceof Error) return { error: errorFields(payload) };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payload as Record<string, unknown>)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) out[key] = value;
    else if (value instanceof Error) out[key] = errorFields(value);
    else if (key === 'job' && typeof value === 'object')
      out[key] = jobFields(value as Record<string, unknown>);
    else if (key === 'jobs' && Array.isArray(value)) out.jobs = value.length;
    else if (
      typeof value === 'object' &&
      Object.values(value as object).every((v) => v === null || typeof v !== 'object')
    ) {
      out[key] = value;
    }
  }
  return out;
}

function textValue(value: unknown): string {
  if (typeof value === 'string') {
    const safe = printable(value);
    return /[\s="]/.test(safe) ? JSON.stringify(safe) : safe;
  }
  if (value !== null && typeof value === 'object') {
    return Object.entries(value)
      .map(([k, v]) => `${k}:${textValue(v)}`)
      .join(',');
  }
  return String(value);
}

/** What a job contributes to an event's line: who it is, never its (stale) state or its click. */
function jobRef(job: unknown): Record<string, unknown> {
  if (job === null || typeof job !== 'object') return {};
  const j = job as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [from, to] of [
    ['id', 'jobId'],
    ['kind', 'kind'],
    ['orderId', 'orderId'],
    ['attempts', 'attempts'],
  ] as const) {
    if (j[from] !== undefined) out[to] = j[from];
  }
  if (typeof j.deadline === 'number') out.deadline = new Date(j.deadline).toISOString();
  // Many advertisers: the job's account (not a secret), when it has one.
  if (typeof j.account === 'string') out.account = j.account;
  return out;
}

const isoOf = (value: unknown) => (typeof value === 'number' ? new Date(value).toISOString() : undefined);

/**
 * The fields of one Dispatcher event's log line: the job's id, kind, order and attempts, then what the
 * event says (campaign, status, reason, next attempt), times in ISO 8601. Unknown events fall back to
 * {@link safeFields}.
 *
 * @example
 * ```ts
 * eventFields('delivered', { job, campaignId: 'cmp_1', at }); // { jobId, kind, orderId, attempts, deadline, campaignId, at }
 * ```
 */
export function eventFields(event: string, payload: unknown): Record<string, unknown> {
  if (payload === null || typeof payload !== 'object') return safeFields(payload);
  const p = payload as Record<string, unknown>;
  const defined = (fields: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  switch (event) {
    case 'delivered':
      return defined({ ...jobRef(p.job), campaignId: p.campaignId, at: isoOf(p.at) });
    case 'retried':
      return defined({
        ...jobRef(p.job),
        status: p.status,
        reason: p.reason,
        nextAttemptAt: isoOf(p.nextAttemptAt),
        lastChance: p.lastChance,
      });
    case 'dead':
      return defined({ ...jobRef(p.job), status: p.status, reason: p.reason });
    case 'expired':
      return defined({ ...jobRef(p.job), reason: p.reason });
    case 'at-risk':
      return defined({ ...jobRef(p.job), inMs: p.inMs });
    // Once per job: the host that stamped it runs ahead; it is sent by `sendBy` (its deadline less the skew).
    case 'clock-skew':
      return defined({ ...jobRef(p.job), skewMs: p.skewMs, stamp: p.stamp, sendBy: isoOf(p.deadline) });
    // `cause`: auth (401/403), misconfigured (an answer not the service's), rate-limited (a 429: its
    // Retry-After, then one probe) or systematic-refusal (distinct jobs refused alike).
    case 'paused':
      return defined({ status: p.status, reason: p.reason, until: isoOf(p.until), cause: p.cause });
    // Per-account keys: the account (null: jobs without one) whose key was refused or is unknown, or met a 429.
    case 'account-paused':
      return defined({
        account: p.account,
        status: p.status,
        reason: p.reason,
        until: isoOf(p.until),
        cause: p.cause,
      });
    case 'account-resumed':
      return defined({ account: p.account, pausedForMs: p.pausedForMs });
    // A campaign not on s2s (`campaignId` null: its answer named none): its jobs are held, not dead.
    case 'held':
      return defined({
        ...jobRef(p.job),
        account: p.account,
        campaignId: p.campaignId,
        reason: p.reason,
        nextProbeAt: isoOf(p.nextProbeAt),
      });
    case 'hold-released':
      return defined({
        account: p.account,
        campaignId: p.campaignId,
        released: p.released,
        heldForMs: p.heldForMs,
      });
    // Held orders' campaign accepts s2s: `onSwitch` ask (they await a decision), send or drop (`decided`).
    case 'switch-seen':
      return defined({
        account: p.account,
        campaignId: p.campaignId,
        at: isoOf(p.at),
        onSwitch: p.onSwitch,
        decided: p.decided,
      });
    // Shadow mode: the job was recorded as it would be sent (its path; the body, with the click token, is
    // the report's, not the log's).
    case 'shadowed':
      return defined({
        ...jobRef(p.job),
        path: (p.request as { path?: unknown } | undefined)?.path,
        at: isoOf(p.at),
      });
    case 'error':
      return defined({ during: p.during, error: errorFields(p.error) });
    default:
      return safeFields(payload);
  }
}

/** pino's own keys: a field of the same name is renamed (`_level`), never overrides them. */
const RESERVED = new Set(['level', 'time', 'pid', 'hostname', 'event', 'msg']);

function unreserved(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) out[RESERVED.has(key) ? `_${key}` : key] = value;
  return out;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Lines below this level are dropped. @defaultValue 'info' */
  level?: LogLevel;
  /** pino's `pid` and `hostname` (injected in tests). */
  pid?: number;
  hostname?: string;
}

/**
 * Creates a logger writing to `write` each line after `redact` (the keys removed: pass a function that
 * knows the current keys, so keys reloaded from a keys file are scrubbed as soon as they are known).
 *
 * @example
 * ```ts
 * const logger = createLogger('json', (line) => io.stderr(line), createRedactor(apiKey), Date.now, { level: 'debug' });
 * logger.log('info', 'worker.started', { concurrency: 8 });
 * // {"level":30,"time":1767312000000,"pid":4242,"hostname":"box","event":"worker.started","concurrency":8,"msg":"worker.started"}
 * ```
 */
export function createLogger(
  format: LogFormat,
  write: (line: string) => void,
  redact: (line: string) => string = (line) => line,
  now: () => number = Date.now,
  options: LoggerOptions = {},
): Logger {
  const threshold = LOG_LEVEL_NUMBERS[options.level ?? 'info'];
  const pid = options.pid ?? process.pid;
  const host = options.hostname ?? hostname();
  const enabled = (level: LogLevel) => LOG_LEVEL_NUMBERS[level] >= threshold;
  return {
    enabled,
    log(level, event, fields = {}) {
      if (!enabled(level)) return;
      const time = now();
      const line =
        format === 'json'
          ? // pino's order: level, time, pid, hostname, the fields, msg last.
            jsonText({
              level: LOG_LEVEL_NUMBERS[level],
              time,
              pid,
              hostname: host,
              event,
              ...unreserved(fields),
              msg: event,
            })
          : [
              new Date(time).toISOString(),
              level.padEnd(5),
              event,
              ...Object.entries(fields).map(([k, v]) => `${k}=${textValue(v)}`),
            ].join(' ');
      write(`${redact(line)}\n`);
    },
  };
}
