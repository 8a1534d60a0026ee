/**
 * Benchmark: what observing delivery costs. Jobs delivered per second by the same Dispatcher to the
 * sandbox with `@postback/metrics` on — Prometheus metrics (event counters, the send-latency histogram)
 * scraped over HTTP every `--scrape-ms` (far more often than a real Prometheus, so a scrape's
 * `outbox.stats` call weighs in), and a delivery span with its request span through the OpenTelemetry SDK (a batch span
 * processor exporting to nowhere) — against the same Dispatcher with nothing attached. Target ratio
 * on / off >= 0.95.
 *
 * The outbox is in memory by default: the fastest delivery makes the observers' share largest, so the
 * ratio is a pessimistic one (`--store sqlite` for a durable store). The sandbox runs in a child process.
 * Every run delivers `--jobs` fresh orders to its own sandbox account and must finish within 25 s; the
 * two contenders run in ABBA order after `--warmup` untimed rounds of each, and the measured rounds stop
 * after 90 s. The ratio is taken per round, then its median. Each line also gives the main thread's CPU time
 * per job (`process.threadCpuUsage`), steadier than the rate on a shared machine, and its off / on ratio.
 *
 *   node --conditions=@postback/source bench/metrics-overhead.ts [--jobs 2000] [--rounds 6] [--warmup 1]
 *     [--concurrency 50] [--scrape-ms 250] [--store memory|sqlite]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { createClient } from '@postback/client';
import { createDispatcher, createMemoryOutbox, type Job, type Outbox } from '@postback/core';
import { createPrometheusMetrics, type DispatcherLike, serveMetrics } from '@postback/metrics';
import { traceDeliveries } from '@postback/metrics/otel';
import { createSqliteOutbox } from '@postback/sqlite';
import { confirmInputs, deliveredAll, median, withinLimit, withWorld } from './run-world.ts';
import { startChildSandboxWorld } from './sandbox-process.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '50' },
    'scrape-ms': { type: 'string', default: '250' },
    store: { type: 'string', default: 'memory' },
  },
});
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const CONCURRENCY = Number(values.concurrency);
const SCRAPE_MS = Number(values['scrape-ms']);
const STORE = values.store;
if (STORE !== 'memory' && STORE !== 'sqlite') throw new Error('--store is memory or sqlite');
const RUN_LIMIT_MS = 25_000;

/** Spans are built, batched and handed over, then dropped: the SDK's whole cost without a network. */
class DiscardingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

interface Run {
  seconds: number;
  /** CPU time of the main thread (user + system) during the run, µs: steadier than the rate on a busy machine. */
  cpuUs: number;
  delivered: number;
  scrapes: number;
  spans: number;
}

function openStore(): { outbox: Outbox; cleanup(): void } {
  if (STORE === 'memory') return { outbox: createMemoryOutbox(), cleanup: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'postback-bench-metrics-'));
  const outbox = createSqliteOutbox({ filename: join(dir, 'bench.db') });
  return { outbox, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function deliveryRun(observed: boolean): Promise<Run> {
  return withWorld(startChildSandboxWorld, async (world, tokens) => {
    const { outbox, cleanup } = openStore();
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    const stops: Array<() => Promise<void> | void> = [];
    try {
      await Promise.all(confirmInputs('m', JOBS, tokens).map((input) => outbox.confirm(input)));
      const exporter = new DiscardingExporter();
      const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
      const dispatcher = createDispatcher({
        outbox,
        client,
        concurrency: CONCURRENCY,
        batchSize: CONCURRENCY,
        ...(observed ? { tracing: traceDeliveries({ tracer: provider.getTracer('bench') }) } : {}),
      });
      let scrapes = 0;
      stops.push(() => provider.shutdown());
      if (observed) {
        const metrics = createPrometheusMetrics({ dispatcher, outbox });
        const server = await serveMetrics(metrics, { port: 0 });
        const timer = setInterval(() => {
          fetch(`${server.url}/metrics`)
            .then((r) => r.text())
            .then(
              () => {
                scrapes += 1;
              },
              () => {},
            );
        }, SCRAPE_MS);
        stops.push(async () => {
          clearInterval(timer);
          metrics.close();
          await server.close();
        });
      }
      const done = deliveredAll(dispatcher, JOBS);
      const cpu0 = process.threadCpuUsage();
      const t0 = performance.now();
      dispatcher.start();
      await withinLimit(done, observed ? 'observed dispatcher' : 'dispatcher', RUN_LIMIT_MS);
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.threadCpuUsage(cpu0);
      await dispatcher.stop({ timeoutMs: 5_000 });
      for (const stop of stops.splice(0)) await stop();
      return { seconds, cpuUs: cpu.user + cpu.system, delivered: JOBS, scrapes, spans: exporter.spans };
    } finally {
      for (const stop of stops) await stop();
      await client.close();
      await outbox.close();
      cleanup();
    }
  });
}

/**
 * The listeners' own cost, without the network or the machine's noise: `EVENTS` sends' `attempt` and
 * `delivered` events handed to the Prometheus metrics and to the tracer, in µs per send.
 */
function listenerCost(): { prometheusUs: number; tracingUs: number } {
  const EVENTS = 100_000;
  const listeners = new Map<string, Array<(payload: never) => void>>();
  const fake = {
    on(name: string, listener: (payload: never) => void) {
      listeners.set(name, [...(listeners.get(name) ?? []), listener]);
      return () => {};
    },
  } as unknown as DispatcherLike;
  const job = { id: 'mem-1', orderId: 'o-1', kind: 'confirm', attempts: 1 };
  const emit = (name: string, payload: unknown) => {
    for (const listener of listeners.get(name) ?? []) (listener as (p: unknown) => void)(payload);
  };
  const perSend = () => {
    const t0 = performance.now();
    for (let i = 0; i < EVENTS; i++) {
      const attempt = {
        startedAt: Date.now(),
        durationMs: 3,
        outcome: 'delivered',
        status: null,
        detail: null,
      };
      emit('attempt', { job, attempt });
      emit('delivered', { job, campaignId: null, at: attempt.startedAt });
    }
    return ((performance.now() - t0) * 1000) / EVENTS;
  };
  perSend(); // the loop's own JIT warm-up, so the bare figure is not its cold start
  const bare = perSend();
  const metrics = createPrometheusMetrics({ dispatcher: fake, outbox: createMemoryOutbox() });
  perSend();
  const prometheusUs = perSend() - bare;
  metrics.close();
  listeners.clear();
  const provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(new DiscardingExporter())],
  });
  // A delivery's spans: the delivery and its one request, as the Dispatcher calls the hooks.
  const tracing = traceDeliveries({ tracer: provider.getTracer('bench') });
  const url = 'http://127.0.0.1:4010/v1/conversions/s2s';
  const traced = () => {
    const t0 = performance.now();
    for (let i = 0; i < EVENTS; i++) {
      const at = Date.now();
      const delivery = tracing.delivery(job as unknown as Job, at);
      const request = delivery.request({
        method: 'POST',
        path: '/v1/conversions/s2s',
        url,
        attempt: 1,
        startedAt: at,
      });
      request.end({ endedAt: at + 3, outcome: 'delivered', status: 200, errorType: null });
      delivery.end({ outcome: 'delivered', endedAt: at + 3 });
    }
    return ((performance.now() - t0) * 1000) / EVENTS;
  };
  traced();
  const tracingUs = traced();
  void provider.shutdown();
  return { prometheusUs, tracingUs };
}

const rate = (run: Run) => run.delivered / run.seconds;

const cost = listenerCost();
for (let round = 0; round < WARMUP; round++) {
  await deliveryRun(false);
  await deliveryRun(true);
}
const off: number[] = [];
const on: number[] = [];
const cpuOff: number[] = [];
const cpuOn: number[] = [];
const scrapes: number[] = [];
const spans: number[] = [];
const started = Date.now();
for (let round = 0; round < ROUNDS && Date.now() - started < 90_000; round++) {
  // ABBA: every other round runs the observed Dispatcher first.
  const order = round % 2 === 0 ? [false, true] : [true, false];
  for (const observed of order) {
    const run = await deliveryRun(observed);
    (observed ? on : off).push(rate(run));
    (observed ? cpuOn : cpuOff).push(run.cpuUs / run.delivered);
    if (observed) {
      scrapes.push(run.scrapes);
      spans.push(run.spans);
    }
  }
}
const ratio = median(on.map((r, i) => r / (off[i] as number)));
const cpuRatio = median(cpuOff.map((c, i) => c / (cpuOn[i] as number)));
console.log(
  `metrics-overhead: ${JOBS} confirmations per run (${STORE} outbox, sandbox in a child process), concurrency ${CONCURRENCY}, ${WARMUP} warm-up + ${on.length} ABBA rounds (median)`,
);
console.log(
  `  Dispatcher, nothing attached          ${median(off).toFixed(0).padStart(6)} jobs/s, ${median(cpuOff).toFixed(1)} µs CPU (main thread) per job  (rounds: ${off.map((r) => r.toFixed(0)).join(', ')})`,
);
console.log(
  `  Dispatcher, Prometheus + tracing on   ${median(on).toFixed(0).padStart(6)} jobs/s, ${median(cpuOn).toFixed(1)} µs CPU (main thread) per job  (rounds: ${on.map((r) => r.toFixed(0)).join(', ')}; scrapes every ${SCRAPE_MS} ms: ${scrapes.join(', ')}; spans exported: ${spans.join(', ')})`,
);
console.log(`  ratio on / off: ${ratio.toFixed(3)} (target >= 0.95) ${ratio >= 0.95 ? 'OK' : 'MISSED'}`);
console.log(`  CPU per job off / on: ${cpuRatio.toFixed(3)} (steadier than the rate on a shared machine)`);
console.log(
  `  listeners alone: ${cost.prometheusUs.toFixed(2)} µs per send for the Prometheus metrics, ${cost.tracingUs.toFixed(2)} µs for a delivery's two spans (SDK, batch processor)`,
);
