/**
 * `@postback/metrics`: the Dispatcher's figures as Prometheus metrics, a `/metrics`, `/healthz` and
 * `/readyz` handler, and (on the `@postback/metrics/otel` subpath, which alone loads `@opentelemetry/api`)
 * spans per send and OpenTelemetry instruments.
 */
export * from './handler.ts';
export * from './options.ts';
export * from './prometheus.ts';
export type { DispatcherLike, StatsSource } from './source.ts';
