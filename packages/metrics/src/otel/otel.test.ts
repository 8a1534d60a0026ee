/**
 * OpenTelemetry: a delivery span per job delivery, a request span per request, with the job's attributes
 * and never the key or the click token (the SDK's in-memory span exporter), and the same figures as
 * instruments (the SDK's metric reader).
 */

import { MeterProvider, type MetricData, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { type DeliveryWorld, startDeliveryWorld } from '../../test/delivery-world.ts';
import { DELIVERY_SPAN_NAME, meterDispatcher, SPAN_ATTRIBUTES, traceDeliveries } from './index.ts';

class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

let world: DeliveryWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('traceDeliveries', () => {
  it('makes a delivery span per job and a request span per request, with order id, kind, attempt, outcome and status, and no secret', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    world = await startDeliveryWorld({
      dispatcher: { tracing: traceDeliveries({ tracer: provider.getTracer('postback-test') }) },
    });
    await world.enqueue(3, 'span');
    await world.outbox.confirm({
      orderId: 'span-refused',
      valueMicros: 1_000,
      click: { token: 'not-a-real-click-token-0123456789', clickedAt: Date.now() },
    });
    const sends: number[] = [];
    world.dispatcher.on('attempt', ({ attempt }) => sends.push(attempt.startedAt));
    await world.dispatcher.drain();

    const spans = exporter.getFinishedSpans();
    const deliveries = spans.filter((s) => s.name === DELIVERY_SPAN_NAME);
    const requests = spans.filter((s) => s.name !== DELIVERY_SPAN_NAME);
    expect(deliveries).toHaveLength(4);
    expect(requests).toHaveLength(sends.length);
    expect(requests).toHaveLength(4);
    const delivered = requests.filter((s) => s.attributes[SPAN_ATTRIBUTES.outcome] === 'delivered');
    expect(delivered).toHaveLength(3);
    for (const span of delivered) {
      expect(span.name).toBe('POST /v1/conversions/s2s');
      expect(span.attributes[SPAN_ATTRIBUTES.orderId]).toMatch(/^span-\d$/);
      expect(span.attributes[SPAN_ATTRIBUTES.attempt]).toBe(1);
      expect(span.attributes[SPAN_ATTRIBUTES.status]).toBe(200);
      expect(span.status.code).toBe(0); // unset: the conventions leave a success's status alone
    }
    for (const span of deliveries.filter((s) => s.attributes[SPAN_ATTRIBUTES.outcome] === 'delivered')) {
      expect(span.attributes[SPAN_ATTRIBUTES.kind]).toBe('confirm');
      expect(span.attributes[SPAN_ATTRIBUTES.attempt]).toBe(1);
    }
    const refused = requests.find((s) => s.attributes[SPAN_ATTRIBUTES.orderId] === 'span-refused');
    expect(refused?.attributes[SPAN_ATTRIBUTES.outcome]).toBe('permanent');
    expect(refused?.attributes[SPAN_ATTRIBUTES.status]).toBe(404); // an unknown click token
    expect(refused?.status.code).toBe(2);
    const startMs = (s: (typeof spans)[number]) => s.startTime[0] * 1000 + s.startTime[1] / 1e6;
    expect(requests.map(startMs).sort()).toEqual(sends.sort());

    const everything = JSON.stringify(spans.map((s) => ({ name: s.name, a: s.attributes, st: s.status })));
    expect(everything).not.toContain(world.apiKey);
    for (const token of [...world.tokens, 'not-a-real-click-token']) expect(everything).not.toContain(token);
    await provider.shutdown();
  });
});

describe('meterDispatcher', () => {
  it('records delivered counts, send durations and the queue gauges', async () => {
    world = await startDeliveryWorld();
    await world.enqueue(5, 'meter');
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const meters = meterDispatcher(world.dispatcher, {
      meter: provider.getMeter('postback-test'),
      outbox: world.outbox,
    });
    const collect = async () => {
      const { resourceMetrics } = await reader.collect();
      const all = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
      return (name: string): MetricData | undefined => all.find((m) => m.descriptor.name === name);
    };
    const before = await collect();
    const pending = before('postback.jobs')?.dataPoints.find(
      (p) => p.attributes['postback.job.state'] === 'pending',
    );
    expect(pending?.value).toBe(5);
    expect(before('postback.outbox.up')?.dataPoints[0]?.value).toBe(1);
    expect(before('postback.delivery.paused')?.dataPoints[0]?.value).toBe(0);

    await world.dispatcher.drain();
    const after = await collect();
    expect(after('postback.jobs.delivered')?.dataPoints[0]?.value).toBe(5);
    const duration = after('postback.send.duration')?.dataPoints[0]?.value as { count: number };
    expect(duration.count).toBe(5);
    const deliveredState = after('postback.jobs')?.dataPoints.find(
      (p) => p.attributes['postback.job.state'] === 'delivered',
    );
    expect(deliveredState?.value).toBe(5);
    expect(JSON.stringify(after('postback.jobs.delivered')?.dataPoints)).not.toContain('meter-');
    meters.close();
    await provider.shutdown();
  });
});

describe('accounts in OpenTelemetry', () => {
  it('puts the account on each send span, and records paused accounts as a gauge and a counter', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    world = await startDeliveryWorld({
      authPauseMs: 60_000,
      apiKeyFor: (account, validKey) => (account === 'shop-bad' ? 'refused-key-0123456789' : validKey),
      dispatcher: { tracing: traceDeliveries({ tracer: tracer.getTracer('postback-test') }) },
    });
    await world.enqueue(2, 'good', 'shop-good');
    await world.enqueue(1, 'bad', 'shop-bad');
    await world.enqueue(1, 'none');
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const meters = meterDispatcher(world.dispatcher, { meter: provider.getMeter('postback-test') });
    await world.dispatcher.drain();

    const spans = exporter.getFinishedSpans().filter((s) => s.name === DELIVERY_SPAN_NAME);
    const accountOf = (orderId: string) =>
      spans.find((s) => s.attributes[SPAN_ATTRIBUTES.orderId] === orderId)?.attributes;
    expect(accountOf('good-0')?.[SPAN_ATTRIBUTES.account]).toBe('shop-good');
    expect(accountOf('bad-0')?.[SPAN_ATTRIBUTES.account]).toBe('shop-bad');
    expect(accountOf('bad-0')?.[SPAN_ATTRIBUTES.outcome]).toBe('deferred');
    const badRequest = exporter
      .getFinishedSpans()
      .find((s) => s.name !== DELIVERY_SPAN_NAME && s.attributes[SPAN_ATTRIBUTES.orderId] === 'bad-0');
    expect(badRequest?.attributes[SPAN_ATTRIBUTES.outcome]).toBe('auth');
    expect(badRequest?.attributes[SPAN_ATTRIBUTES.errorType]).toBe('401');
    expect(accountOf('none-0')).toBeDefined();
    expect(accountOf('none-0')?.[SPAN_ATTRIBUTES.account]).toBeUndefined();
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain('refused-key');

    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const metric = (name: string) => all.find((m) => m.descriptor.name === name);
    expect(metric('postback.account.paused')?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([
      [{ 'postback.account': 'shop-bad' }, 1],
    ]);
    expect(metric('postback.account.pauses')?.dataPoints[0]?.value).toBe(1);
    expect(metric('postback.delivery.paused')?.dataPoints[0]?.value).toBe(0);
    meters.close();
    await provider.shutdown();
    await tracer.shutdown();
  });
});
