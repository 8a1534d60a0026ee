/**
 * `@postback/metrics/otel`: the Dispatcher through `@opentelemetry/api` (an optional peer dependency, loaded
 * only by this subpath): {@link traceDispatcher} makes a span per send, {@link meterDispatcher} records the
 * same figures as the Prometheus metrics with OpenTelemetry instruments.
 */
export * from './meter.ts';
export * from './trace.ts';
