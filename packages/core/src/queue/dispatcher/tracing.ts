/**
 * What a tracer (OpenTelemetry's, through `@postback/metrics/otel`) is told while a job is delivered: the
 * delivery (admitted, sent, recorded) and each HTTP request it makes, with the headers a request carries
 * (trace context). Core depends on no tracing library: it calls these hooks, and without
 * `DispatcherOptions.tracing` it calls nothing.
 */
import { CLIENT_OWN_HEADERS, HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN } from '@postback/client/headers';
import type { EpochMs } from '../../policy.ts';
import type { AttemptOutcome, Job } from '../job-types.ts';
import type { JobOutcome } from './held-jobs.ts';

/** An HTTP request of a delivery, about to leave. Never carries the key or the click token. */
export interface TracedRequest {
  method: 'POST';
  /** The endpoint's path, the same for every job (`/v1/conversions/s2s`, `/v1/conversions/s2s/refund`). */
  path: string;
  /**
   * The full URL (the client's base URL with the path), without user info, query or fragment; null when
   * the client does not say where it sends (`ConversionsClient.baseUrl`).
   */
  url: string | null;
  /** The job's attempt number (1 for the first request ever made for it). */
  attempt: number;
  startedAt: EpochMs;
}

/** How a request ended. */
export interface TracedRequestEnd {
  endedAt: EpochMs;
  /** How the attempt history records it (`delivered`, `transient`, `permanent`, …). */
  outcome: AttemptOutcome;
  /** The status of the service's answer, or null when none was read (a timeout, a reset). */
  status: number | null;
  /** Null when the service accepted it; else the status as text (`"503"`) or the class of the error thrown (`"TimeoutError"`). */
  errorType: string | null;
}

/** One request's trace. */
export interface RequestTrace {
  /** Headers to send with the request (e.g. `traceparent`); the client's own (`authorization`, …) cannot be replaced. */
  readonly headers?: Readonly<Record<string, string>>;
  end(end: TracedRequestEnd): void;
}

/** One delivery's trace: from its turn to send until its outcome is recorded. */
export interface DeliveryTrace {
  /** A request is about to leave (at most one per delivery: a retry is the job's next delivery). */
  request(request: TracedRequest): RequestTrace;
  /** The delivery ended: how this worker left the job (`deferred`: held back by a pause, unsent). */
  end(end: { outcome: JobOutcome; endedAt: EpochMs }): void;
}

/**
 * Hooks told of every delivery and request (`DispatcherOptions.tracing`): `traceDeliveries` from
 * `@postback/metrics/otel` makes OpenTelemetry spans of them. A hook that throws is reported as an
 * `error` event and never disturbs delivery.
 */
export interface DeliveryTracing {
  delivery(job: Job, startedAt: EpochMs): DeliveryTrace;
}

const noRequest: RequestTrace = { end() {} };
const noDelivery: DeliveryTrace = { request: () => noRequest, end() {} };

/**
 * Wraps `tracing` so that a hook that throws is reported through `onError` and ignored (no headers, no
 * further calls); without `tracing`, a trace that does nothing.
 */
export function safeTracing(
  tracing: DeliveryTracing | undefined,
  onError: (error: unknown) => void,
): (job: Job, startedAt: EpochMs) => DeliveryTrace {
  if (tracing === undefined) return () => noDelivery;
  const guard = <T>(fn: () => T, fallback: T): T => {
    try {
      return fn();
    } catch (error) {
      onError(error);
      return fallback;
    }
  };
  return (job, startedAt) => {
    const trace = guard(() => tracing.delivery(job, startedAt), noDelivery);
    return {
      request: (request) => {
        const r = guard(() => trace.request(request), noRequest);
        const headers = guard(() => traceHeaders(r.headers), undefined);
        return {
          ...(headers === undefined ? {} : { headers }),
          end: (end) => guard(() => r.end(end), undefined),
        };
      },
      end: (end) => guard(() => trace.end(end), undefined),
    };
  };
}

/** Headers a request carries itself (the client's own, one list), and no cookie: a trace's never replace them. */
const OWN_HEADERS: ReadonlySet<string> = new Set([...CLIENT_OWN_HEADERS, 'cookie']);

/**
 * The headers of a trace that may go with a request: well-formed names and printable values, none the
 * request carries itself. A tracer's mistake drops a header; it never makes a client refuse the request.
 */
function traceHeaders(
  headers: Readonly<Record<string, string>> | undefined,
): Record<string, string> | undefined {
  if (headers === undefined || headers === null || typeof headers !== 'object') return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (
      HEADER_NAME_PATTERN.test(name) &&
      !OWN_HEADERS.has(lower) &&
      typeof value === 'string' &&
      HEADER_VALUE_PATTERN.test(value)
    )
      out[lower] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The URL a request goes to, from the client's base URL: no user info, query or fragment. */
export function requestUrl(baseUrl: string | undefined, path: string): string | null {
  if (baseUrl === undefined) return null;
  try {
    const base = new URL(baseUrl);
    const prefix = base.pathname.replace(/\/+$/, '');
    return new URL(`${prefix}${path}`, base.origin).href;
  } catch {
    return null;
  }
}

/**
 * {@link requestUrl} of each path, worked out again only when the base URL `baseUrl()` reads changes:
 * parsing two URLs for every request cost a send ~8 µs of CPU (issue 32).
 */
export function requestUrls(baseUrl: () => string | undefined): (path: string) => string | null {
  let base: string | undefined;
  const urls = new Map<string, string | null>();
  return (path) => {
    const now = baseUrl();
    if (now !== base) {
      base = now;
      urls.clear();
    }
    let url = urls.get(path);
    if (url === undefined) {
      url = requestUrl(now, path);
      urls.set(path, url);
    }
    return url;
  };
}
