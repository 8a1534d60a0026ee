/**
 * What the dashboard tells its host about requests that went wrong, split by whose fault it was: a
 * client's malformed or refused request (answered with a 4xx; one short line, no stack, nothing of the
 * request echoed) or the store failing (answered with a 500; the error logged for the operator, the page
 * only reads "the outbox could not answer").
 */

/** A request that went wrong, as `onRequestError` is told of it. */
export interface DashboardRequestError {
  /** `client`: the request's own fault (a 4xx); `store`: the outbox failed (a 500). */
  kind: 'client' | 'store';
  /** The status answered. */
  status: number;
  /** What went wrong, in our words (never the request's own text). */
  message: string;
  /** The error thrown, for a store failure. */
  cause?: unknown;
}

/**
 * The default `onRequestError`: a `console.warn` line for a client error, `console.error` with the
 * error for a store failure.
 *
 * @example
 * ```ts
 * logRequestError({ kind: 'client', status: 400, message: 'the job id is not a valid escape' });
 * ```
 */
export function logRequestError(error: DashboardRequestError): void {
  if (error.kind === 'client') {
    console.warn(`postback dashboard: refused a request (${error.status}): ${error.message}`);
  } else {
    console.error(`postback dashboard: the outbox failed (${error.status}): ${error.message}`, error.cause);
  }
}
