/**
 * Error classes of the ad-service client. One base class, `AdServiceError`, with a literal-union `code`,
 * the HTTP `status` (null when no response arrived), the service's `detail`, whether a retry may succeed
 * and how long the service asked us to wait. Status-family subclasses are built by one factory,
 * {@link errorFromResponse}, from a response.
 *
 * No error ever carries the API key: request headers are never attached, and every text that enters an
 * error (message, detail, the causes' messages and stacks) passes through the `redact` function the
 * client builds from its key — once, here, in the constructor.
 */
import { createRedactor, REDACTED } from './redact.ts';
import { parseRetryAfter } from './retry-after.ts';

export { createRedactor, REDACTED, redactKey } from './redact.ts';
export { MAX_RETRY_AFTER_MS, parseRetryAfter } from './retry-after.ts';

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
  | 'transport_unavailable'
  | 'invalid_response';

/** Options shared by every {@link AdServiceError}. */
export interface AdServiceErrorOptions {
  /** HTTP status of the response; null or absent when none arrived. */
  status?: number | null;
  /** The service's `detail`, or our own description. @defaultValue the message */
  detail?: string;
  /** Whether sending again may help. @defaultValue false */
  retryable?: boolean;
  /** Milliseconds the service asked us to wait (its `Retry-After`). @defaultValue null */
  retryAfterMs?: number | null;
  /** Whether `detail` is the service's own (a JSON error body with a string `detail`). @defaultValue false */
  detailFromService?: boolean;
  /** The underlying error; kept as a scrubbed copy (name, message, stack, code and causes only). */
  cause?: unknown;
  /**
   * Removes secrets from every text that enters the error (message, detail, cause). The client passes
   * one built from its API key with {@link createRedactor}; without it only `Bearer <token>` is removed.
   */
  redact?: (text: string) => string;
}

const bearerOnly = createRedactor([]);

/**
 * A copy of `cause` that holds only text that went through `redact`: name, message, stack, the string
 * or number `code`/`errno`/`syscall`, and its own cause, to a depth of four. Anything else an error may
 * carry (a raw packet, headers, a response body) is left behind.
 */
function scrubCause(cause: unknown, redact: (text: string) => string, depth = 0): unknown {
  if (cause === null || cause === undefined) return cause;
  if (typeof cause !== 'object') return redact(String(cause));
  if (depth >= 4) return REDACTED;
  const source = cause as { name?: unknown; message?: unknown; stack?: unknown; cause?: unknown };
  const copy = new Error(redact(typeof source.message === 'string' ? source.message : ''));
  const name = typeof source.name === 'string' ? redact(source.name) : 'Error';
  Object.defineProperty(copy, 'name', { value: name, configurable: true, writable: true });
  copy.stack = typeof source.stack === 'string' ? redact(source.stack) : `${name}: ${copy.message}`;
  for (const key of ['code', 'errno', 'syscall'] as const) {
    const value = (cause as Record<string, unknown>)[key];
    if (typeof value === 'string') Object.assign(copy, { [key]: redact(value) });
    else if (typeof value === 'number') Object.assign(copy, { [key]: value });
  }
  if (source.cause !== undefined) {
    Object.defineProperty(copy, 'cause', {
      value: scrubCause(source.cause, redact, depth + 1),
      configurable: true,
      writable: true,
    });
  }
  return copy;
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
  /**
   * Whether sending the same request again may help: 5xx, 408, 429, timeouts, connection failures and a
   * 2xx whose body is not JSON (or past the answer bounds). The one place that decides it; core's
   * Dispatcher reads it.
   */
  readonly retryable: boolean;
  /**
   * Milliseconds the service asked us to wait before sending again, from its `Retry-After` header
   * (delta-seconds or an HTTP date), whatever the status; null when it sent none (or no response came).
   */
  readonly retryAfterMs: number | null;
  /**
   * True only when the error body was JSON with a string `detail` (the service's own error shape); false
   * for a proxy's page, an empty or HTML 404 from a wrong base URL, a timeout, etc.
   */
  readonly detailFromService: boolean;

  constructor(code: AdServiceErrorCode, message: string, options: AdServiceErrorOptions = {}) {
    const redact = options.redact ?? bearerOnly;
    super(
      redact(message),
      options.cause === undefined ? undefined : { cause: scrubCause(options.cause, redact) },
    );
    this.code = code;
    this.status = options.status ?? null;
    this.detail = options.detail === undefined ? this.message : redact(options.detail);
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs ?? null;
    this.detailFromService = options.detailFromService ?? false;
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
    // Field paths and messages come from our own schemas, never from the caller's values.
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
 * 429: too many requests. Retryable; `retryAfterMs` (on every error) is the service's `Retry-After`.
 * @example `if (err instanceof RateLimitError) retryIn(err.retryAfterMs ?? 1_000);`
 */
export class RateLimitError extends AdServiceError {
  override name = 'RateLimitError';
  constructor(message: string, options: AdServiceErrorOptions = {}) {
    super('rate_limited', message, { ...options, retryable: true });
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
 * The transport cannot work in this runtime, so no attempt can ever succeed: network access is denied
 * (Deno's `NotCapable`, Node's permission model), the transport's API is missing (Bun's placeholder
 * `undici`, no global `fetch`), or its dispatcher is invalid. Not retryable: a configuration error, which
 * core's Dispatcher treats as `misconfigured` (it pauses delivery and says why). The message names the
 * underlying cause; `maybeSent` is false unless the request may have left before the failure showed.
 * Ordinary refusals and resets are {@link ConnectionError}s.
 * @example `if (err instanceof TransportUnavailableError) alert('fix the runtime: ' + err.message);`
 */
export class TransportUnavailableError extends AdServiceError {
  override name = 'TransportUnavailableError';
  /** Whether the request may have reached the service before the failure showed. */
  readonly maybeSent: boolean;
  constructor(message: string, options: AdServiceErrorOptions & { maybeSent?: boolean } = {}) {
    const { maybeSent = false, ...rest } = options;
    super('transport_unavailable', message, { ...rest, retryable: false });
    this.maybeSent = maybeSent;
  }
}
/**
 * A 2xx response whose body the client cannot read: not JSON at all, larger than `maxAnswerBytes` or
 * nested deeper than `maxAnswerDepth` (retryable), or JSON that is not an object or whose known fields
 * have the wrong type (not retryable; `detail` names the field). `status`
 * is the 2xx: the service accepted the request, so treat it as applied, whatever the body.
 * @example `if (err instanceof InvalidResponseError && err.status !== null) markApplied(job);`
 */
export class InvalidResponseError extends AdServiceError {
  override name = 'InvalidResponseError';
}

/** Settings of {@link errorFromResponse} beyond the response itself. */
export interface ErrorFromResponseOptions {
  /** Removes secrets from the service's text (see {@link createRedactor}). */
  redact?: (text: string) => string;
  /** Current time in epoch ms, to turn an HTTP-date `Retry-After` into a wait. @defaultValue Date.now() */
  now?: number;
}

/**
 * Builds the typed error for a non-2xx response. The one place where statuses map to classes, where
 * `Retry-After` becomes `retryAfterMs` (for every status) and where the service's text is redacted.
 *
 * @param status - the HTTP status
 * @param body - the parsed JSON body, if any (its `detail` is used when it is a string)
 * @param retryAfter - the raw `Retry-After` header, if any
 * @param options - the redactor and clock
 * @example
 * ```ts
 * throw errorFromResponse(res.status, await res.json().catch(() => null), res.headers.get('retry-after'));
 * ```
 */
export function errorFromResponse(
  status: number,
  body: unknown,
  retryAfter?: string | null,
  options: ErrorFromResponseOptions = {},
): AdServiceError {
  const sent =
    body !== null && typeof body === 'object' && typeof (body as { detail?: unknown }).detail === 'string'
      ? (body as { detail: string }).detail
      : undefined;
  const detail = sent ?? `HTTP ${status}`;
  const message = `Ad service answered ${status}: ${detail}`;
  const base: AdServiceErrorOptions = {
    status,
    detail,
    retryAfterMs: parseRetryAfter(retryAfter, options.now),
    detailFromService: sent !== undefined,
    ...(options.redact ? { redact: options.redact } : {}),
  };
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
      return new RateLimitError(message, base);
    default:
      if (status >= 500) return new ServerError('server', message, { ...base, retryable: true });
      return new HttpError('http', message, { ...base, retryable: status === 408 });
  }
}
