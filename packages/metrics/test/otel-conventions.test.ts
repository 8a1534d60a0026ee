/**
 * What the OpenTelemetry SDK makes of our instruments and spans, against the semantic conventions: the
 * send-duration histogram buckets in seconds (the SDK's own defaults are made for milliseconds), a unit on
 * every instrument (`{job}`, `{pause}`, `s`, `1`); spans as the HTTP client conventions describe them, a
 * request span the child of its delivery span, its trace context sent to the service through the
 * registered propagator; and a retried job's every request a span, an attempt and a count.
 */
import { type Meter, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { type Histogram, MeterProvider, type MetricData, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SEND_DURATION_BUCKETS_S } from '../src/options.ts';
import { DELIVERY_SPAN_NAME, meterDispatcher, SPAN_ATTRIBUTES, traceDeliveries } from '../src/otel/index.ts';
import { createPrometheusMetrics } from '../src/prometheus.ts';
import { type DeliveryWorld, parsePrometheusText, startDeliveryWorld } from './delivery-world.ts';

class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

let world: DeliveryWorld | undefined;
afterEach(async () => {
  propagation.disable();
  await world?.close();
  world = undefined;
});

/** A tracer provider with an in-memory exporter, and the Dispatcher's `tracing` over it. */
function tracedWorld() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracing = traceDeliveries({ tracer: provider.getTracer('postback-test') });
  return { exporter, provider, tracing };
}

/** A `fetch` that notes the headers of every request it sends. */
function notingFetch(seen: Array<Record<string, string>>): typeof fetch {
  return (input, init) => {
    seen.push(Object.fromEntries(new Headers(init?.headers).entries()));
    return fetch(input, init);
  };
}

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

describe('traceDeliveries under the real OpenTelemetry SDK', () => {
  it('describes each request as the HTTP client conventions ask, as the child of its delivery span', async () => {
    const { exporter, provider, tracing } = tracedWorld();
    world = await startDeliveryWorld({ dispatcher: { tracing } });
    await world.enqueue(2, 'status');
    await world.outbox.confirm({
      orderId: 'status-refused',
      valueMicros: 1_000,
      click: { token: 'not-a-real-click-token-0123456789', clickedAt: Date.now() },
    });
    await world.dispatcher.drain();

    const spans = exporter.getFinishedSpans();
    const url = new URL(world.world.url);
    const requests = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(requests).toHaveLength(3);
    for (const span of requests) {
      expect(span.name).toBe('POST /v1/conversions/s2s');
      expect(span.attributes).toMatchObject({
        'http.request.method': 'POST',
        'server.address': url.hostname,
        'server.port': Number(url.port),
        'url.full': `${url.origin}/v1/conversions/s2s`,
        'url.template': '/v1/conversions/s2s',
      });
      const parent = spans.find((p) => p.spanContext().spanId === span.parentSpanContext?.spanId);
      expect(parent?.name).toBe(DELIVERY_SPAN_NAME);
      expect(parent?.kind).toBe(SpanKind.INTERNAL);
      expect(parent?.spanContext().traceId).toBe(span.spanContext().traceId);
      expect(parent?.attributes[SPAN_ATTRIBUTES.orderId]).toBe(span.attributes[SPAN_ATTRIBUTES.orderId]);
    }
    const delivered = requests.filter((s) => s.attributes[SPAN_ATTRIBUTES.orderId] !== 'status-refused');
    for (const span of delivered) {
      expect(span.attributes['http.response.status_code']).toBe(200);
      expect(span.attributes['error.type']).toBeUndefined();
      expect(span.status).toEqual({ code: SpanStatusCode.UNSET });
    }
    const refused = requests.find((s) => s.attributes[SPAN_ATTRIBUTES.orderId] === 'status-refused');
    expect(refused?.attributes['http.response.status_code']).toBe(404);
    expect(refused?.attributes['error.type']).toBe('404');
    expect(refused?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'permanent' });
    const deliveries = spans.filter((s) => s.name === DELIVERY_SPAN_NAME);
    expect(deliveries.map((s) => s.attributes[SPAN_ATTRIBUTES.outcome]).sort()).toEqual([
      'dead',
      'delivered',
      'delivered',
    ]);
    for (const span of deliveries) {
      expect(span.status.code).toBe(
        span.attributes[SPAN_ATTRIBUTES.outcome] === 'dead' ? SpanStatusCode.ERROR : SpanStatusCode.UNSET,
      );
    }
    await provider.shutdown();
  });

  it('names the class of a failure without an answer in error.type', async () => {
    const { exporter, provider, tracing } = tracedWorld();
    world = await startDeliveryWorld({ dispatcher: { tracing } });
    await world.enqueue(1, 'reset');
    await world.world.setFaults({ reset_rate: 1 });
    await world.dispatcher.drain();
    await world.world.clearFaults();
    const [request] = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(request?.attributes['error.type']).toBe('ConnectionError');
    expect(request?.attributes['http.response.status_code']).toBeUndefined();
    expect(request?.status.code).toBe(SpanStatusCode.ERROR);
    await provider.shutdown();
  });

  it('sends the request span’s trace context to the service through the registered propagator, and none without one', async () => {
    const { exporter, provider, tracing } = tracedWorld();
    const headers: Array<Record<string, string>> = [];
    world = await startDeliveryWorld({ dispatcher: { tracing }, fetch: notingFetch(headers) });
    await world.enqueue(1, 'unpropagated');
    await world.dispatcher.drain();
    expect(headers).toHaveLength(1);
    expect(headers[0]?.traceparent).toBeUndefined();

    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    await world.enqueue(1, 'propagated');
    await world.dispatcher.drain();
    expect(headers).toHaveLength(2);
    const request = exporter
      .getFinishedSpans()
      .find((s) => s.kind === SpanKind.CLIENT && s.attributes[SPAN_ATTRIBUTES.orderId] === 'propagated-0');
    const { traceId, spanId } = request?.spanContext() ?? {};
    expect(headers[1]?.traceparent).toBe(`00-${traceId}-${spanId}-01`);
    expect(headers[1]?.authorization).toBe(`Bearer ${world.apiKey}`);
    await provider.shutdown();
  });

  it('shows a retried job’s every request: two 503s then a 200 are three request spans, three attempts and two retries', async () => {
    const { exporter, provider, tracing } = tracedWorld();
    world = await startDeliveryWorld({ dispatcher: { tracing, backoff: { baseMs: 20, minMs: 10 } } });
    const reader = new TestReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const meters = meterDispatcher(world.dispatcher, { meter: meterProvider.getMeter('postback-test') });
    const prometheus = createPrometheusMetrics({ dispatcher: world.dispatcher, outbox: world.outbox });
    await world.enqueue(1, 'retried');
    await world.world.setFaults({ fail_next: 2, error_status: 503 });
    for (let round = 0; round < 50; round++) {
      await world.dispatcher.drain();
      if ((await world.outbox.getByOrder('retried-0'))[0]?.state === 'delivered') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const [job] = await world.outbox.getByOrder('retried-0');
    expect(job).toMatchObject({ state: 'delivered', attempts: 3 });
    const history = await world.outbox.history(job?.id as string);
    expect(history.map((a) => [a.outcome, a.status])).toEqual([
      ['transient', 503],
      ['transient', 503],
      ['delivered', 200],
    ]);

    const spans = exporter.getFinishedSpans();
    const requests = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(
      requests.map((s) => [s.attributes['http.response.status_code'], s.attributes['error.type']]),
    ).toEqual([
      [503, '503'],
      [503, '503'],
      [200, undefined],
    ]);
    expect(requests.map((s) => s.attributes['http.request.resend_count'])).toEqual([undefined, 1, 2]);
    const deliveries = spans.filter((s) => s.name === DELIVERY_SPAN_NAME);
    expect(deliveries.map((s) => s.attributes[SPAN_ATTRIBUTES.outcome])).toEqual([
      'retried',
      'retried',
      'delivered',
    ]);

    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const value = (name: string) => all.find((m) => m.descriptor.name === name)?.dataPoints[0]?.value;
    expect(value('postback.jobs.retried')).toBe(2);
    expect(value('postback.jobs.delivered')).toBe(1);
    const durations = all.find((m) => m.descriptor.name === 'postback.send.duration')?.dataPoints ?? [];
    const byOutcome = durations.map((p) => [p.attributes['postback.outcome'], (p.value as Histogram).count]);
    expect(Object.fromEntries(byOutcome)).toEqual({ transient: 2, delivered: 1 });
    const scraped = parsePrometheusText(await prometheus.scrape());
    expect(scraped.get('postback_jobs_retried_total{kind="confirm"}')).toBe(2);
    expect(scraped.get('postback_send_duration_seconds_count{kind="confirm",outcome="transient"}')).toBe(2);
    prometheus.close();
    meters.close();
    await meterProvider.shutdown();
    await provider.shutdown();
  });
});
