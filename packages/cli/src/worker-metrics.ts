/**
 * `postback worker --metrics-port N`: serves `@postback/metrics`' `/metrics`, `/healthz` and `/readyz`
 * while the worker runs. `@postback/metrics` is a dependency of the CLI (a flag that answers "install this
 * first" is worse than a few hundred kB of prom-client), but it is imported only when the flag is given, so
 * a worker without metrics does not load prom-client at start.
 *
 * The exposition carries `postback_build_info{version}` with the CLI's version and the process's own
 * `process_*` and `nodejs_*` metrics. Malformed requests get a 4xx and a `metrics.client-error` line at
 * warn: that port is the one Prometheus may reach, and nothing sent to it stops the worker.
 */
import type { DispatcherEventName, Outbox } from '@postback/core';
import type { DispatcherLike } from '@postback/metrics';
import type { Logger } from './log.ts';
import { cliVersion } from './version.ts';
import type { DispatcherHandle } from './worker-factories.ts';

/** The running metrics server. */
export interface WorkerMetrics {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the metrics server for the worker's Dispatcher and outbox on `host:port` (0: a free port);
 * requests refused with a 4xx are logged on `logger`.
 *
 * @example
 * ```ts
 * const metrics = await startWorkerMetrics(dispatcher, outbox, { port: 9464, host: '127.0.0.1', logger });
 * ```
 */
export async function startWorkerMetrics(
  dispatcher: DispatcherHandle,
  outbox: Outbox,
  where: { port: number; host: string; logger?: Logger },
): Promise<WorkerMetrics> {
  const { createPrometheusMetrics, serveMetrics } = await import('@postback/metrics');
  const observed: DispatcherLike = {
    on: (name: DispatcherEventName, listener: (payload: never) => void) =>
      dispatcher.on(name, listener as (payload: unknown) => void),
    get state() {
      return dispatcher.paused() ? 'paused' : 'running';
    },
  };
  const metrics = createPrometheusMetrics({
    dispatcher: observed,
    outbox,
    version: cliVersion(),
    defaultMetrics: true,
  });
  const { logger } = where;
  try {
    const server = await serveMetrics(metrics, {
      port: where.port,
      host: where.host,
      onClientError: (error) => logger?.log('warn', 'metrics.client-error', { ...error }),
    });
    return {
      url: server.url,
      close: async () => {
        metrics.close();
        await server.close();
      },
    };
  } catch (error) {
    metrics.close();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot serve metrics on ${where.host}:${where.port}: ${reason}`, { cause: error });
  }
}
