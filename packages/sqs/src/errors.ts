/**
 * Errors of the SQS outbox. One base class with a literal-union `code`; the AWS SDK's own error is kept as
 * `cause`. Messages name the queue by URL only: queue URLs carry no credentials, and the SDK's credentials
 * never reach an error built here.
 */

/** What went wrong, as a stable literal a program can switch on. */
export type SqsOutboxErrorCode = 'configuration' | 'unsupported' | 'malformed_message' | 'send_failed';

/**
 * Base class of every error `@postback/sqs` throws itself (the SDK's errors pass through as `cause`).
 *
 * @example
 * ```ts
 * try { await outbox.get(id); }
 * catch (err) { if (err instanceof SqsOutboxError && err.code === 'unsupported') useTheConsole(); }
 * ```
 */
export class SqsOutboxError extends Error {
  override name = 'SqsOutboxError';
  readonly code: SqsOutboxErrorCode;
  constructor(code: SqsOutboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * Thrown by the Outbox methods SQS cannot answer (`get`, `getByOrder`): SQS has no lookup by id or key.
 *
 * @example
 * ```ts
 * await outbox.get('job-1'); // throws SqsUnsupportedError
 * ```
 */
export class SqsUnsupportedError extends SqsOutboxError {
  override name = 'SqsUnsupportedError';
  constructor(operation: string, why: string) {
    super('unsupported', `${operation} is not supported by the SQS outbox: ${why}`);
  }
}

/**
 * A message whose body is not a postback job of this format. It never blocks the queue: the consumer moves
 * it to the dead-letter queue with this error's message as the reason.
 *
 * @example
 * ```ts
 * try { decodeJobBody(body); } catch (err) { if (err instanceof MalformedMessageError) console.log(err.field); }
 * ```
 */
export class MalformedMessageError extends SqsOutboxError {
  override name = 'MalformedMessageError';
  /** The field that was missing or wrong (`body` when the body is not JSON at all). */
  readonly field: string;
  constructor(field: string, message: string) {
    super('malformed_message', `malformed postback message: ${field}: ${message}`);
    this.field = field;
  }
}
