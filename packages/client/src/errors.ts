/**
 * Error classes of the ad-service client. One base class, `AdServiceError`, with a literal-union `code`,
 * the HTTP `status` (null when no response arrived), the service's `detail`, and whether a retry may
 * succeed. Status-family subclasses are built by one factory, {@link errorFromResponse}, from a response.
 *
 * No error ever carries the API key: messages are built from the status and the service's `detail` only,
 * and request headers are never attached.
 */

/**
 * What went wrong, as a stable literal a program can switch on.
 * @example `if (err.code === 'unauthorized' || err.code === 'forbidden') pauseDelivery();`
 */
export type AdServiceErrorCode =
  | 'validation'
  | 'unauthorized'
  | 'payment_required'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'server'
  | 'http'
  | 'timeout'
  | 'connection'
  | 'invalid_response';

/** Options shared by every {@link AdServiceError}. */
export interface AdServiceErrorOptions {
  status?: number | null;
  detail?: string;
  retryable?: boolean;
  cause?: unknown;
}

/**
 * Base class of every error the client throws.
 *
 * @example
 * ```ts
 * try { await client.conversions.confirm(body); }
 * catch (err) { if (err instanceof AdServiceError && err.retryable) scheduleRetry(); }
 * ```
 */
export class AdServiceError extends Error {
  override name = 'AdServiceError';
  /** Stable machine-readable kind of failure. */
  readonly code: AdServiceErrorCode;
  /** HTTP status of the response, or null when none arrived (timeout, connection failure, validation). */
  readonly status: number | null;
  /** The service's `detail` (or our own description when the service sent none). */
  readonly detail: string;
  /** Whether sending the same request again may succeed. */
  readonly retryable: boolean;

  constructor(code: AdServiceErrorCode, message: string, options: AdServiceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status ?? null;
    this.detail = options.detail ?? message;
    this.retryable = options.retryable ?? false;
  }
}

/**
 * A request failed validation before anything was sent. `field` is the dotted path of the first bad field.
 *
 * @example
 * ```ts
 * catch (err) { if (err instanceof RequestValidationError) console.error(err.field); } // "creatives.0.landing_url"
 * ```
 */
export class RequestValidationError extends AdServiceError {
  override name = 'RequestValidationError';
  /** Dotted path of the offending field, e.g. `creatives.0.landing_url`. */
  readonly field: string;
  /** Every problem found, each with its field path and message. */
  readonly issues: ReadonlyArray<{ field: string; message: string }>;
  constructor(
    field: string,
    message: string,
    issues: ReadonlyArray<{ field: string; message: string }> = [],
  ) {
    super('validation', `Invalid request: ${field}: ${message}`, { detail: message });
    this.field = field;
    this.issues = issues.length > 0 ? issues : [{ field, message }];
  }
}

/**
 * 401: the key is missing or invalid. Not the request's fault; pause and alert.
 * @example `if (err instanceof AuthenticationError) pauseDelivery();`
 */
export class AuthenticationError extends AdServiceError {
  override name = 'AuthenticationError';
}
/**
 * 402: the available balance is too low (campaign creation).
 * @example `if (err instanceof PaymentRequiredError) askForTopUp();`
 */
export class PaymentRequiredError extends AdServiceError {
  override name = 'PaymentRequiredError';
}
/**
 * 403: the key lacks the scope the endpoint needs.
 * @example `if (err instanceof PermissionError) pauseDelivery();`
 */
export class PermissionError extends AdServiceError {
  override name = 'PermissionError';
}
/**
 * 404: no such object, or an object of another account (the service never tells the two apart).
 * @example `if (err instanceof NotFoundError) return null;`
 */
export class NotFoundError extends AdServiceError {
  override name = 'NotFoundError';
}
/**
 * 409 or 422: the service understood the request and refused it (conflict, rule violation).
 * @example `if (err instanceof ConflictError) deadLetter(job, err.detail);`
 */
export class ConflictError extends AdServiceError {
  override name = 'ConflictError';
}
/**
 * 429: too many requests. `retryAfterMs` is the service's `Retry-After`, when it sent one.
 * @example `if (err instanceof RateLimitError) retryIn(err.retryAfterMs ?? 1_000);`
 */
export class RateLimitError extends AdServiceError {
  override name = 'RateLimitError';
  /** Milliseconds the service asked us to wait, or null when it did not say. */
  readonly retryAfterMs: number | null;
  constructor(message: string, options: AdServiceErrorOptions & { retryAfterMs: number | null }) {
    super('rate_limited', message, { ...options, retryable: true });
    this.retryAfterMs = options.retryAfterMs;
  }
}
/**
 * 5xx: the service failed. Retryable.
 * @example `if (err instanceof ServerError) retryLater();`
 */
export class ServerError extends AdServiceError {
  override name = 'ServerError';
}
/**
 * Any other non-2xx status. 408 is retryable, the rest are not.
 * @example `if (err instanceof HttpError && err.retryable) retryLater();`
 */
export class HttpError extends AdServiceError {
  override name = 'HttpError';
}
/**
 * No complete response within the configured timeout. Retryable.
 * @example `if (err instanceof TimeoutError) retryLater();`
 */
export class TimeoutError extends AdServiceError {
  override name = 'TimeoutError';
}
/**
 * The connection failed or was reset before a complete response arrived. Retryable.
 * @example `if (err instanceof ConnectionError) retryLater();`
 */
export class ConnectionError extends AdServiceError {
  override name = 'ConnectionError';
}
/**
 * A 2xx response whose body is not the JSON the endpoint promises: not JSON (retryable) or the wrong
 * shape (not retryable; `detail` names the field).
 * @example `if (err instanceof InvalidResponseError) deadLetter(job, err.detail);`
 */
export class InvalidResponseError extends AdServiceError {
  override name = 'InvalidResponseError';
}

/**
 * Parses a `Retry-After` header (delta-seconds or HTTP date) into milliseconds from `now`.
 *
 * @example
 * ```ts
 * parseRetryAfter('7'); // 7000
 * ```
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (value == null || value.trim() === '') return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/**
 * Builds the typed error for a non-2xx response. The one place where statuses map to classes.
 *
 * @param status - the HTTP status
 * @param body - the parsed JSON body, if any (its `detail` is used when it is a string)
 * @param retryAfter - the raw `Retry-After` header, if any
 * @example
 * ```ts
 * throw errorFromResponse(res.status, await res.json().catch(() => null), res.headers.get('retry-after'));
 * ```
 */
export function errorFromResponse(status: number, body: unknown, retryAfter?: string | null): AdServiceError {
  const sent =
    body !== null && typeof body === 'object' && typeof (body as { detail?: unknown }).detail === 'string'
      ? (body as { detail: string }).detail
      : undefined;
  const detail = sent ?? `HTTP ${status}`;
  const message = `Ad service answered ${status}: ${detail}`;
  const base = { status, detail };
  switch (status) {
    case 401:
      return new AuthenticationError('unauthorized', message, base);
    case 402:
      return new PaymentRequiredError('payment_required', message, base);
    case 403:
      return new PermissionError('forbidden', message, base);
    case 404:
      return new NotFoundError('not_found', message, base);
    case 409:
    case 422:
      return new ConflictError('conflict', message, base);
    case 429:
      return new RateLimitError(message, { ...base, retryAfterMs: parseRetryAfter(retryAfter) });
    default:
      if (status >= 500) return new ServerError('server', message, { ...base, retryable: true });
      return new HttpError('http', message, { ...base, retryable: status === 408 });
  }
}
