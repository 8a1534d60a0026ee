/**
 * Malformed requests to `/metrics`, `/healthz` and `/readyz`, written raw on real sockets, against the
 * handler mounted on a bare `node:http` server and as `serveMetrics` serves it: each gets a 4xx (or, where
 * Node itself closes the socket, nothing), is reported to `onClientError`, never rejects a promise or
 * throws in the process, and the next good request is answered.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryOutbox, type Outbox } from '@postback/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type HostileRequest,
  hostileRequests,
  sendRaw,
  unmet,
} from '../../../test/helpers/hostile-requests.ts';
import {
  type MetricsClientError,
  type MetricsServer,
  metricsFetchHandler,
  metricsHandler,
  serveMetrics,
} from '../src/handler.ts';
import { createPrometheusMetrics, type PrometheusMetrics } from '../src/prometheus.ts';

const thrown: unknown[] = [];
const record = (error: unknown) => thrown.push(error);
beforeAll(() => {
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
});
afterAll(() => {
  process.off('uncaughtException', record);
  process.off('unhandledRejection', record);
});

let outbox: Outbox;
let metrics: PrometheusMetrics;
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function start(): void {
  outbox = createMemoryOutbox();
  metrics = createPrometheusMetrics({ dispatcher: { on: () => () => {}, state: 'running' }, outbox });
  closers.push(
    () => outbox.close(),
    () => metrics.close(),
  );
}

const ROUTES = ['/metrics', '/healthz', '/readyz'];
const hostile = ROUTES.flatMap((path) => hostileRequests({ path }).map((r) => ({ ...r, path })));

/** Sends every hostile request; after each, the surface still answers a good request with 200. */
async function assault(port: number, afterEach?: (request: HostileRequest) => void): Promise<string[]> {
  const failures: string[] = [];
  for (const request of hostile) {
    const answer = await sendRaw(port, request);
    const problem = unmet(request, answer);
    if (problem !== null) failures.push(`${request.path} ${problem}`);
    afterEach?.(request);
    const good = await fetch(`http://127.0.0.1:${port}${request.path}`);
    if (good.status !== 200) failures.push(`after ${request.name}: ${request.path} answered ${good.status}`);
    await good.arrayBuffer();
  }
  return failures;
}

describe('malformed requests to the metrics routes', () => {
  it('on a bare node:http server with metricsHandler: a 4xx each, nothing thrown, the next request answered', async () => {
    start();
    const errors: MetricsClientError[] = [];
    const server: Server = createServer(metricsHandler(metrics, { onClientError: (e) => errors.push(e) }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    const { port } = server.address() as AddressInfo;
    expect(await assault(port)).toEqual([]);
    expect(thrown).toEqual([]);
    // The handler names what it refused (those Node's parser refused never reach it).
    const reasons = new Set(errors.map((e) => e.reason));
    for (const reason of ['bad-target', 'bad-host', 'method-not-allowed', 'not-found', 'body-not-allowed']) {
      expect(reasons).toContain(reason);
    }
    for (const e of errors) expect(e.status).toBeGreaterThanOrEqual(400);
  });

  it('as serveMetrics serves them: every 4xx is reported as a client error, parser errors included', async () => {
    start();
    const errors: MetricsClientError[] = [];
    const server: MetricsServer = await serveMetrics(metrics, {
      port: 0,
      onClientError: (e) => errors.push(e),
    });
    closers.push(() => server.close());
    const unreported: string[] = [];
    let seen = 0;
    const failures = await assault(server.port, (request) => {
      if (request.expect === '4xx' && errors.length === seen) unreported.push(request.name);
      seen = errors.length;
    });
    expect(failures).toEqual([]);
    expect(unreported).toEqual([]);
    expect(thrown).toEqual([]);
    // CONNECT gets a 405 from serveMetrics (a bare server closes the socket).
    const connect = hostile.find((r) => r.name === 'method CONNECT') as HostileRequest;
    expect((await sendRaw(server.port, connect)).status).toBe(405);
  });

  it('a client error listener that throws changes nothing', async () => {
    start();
    const server = await serveMetrics(metrics, {
      port: 0,
      onClientError: () => {
        throw new Error('logger broke');
      },
    });
    closers.push(() => server.close());
    expect(await assault(server.port)).toEqual([]);
    expect(thrown).toEqual([]);
  });

  it('metricsFetchHandler answers a bad escape, a bracket, another method or a body with a 4xx, never a rejection', async () => {
    start();
    const errors: MetricsClientError[] = [];
    const handle = metricsFetchHandler(metrics, { onClientError: (e) => errors.push(e) });
    const cases: [Request, number][] = [
      [new Request('http://x/metrics%ZZ'), 400],
      [new Request('http://x/metrics?q=%ZZ'), 400],
      [new Request('http://x/metrics/[x]'), 400],
      [new Request('http://x/nowhere'), 404],
      [new Request('http://x/metrics', { method: 'DELETE' }), 405],
      [new Request('http://x/metrics', { method: 'POST', body: 'x' }), 405],
    ];
    for (const [request, status] of cases) expect((await handle(request)).status).toBe(status);
    expect(errors.map((e) => e.reason)).toEqual([
      'bad-target',
      'bad-target',
      'bad-target',
      'not-found',
      'method-not-allowed',
      'method-not-allowed',
    ]);
    expect((await handle(new Request('http://x/metrics'))).status).toBe(200);
  });
});
