/**
 * A span per send of a job, built from the Dispatcher's `attempt` event after the send ended: it starts at
 * `attempt.startedAt` and lasts `attempt.durationMs`. Attributes name the job (order id, account, kind,
 * attempt number) and how it ended (outcome, HTTP status); never the API key or the click token, nor the
 * service's `detail` (a misbehaving service may echo a secret in it).
 */
import { type Attributes, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { DispatcherLike } from '../source.ts';

/** Options of {@link traceDispatcher}. */
export interface TraceDispatcherOptions {
  /** Where spans go, e.g. `trace.getTracer('postback')`. */
  tracer: Tracer;
}

/** Span attribute names. */
export const SPAN_ATTRIBUTES = {
  orderId: 'postback.order_id',
  /** The job's advertiser account; left out for jobs without one. Not a secret (a reference, never a key). */
  account: 'postback.account',
  jobId: 'postback.job.id',
  kind: 'postback.job.kind',
  attempt: 'postback.attempt',
  outcome: 'postback.outcome',
  status: 'http.response.status_code',
  method: 'http.request.method',
} as const;

/**
 * Makes one CLIENT span per send, named `postback confirm` or `postback refund`; its status is ERROR
 * unless the service accepted the job, and left unset when it did (as the OpenTelemetry conventions
 * ask). Returns the function that stops it.
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * const stop = traceDispatcher(dispatcher, { tracer: trace.getTracer('postback') });
 * ```
 */
export function traceDispatcher(dispatcher: DispatcherLike, { tracer }: TraceDispatcherOptions): () => void {
  const off = dispatcher.on('attempt', ({ job, attempt }) => {
    const attributes: Attributes = {
      [SPAN_ATTRIBUTES.orderId]: job.orderId,
      [SPAN_ATTRIBUTES.jobId]: job.id,
      [SPAN_ATTRIBUTES.kind]: job.kind,
      [SPAN_ATTRIBUTES.attempt]: job.attempts,
      [SPAN_ATTRIBUTES.outcome]: attempt.outcome,
      [SPAN_ATTRIBUTES.method]: 'POST',
    };
    if (attempt.status !== null) attributes[SPAN_ATTRIBUTES.status] = attempt.status;
    if (job.account !== null && job.account !== undefined) attributes[SPAN_ATTRIBUTES.account] = job.account;
    const span = tracer.startSpan(`postback ${job.kind}`, {
      kind: SpanKind.CLIENT,
      startTime: attempt.startedAt,
      attributes,
    });
    // The conventions leave a successful span's status unset (OK is for an application overriding an error).
    if (attempt.outcome !== 'delivered')
      span.setStatus({ code: SpanStatusCode.ERROR, message: attempt.outcome });
    span.end(attempt.startedAt + attempt.durationMs);
  });
  return () => {
    if (typeof off === 'function') off();
  };
}
