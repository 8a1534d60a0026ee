/**
 * The worker's log: one line per event, as text (`time level event key=value ...`) or JSON lines
 * (`--log json`). Payloads are reduced to plain fields (job id, kind, order, attempts, error code and
 * message) so a log line never carries a request, a header or the API key; and as a last guard every
 * line is scrubbed of the key's literal value. Text lines escape control characters in every value
 * (a reason cannot forge a log line or reach the terminal as an escape sequence).
 */

import { jsonText, printable } from './format.ts';

/** Log line formats. */
export type LogFormat = 'text' | 'json';

/** A structured logger writing one line per call. */
export interface Logger {
  log(level: 'info' | 'warn' | 'error', event: string, fields?: Record<string, unknown>): void;
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

/** Reduces an error to code, status and message (messages of our errors never hold secrets). */
function errorFields(error: unknown): Record<string, unknown> {
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

/**
 * Creates a logger writing to `write`, removing every occurrence of each `secrets` value.
 *
 * @example
 * ```ts
 * const logger = createLogger('json', (line) => io.stdout(line), [apiKey]);
 * logger.log('info', 'worker.started', { concurrency: 8 });
 * ```
 */
export function createLogger(
  format: LogFormat,
  write: (line: string) => void,
  secrets: readonly string[] = [],
  now: () => number = Date.now,
): Logger {
  const scrub = (line: string) => {
    let out = line;
    for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join('[redacted]');
    return out;
  };
  return {
    log(level, event, fields = {}) {
      const time = new Date(now()).toISOString();
      const line =
        format === 'json'
          ? jsonText({ time, level, event, ...fields })
          : [
              time,
              level.padEnd(5),
              event,
              ...Object.entries(fields).map(([k, v]) => `${k}=${textValue(v)}`),
            ].join(' ');
      write(`${scrub(line)}\n`);
    },
  };
}
