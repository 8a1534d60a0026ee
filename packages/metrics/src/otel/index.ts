/**
 * `@postback/metrics/otel`: the Dispatcher through `@opentelemetry/api` (an optional peer dependency, loaded
 * only by this subpath): {@link traceDeliveries} traces each delivery and its request, {@link meterDispatcher} records the
 * same figures as the Prometheus metrics with OpenTelemetry instruments.
 */
export * from './meter.ts';
export * from './trace.ts';
