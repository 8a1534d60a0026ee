/**
 * Prometheus metrics scraped over real HTTP while a Dispatcher delivers to the sandbox: figures match what
 * the sandbox applied, a 401 shows as a pause and turns `/readyz` to 503, and no label carries an order id.
 */
import { createMemoryOutbox, OptionsError } from '@postback/core';
import { createSandboxControl } from '@postback/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { type DeliveryWorld, parsePrometheusText, startDeliveryWorld } from '../test/delivery-world.ts';
import { type MetricsServer, metricsFetchHandler, serveMetrics } from './handler.ts';
import { createPrometheusMetrics } from './prometheus.ts';

const WEEK_MS = 7 * 86_400_000;
let world: DeliveryWorld | undefined;
let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  await world?.close();
  server = undefined;
  world = undefined;
});

async function scrape(url: string): Promise<Map<string, number>> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await response.text());
}

describe('createPrometheusMetrics served by serveMetrics', () => {
  it('reports the queue before delivery and the delivered count the sandbox saw after it', async () => {
    world = await startDeliveryWorld();
    await world.enqueue(12, 'prom');
    const metrics = createPrometheusMetrics({
      dispatcher: world.dispatcher,
      outbox: world.outbox,
      atRiskWithinMs: WEEK_MS,
    });
    server = await serveMetrics(metrics, { port: 0 });

    const before = await scrape(server.url);
    expect(before.get('postback_jobs{state="pending"}')).toBe(12);
    expect(before.get('postback_jobs_at_risk')).toBe(12);
    expect(before.get('postback_open_jobs_by_deadline{within_seconds="3600"}')).toBe(0);
    expect(before.get('postback_open_jobs_by_deadline{within_seconds="604800"}')).toBe(12);
    expect(before.get('postback_open_jobs_by_deadline{within_seconds="+Inf"}')).toBe(12);
    expect(before.get('postback_delivery_paused')).toBe(0);
    expect(before.get('postback_outbox_up')).toBe(1);
    expect(before.get('postback_jobs_delivered_total{kind="confirm"}')).toBe(0);

    await world.dispatcher.drain();
    const after = await scrape(server.url);
    const applied = (await world.world.conversions()).conversions.length;
    expect(applied).toBe(12);
    expect(after.get('postback_jobs_delivered_total{kind="confirm"}')).toBe(applied);
    expect(after.get('postback_jobs{state="delivered"}')).toBe(applied);
    expect(after.get('postback_jobs{state="pending"}')).toBe(0);
    expect(after.get('postback_jobs_at_risk')).toBe(0);
    expect(after.get('postback_send_duration_seconds_count{kind="confirm",outcome="delivered"}')).toBe(
      applied,
    );
    expect(await (await fetch(`${server.url}/readyz`)).json()).toEqual({ ready: true });
  });

  it('shows a 401 as a pause, turns /readyz to 503 while paused and back to 200 once resumed', async () => {
    world = await startDeliveryWorld({ authPauseMs: 300 });
    await world.enqueue(2, 'auth');
    const metrics = createPrometheusMetrics({ dispatcher: world.dispatcher, outbox: world.outbox });
    server = await serveMetrics(metrics, { port: 0 });
    await world.world.setFaults({ error_rate: 1, error_status: 401 });
    await world.dispatcher.runOnce();
    expect(world.dispatcher.state).toBe('paused');

    const paused = await scrape(server.url);
    expect(paused.get('postback_delivery_paused')).toBe(1);
    expect(paused.get('postback_delivery_paused_until_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000);
    expect(paused.get('postback_delivery_pauses_total')).toBe(1);
    expect(paused.get('postback_send_duration_seconds_count{kind="confirm",outcome="auth"}')).toBeGreaterThan(
      0,
    );
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, reason: 'paused' });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    await world.world.clearFaults();
    await new Promise((resolve) => setTimeout(resolve, 350));
    await world.dispatcher.drain();
    expect(world.dispatcher.state).not.toBe('paused');
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const resumed = await scrape(server.url);
    expect(resumed.get('postback_delivery_paused')).toBe(0);
    expect(resumed.get('postback_delivery_paused_until_timestamp_seconds')).toBe(0);
  });

  it('shows jobs held for a campaign not on s2s once per campaign, with their value, gone once decided and sent', async () => {
    world = await startDeliveryWorld();
    const control = createSandboxControl(world.world.url);
    await control.setConversionSource(world.world.campaignId, 'pixel');
    await world.enqueue(3, 'pixel');
    const metrics = createPrometheusMetrics({ dispatcher: world.dispatcher, outbox: world.outbox });
    expect(await world.dispatcher.drain()).toMatchObject({ held: 3, dead: 0 });
    const series = `{account="",campaign="${world.world.campaignId}"}`;
    const held = parsePrometheusText(await metrics.scrape());
    expect(held.get(`postback_held_jobs${series}`)).toBe(3);
    expect(held.get(`postback_held_order_value${series}`)).toBe(0.003);
    expect(held.get('postback_jobs_dead_total{kind="confirm"}')).toBe(0);

    await control.setConversionSource(world.world.campaignId, 's2s');
    // An operator sends them (`postback held send`): the default `onSwitch: 'ask'` sends none without it.
    const decided = await world.outbox.switches?.decide({
      account: null,
      campaignId: world.world.campaignId,
      decision: 'send',
      now: Date.now(),
    });
    expect(decided).toHaveLength(3);
    expect(await world.dispatcher.drain()).toMatchObject({ delivered: 3 });
    const text = await metrics.scrape();
    expect(text).not.toContain('postback_held_jobs{');
    expect(text).toContain('# TYPE postback_held_jobs gauge');
  });

  it('never puts an order id, a job id or a click token in the exposition', async () => {
    world = await startDeliveryWorld();
    await world.enqueue(3, 'secret-order');
    await world.world.setFaults({ fail_next: 1, error_status: 422 });
    const metrics = createPrometheusMetrics({ dispatcher: world.dispatcher, outbox: world.outbox });
    await world.dispatcher.drain();
    const text = await metrics.scrape();
    expect(text).not.toContain('secret-order');
    expect(text).not.toContain('mem');
    for (const token of world.tokens) expect(text).not.toContain(token);
    expect(text).not.toContain(world.apiKey);
    expect(parsePrometheusText(text).get('postback_jobs_dead_total{kind="confirm"}')).toBe(1);
  });
});

describe('readiness and errors', () => {
  it('answers a scrape with outbox_up 0 and /readyz 503 when outbox.stats fails or hangs', async () => {
    const outbox = createMemoryOutbox();
    const broken = { stats: () => new Promise<never>(() => {}) };
    const dispatcher = { on: () => () => {}, state: 'running' };
    const metrics = createPrometheusMetrics({ dispatcher, outbox: broken, statsTimeoutMs: 50 });
    const handle = metricsFetchHandler(metrics);
    const scraped = await handle(new Request('http://x/metrics'));
    expect(scraped.status).toBe(200);
    const samples = parsePrometheusText(await scraped.text());
    expect(samples.get('postback_outbox_up')).toBe(0);
    expect(samples.has('postback_jobs{state="pending"}')).toBe(false);
    const ready = await handle(new Request('http://x/readyz'));
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({
      reason: 'outbox-unreachable',
      error: expect.stringMatching(/50 ms/),
    });
    await outbox.close();
  });

  it('serves 404 for other paths, 405 for other methods, and runs the extra ready check', async () => {
    const outbox = createMemoryOutbox();
    const dispatcher = { on: () => () => {} };
    const metrics = createPrometheusMetrics({ dispatcher, outbox });
    let draining = true;
    const handle = metricsFetchHandler(metrics, { ready: () => (draining ? 'draining' : true) });
    expect((await handle(new Request('http://x/other'))).status).toBe(404);
    const post = await handle(new Request('http://x/metrics', { method: 'POST' }));
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const ready = await handle(new Request('http://x/readyz'));
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ reason: 'not-ready', detail: 'draining' });
    draining = false;
    expect((await handle(new Request('http://x/readyz'))).status).toBe(200);
    await outbox.close();
  });

  it('refuses unknown options and a bad prefix with an OptionsError naming them', () => {
    const outbox = createMemoryOutbox();
    const dispatcher = { on: () => () => {} };
    expect(() => createPrometheusMetrics({ dispatcher, outbox, prefx: 'x_' } as never)).toThrow(OptionsError);
    expect(() => createPrometheusMetrics({ dispatcher, outbox, prefix: 'a-b' })).toThrow(/prefix/);
    expect(() => createPrometheusMetrics({ dispatcher, outbox, deadlineBucketsMs: [10, 5] })).toThrow(
      /deadlineBucketsMs/,
    );
  });

  it('removes its metrics from a shared registry on close, so it can be created again', async () => {
    const outbox = createMemoryOutbox();
    const dispatcher = { on: () => () => {} };
    const first = createPrometheusMetrics({ dispatcher, outbox });
    first.close();
    expect((await first.registry.metrics()).trim()).toBe('');
    const second = createPrometheusMetrics({ dispatcher, outbox, registry: first.registry });
    expect(await second.scrape()).toContain('postback_jobs');
    await outbox.close();
  });
});
