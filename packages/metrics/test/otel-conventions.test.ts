/**
 * What the OpenTelemetry SDK makes of our instruments and spans, against the semantic conventions: the
 * send-duration histogram buckets in seconds (the SDK's own defaults are made for milliseconds), a unit on
 * every instrument (`{job}`, `{pause}`, `s`, `1`), and no status on a successful span.
 */
import { type Meter, SpanStatusCode } from '@opentelemetry/api';
import { type Histogram, MeterProvider, type MetricData, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SEND_DURATION_BUCKETS_S } from '../src/options.ts';
import { meterDispatcher, SPAN_ATTRIBUTES, traceDispatcher } from '../src/otel/index.ts';
import { type DeliveryWorld, startDeliveryWorld } from './delivery-world.ts';

class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

let world: DeliveryWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** The SDK's meter, noting the options each instrument is created with. */
function notingMeter(meter: Meter, created: Map<string, { unit?: string; advice?: unknown }>): Meter {
  return new Proxy(meter, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      if (typeof key === 'string' && key.startsWith('create')) {
        return (name: string, options?: { unit?: string }) => {
          created.set(name, options ?? {});
          return value.call(target, name, options);
        };
      }
      return value.bind(target);
    },
  });
}

describe('meterDispatcher under the real OpenTelemetry SDK', () => {
  it('buckets send durations by the advice in seconds, so each send lands in the bucket of its duration', async () => {
    world = await startDeliveryWorld();
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const meters = meterDispatcher(world.dispatcher, { meter: provider.getMeter('postback-test') });
    const durations: number[] = [];
    world.dispatcher.on('attempt', ({ attempt }) => durations.push(attempt.durationMs / 1000));
    // Two sends wait a quarter of a second, six do not: with the SDK's default bounds (0, 5, 10, ...,
    // made for milliseconds) all eight would share one bucket.
    await world.enqueue(2, 'slow');
    await world.world.setFaults({ latency_ms: 250 });
    await world.dispatcher.drain();
    await world.world.clearFaults();
    await world.enqueue(6, 'fast');
    await world.dispatcher.drain();

    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const metric = all.find((m) => m.descriptor.name === 'postback.send.duration') as MetricData;
    expect(metric.descriptor.unit).toBe('s');
    const point = metric.dataPoints[0]?.value as Histogram;
    expect(point.buckets.boundaries).toEqual(DEFAULT_SEND_DURATION_BUCKETS_S);
    // A bucket holds the values above the previous bound up to its own.
    const expected = new Array(DEFAULT_SEND_DURATION_BUCKETS_S.length + 1).fill(0);
    for (const d of durations) {
      const i = DEFAULT_SEND_DURATION_BUCKETS_S.findIndex((bound) => d <= bound);
      expected[i === -1 ? DEFAULT_SEND_DURATION_BUCKETS_S.length : i]++;
    }
    expect(point.count).toBe(8);
    expect(point.buckets.counts).toEqual(expected);
    expect(expected.filter((n) => n > 0).length).toBeGreaterThan(1);
    meters.close();
    await provider.shutdown();
  });

  it('gives every instrument a unit: {job} and {pause} for counts, s for durations, 1 for states', async () => {
    world = await startDeliveryWorld();
    await world.enqueue(2, 'unit');
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const created = new Map<string, { unit?: string; advice?: unknown }>();
    const meters = meterDispatcher(world.dispatcher, {
      meter: notingMeter(provider.getMeter('postback-test'), created),
      outbox: world.outbox,
    });
    expect(Object.fromEntries([...created].map(([name, o]) => [name, o.unit]))).toEqual({
      'postback.jobs.delivered': '{job}',
      'postback.jobs.retried': '{job}',
      'postback.jobs.dead': '{job}',
      'postback.jobs.expired': '{job}',
      'postback.delivery.pauses': '{pause}',
      'postback.account.pauses': '{pause}',
      'postback.send.duration': 's',
      'postback.delivery.paused': '1',
      'postback.account.paused': '1',
      'postback.jobs': '{job}',
      'postback.jobs.at_risk': '{job}',
      'postback.jobs.open.deadline_within': '{job}',
      'postback.outbox.up': '1',
    });

    // What the SDK exports carries them.
    await world.dispatcher.drain();
    const { resourceMetrics } = await reader.collect();
    const exported = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const units = Object.fromEntries(exported.map((m) => [m.descriptor.name, m.descriptor.unit]));
    expect(units).toMatchObject({
      'postback.jobs.delivered': '{job}',
      'postback.send.duration': 's',
      'postback.jobs': '{job}',
      'postback.outbox.up': '1',
    });
    meters.close();
    await provider.shutdown();
  });
});

describe('traceDispatcher under the real OpenTelemetry SDK', () => {
  it('leaves a delivered send’s status unset and marks a refused one as an error', async () => {
    world = await startDeliveryWorld();
    await world.enqueue(2, 'status');
    await world.outbox.confirm({
      orderId: 'status-refused',
      valueMicros: 1_000,
      click: { token: 'not-a-real-click-token-0123456789', clickedAt: Date.now() },
    });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const stop = traceDispatcher(world.dispatcher, { tracer: provider.getTracer('postback-test') });
    await world.dispatcher.drain();
    stop();

    const spans = exporter.getFinishedSpans();
    const delivered = spans.filter((s) => s.attributes[SPAN_ATTRIBUTES.outcome] === 'delivered');
    expect(delivered).toHaveLength(2);
    for (const span of delivered) expect(span.status).toEqual({ code: SpanStatusCode.UNSET });
    const refused = spans.find((s) => s.attributes[SPAN_ATTRIBUTES.orderId] === 'status-refused');
    expect(refused?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'permanent' });
    await provider.shutdown();
  });
});
