/**
 * Sorts what a send threw into the outcome classes the Dispatcher acts on, and turns it into a reason
 * string that is safe to store and emit. Works on `AdServiceError`s from `@postback/client` and, by
 * their shape (`status`, `retryAfterMs`, `code`), on errors of any client that mimics them.
 */
import { AdServiceError } from '@postback/client/errors';

/**
 * - `auth`: 401/403 — not the job's fault: pause all delivery, do not burn the attempt.
 * - `transient`: 5xx, 408, 429, timeouts, connection failures, a 2xx whose body is not JSON (cut short),
 *   unknown errors — retry with backoff.
 * - `permanent`: any other 4xx, a 2xx of the wrong shape, a request we could not even build — dead-letter.
 */
export type FailureClass = 'auth' | 'transient' | 'permanent';

/** A classified failure. */
export interface Failure {
  class: FailureClass;
  /** Whether an in-process quick retry may help (a network blip: connection, timeout, 5xx, 408). */
  blip: boolean;
  /** HTTP status, or null when no response arrived. */
  status: number | null;
  /** For 429: how long the service asked us to wait, if it said. */
  retryAfterMs: number | null;
  /** Safe description: status and the service's `detail`, never request headers. */
  reason: string;
}

const MAX_REASON = 500;

/**
 * Removes anything shaped like a credential (`Bearer …`, `api_key=…`), in case a service or proxy echoes
 * a header back into an error body.
 *
 * @example
 * ```ts
 * redactSecrets('saw Authorization: Bearer pbsk_123'); // "saw Authorization: Bearer [redacted]"
 * ```
 */
export function redactSecrets(text: string): string {
  return text
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]')
    .replace(
      /\b(api[_-]?key|authorization|token)(["']?\s*[:=]\s*["']?)(?!(?:Bearer|Basic)\s)[^\s"',;}]+/gi,
      '$1$2[redacted]',
    );
}

function safeReason(text: string): string {
  const clean = redactSecrets(text);
  return clean.length <= MAX_REASON ? clean : `${clean.slice(0, MAX_REASON - 1)}…`;
}

function statusOf(err: unknown): number | null {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && Number.isInteger(status) ? status : null;
}

function nameOf(err: unknown): string {
  return err instanceof Error || (typeof err === 'object' && err !== null && 'name' in err)
    ? String((err as { name: unknown }).name)
    : typeof err;
}

/**
 * Classifies a send failure.
 *
 * @example
 * ```ts
 * classifyFailure(errorFromResponse(503, { detail: 'busy' })); // { class: 'transient', blip: true, status: 503, ... }
 * ```
 */
export function classifyFailure(err: unknown): Failure {
  const status = statusOf(err);
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  const reason = safeReason(
    err instanceof AdServiceError || status !== null ? message : `${nameOf(err)}: ${message}`,
  );
  const retryAfter = (err as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  const retryAfterMs = typeof retryAfter === 'number' && retryAfter >= 0 ? retryAfter : null;
  const failure = (cls: FailureClass, blip: boolean): Failure => ({
    class: cls,
    blip,
    status,
    retryAfterMs,
    reason,
  });

  if (status !== null && status >= 200 && status < 300) {
    // A 2xx we could not read: the service answered, so the status says nothing about what to do. The
    // client knows whether the same request may get a readable answer (a body cut short or rewritten by an
    // intermediary: yes; JSON of the wrong shape: no). Sending the same order again is safe (the service
    // answers a repeated order_id with the first answer), and the quick retry that follows is how the
    // campaign_id of an applied confirmation is learnt.
    return (err as { retryable?: unknown }).retryable === true
      ? failure('transient', true)
      : failure('permanent', false);
  }
  if (status === 401 || status === 403) return failure('auth', false);
  if (status === 429) return failure('transient', false);
  if (status === 408 || (status !== null && status >= 500)) return failure('transient', true);
  if (status !== null) return failure('permanent', false);
  // No response: a request we refused to build, a 2xx we could not read, or the network.
  if (code === 'validation' || code === 'invalid_response') return failure('permanent', false);
  if (code === 'timeout' || code === 'connection') return failure('transient', true);
  const name = nameOf(err);
  if (
    name === 'AbortError' ||
    name === 'TimeoutError' ||
    (err instanceof TypeError && /fetch|network|socket/i.test(message))
  ) {
    return failure('transient', true);
  }
  // Unknown: assume the world, not the job, is at fault — a wrong dead-letter loses a sale; a retry
  // costs only time, and the deadline bounds it.
  return failure('transient', false);
}
