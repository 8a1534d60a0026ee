/**
 * Traces of the Dispatcher's deliveries through `@opentelemetry/api`, given to it as its `tracing` option:
 * one INTERNAL span per delivery of a job (`postback.deliver`: admitted, sent, recorded) with one CLIENT
 * child span per HTTP request, named and described as OpenTelemetry's HTTP client conventions ask
 * (`POST /v1/conversions/s2s`; `server.address`, `url.full`, `url.template`, `http.response.status_code`,
 * `error.type`). The request carries the client span's context (`traceparent`) through the registered
 * propagator (none registered: no header). A retry is the job's next delivery: its own span and request.
 * Never the API key or the click token, nor the service's `detail` (a misbehaving service may echo a
 * secret in it).
 */
import {
  type Attributes,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { DeliveryTracing, Job } from '@postback/core';
import type { TracedRequest, TracedRequestEnd } from '@postback/core/store';

/** Options of {@link traceDeliveries}. */
export interface TraceDeliveriesOptions {
  /** Where spans go, e.g. `trace.getTracer('postback')`. */
  tracer: Tracer;
}

/** Span attribute names: the conventions' own, and `postback.*` for the job. */
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
  resendCount: 'http.request.resend_count',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  urlFull: 'url.full',
  urlTemplate: 'url.template',
  errorType: 'error.type',
} as const;

/** The name of a delivery's span. */
export const DELIVERY_SPAN_NAME = 'postback.deliver';

/** How a delivery ended that is a failure for its span (a retry too: that request failed). */
const FAILED = new Set(['retried', 'dead', 'expired']);

/**
 * The Dispatcher's `tracing`: spans of every delivery and request, and the trace context sent to the
 * service. A successful span's status is left unset (as the conventions ask); a failed one is ERROR with
 * `error.type` (the status as text, or the error's class: `TimeoutError`).
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * const dispatcher = createDispatcher({ outbox, client, tracing: traceDeliveries({ tracer: trace.getTracer('postback') }) });
 * ```
 */
export function traceDeliveries({ tracer }: TraceDeliveriesOptions): DeliveryTracing {
  const urlAttributes = urlReader();
  return {
    delivery(job, startedAt) {
      const span = tracer.startSpan(DELIVERY_SPAN_NAME, {
        kind: SpanKind.INTERNAL,
        startTime: startedAt,
        attributes: jobAttributes(job),
      });
      const parent = trace.setSpan(context.active(), span);
      return {
        request: (request) => requestTrace(tracer, parent, job, request, urlAttributes(request.url)),
        end({ outcome, endedAt }) {
          span.setAttribute(SPAN_ATTRIBUTES.outcome, outcome);
          if (FAILED.has(outcome)) {
            span.setAttribute(SPAN_ATTRIBUTES.errorType, outcome);
            span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
          }
          span.end(endedAt);
        },
      };
    },
  };
}

function jobAttributes(job: Job): Attributes {
  const attributes: Attributes = {
    [SPAN_ATTRIBUTES.orderId]: job.orderId,
    [SPAN_ATTRIBUTES.jobId]: job.id,
    [SPAN_ATTRIBUTES.kind]: job.kind,
    [SPAN_ATTRIBUTES.attempt]: job.attempts,
  };
  if (job.account !== null && job.account !== undefined) attributes[SPAN_ATTRIBUTES.account] = job.account;
  return attributes;
}

/**
 * Reads `server.address`, `server.port` and `url.full` of a request's URL (core leaves out user info and
 * query), keeping the last one read: every request of a Dispatcher goes to one of two URLs.
 */
function urlReader(): (url: string | null) => Attributes {
  let last: { url: string | null; attributes: Attributes } = { url: null, attributes: {} };
  return (url) => {
    if (url !== last.url) last = { url, attributes: readUrl(url) };
    return last.attributes;
  };
}

function readUrl(url: string | null): Attributes {
  if (url === null) return {};
  try {
    const u = new URL(url);
    const port = u.port === '' ? (u.protocol === 'https:' ? 443 : 80) : Number(u.port);
    return {
      [SPAN_ATTRIBUTES.serverAddress]: u.hostname.replace(/^\[|\]$/g, ''),
      [SPAN_ATTRIBUTES.serverPort]: port,
      [SPAN_ATTRIBUTES.urlFull]: `${u.origin}${u.pathname}`,
    };
  } catch {
    return {};
  }
}

function requestTrace(
  tracer: Tracer,
  parent: ReturnType<typeof context.active>,
  job: Job,
  request: TracedRequest,
  url: Attributes,
): { headers?: Record<string, string>; end(end: TracedRequestEnd): void } {
  const attributes: Attributes = {
    [SPAN_ATTRIBUTES.method]: request.method,
    [SPAN_ATTRIBUTES.urlTemplate]: request.path,
    ...url,
    [SPAN_ATTRIBUTES.orderId]: job.orderId,
    [SPAN_ATTRIBUTES.attempt]: request.attempt,
  };
  if (request.attempt > 1) attributes[SPAN_ATTRIBUTES.resendCount] = request.attempt - 1;
  const span: Span = tracer.startSpan(
    `${request.method} ${request.path}`,
    { kind: SpanKind.CLIENT, startTime: request.startedAt, attributes },
    parent,
  );
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(parent, span), headers);
  return {
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    end({ endedAt, outcome, status, errorType }) {
      span.setAttribute(SPAN_ATTRIBUTES.outcome, outcome);
      if (status !== null) span.setAttribute(SPAN_ATTRIBUTES.status, status);
      if (errorType !== null) {
        span.setAttribute(SPAN_ATTRIBUTES.errorType, errorType);
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
      }
      span.end(endedAt);
    },
  };
}
