/**
 * The error capture throws for a programming mistake. Capture never throws because of request data (bad
 * tokens and bad cookies are ignored and reported through `onInvalid`); invalid options raise core's
 * `OptionsError` at construction, naming the option and never echoing its value.
 */
import { PostbackError } from '../errors.ts';

/** Why capture refused: the click was read on a request the capture middleware never saw. */
export type CaptureErrorReason = 'not-installed';

/**
 * Thrown when the click is read (`confirmOrder`) on a request the middleware did not handle — usually
 * `app.use(postback(...))` registered after the route, or on another router.
 *
 * @example
 * ```ts
 * try {
 *   await confirmOrder(req, outbox, order);
 * } catch (error) {
 *   if (error instanceof CaptureError && error.reason === 'not-installed') console.error(error.message);
 * }
 * ```
 */
export class CaptureError extends PostbackError {
  override name = 'CaptureError';
  declare readonly code: 'capture';
  readonly reason: CaptureErrorReason;

  constructor(reason: CaptureErrorReason, message: string) {
    super('capture', message);
    this.reason = reason;
  }
}
