/**
 * The base error class of `@postback/core`. Every error core throws on purpose extends `PostbackError`,
 * so a program can `instanceof` once and switch on the literal `code`. Errors of the ad-service client
 * (`AdServiceError` from `@postback/client`) are a separate family: they describe the service's answer.
 *
 * New codes are added to {@link PostbackErrorCode} (additively) by the module that throws them.
 */

/** What went wrong, as a stable literal a program can switch on. */
export type PostbackErrorCode =
  /** A confirm or refund request is malformed (see `JobValidationError`). */
  | 'job_validation'
  /** An options object has an unknown key or a bad value (see `OptionsError`). */
  | 'invalid_options'
  /** A capture-side problem (token, cookie, consent); the capture module narrows it further. */
  | 'capture'
  /** An outbox or click store was used after `close()` (see `OutboxClosedError`). */
  | 'outbox_closed';

/**
 * Base class of the errors core throws.
 *
 * @example
 * ```ts
 * try { await outbox.confirm(input); }
 * catch (err) { if (err instanceof PostbackError && err.code === 'job_validation') return badRequest(err.message); }
 * ```
 */
export class PostbackError extends Error {
  override name = 'PostbackError';
  /** Stable machine-readable kind of failure. */
  readonly code: PostbackErrorCode;

  constructor(code: PostbackErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

/**
 * An options object was rejected: an unknown key (often a typo) or a value out of range. `field` names
 * the offending option by its dotted path.
 *
 * @example
 * ```ts
 * createDispatcher({ outbox, client, concurency: 4 }); // OptionsError: concurency: unknown option
 * ```
 */
export class OptionsError extends PostbackError {
  override name = 'OptionsError';
  declare readonly code: 'invalid_options';
  /** Dotted path of the offending option, e.g. `backoff.baseMs`. */
  readonly field: string;

  constructor(field: string, message: string) {
    super('invalid_options', `Invalid option ${field}: ${message}`);
    this.field = field;
  }
}

/**
 * An outbox (or click store) was used after `close()`. Every store throws this one class, whatever its
 * backend, so a shutting-down app can tell "closed" from a real failure.
 *
 * @example
 * ```ts
 * await outbox.close();
 * await outbox.confirm(input).catch((err) => err instanceof OutboxClosedError); // true
 * ```
 */
export class OutboxClosedError extends PostbackError {
  override name = 'OutboxClosedError';
  declare readonly code: 'outbox_closed';
  /** Which store, e.g. `the SQLite outbox on postback.db`. */
  readonly store: string;

  constructor(store: string) {
    super('outbox_closed', `${store} is closed`);
    this.store = store;
  }
}
