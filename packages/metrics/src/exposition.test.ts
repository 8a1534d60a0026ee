/**
 * The exposition's names follow Prometheus' conventions: `build_info` with the version, a Unix time named
 * `_timestamp_seconds`, no `le` label outside a histogram, and prom-client's process metrics on request
 * (removed again by `close`).
 */
import { readFileSync } from 'node:fs';
import { createMemoryOutbox, OptionsError } from '@postback/core';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPrometheusMetrics } from './prometheus.ts';

const outbox = createMemoryOutbox();
const dispatcher = { on: () => () => {} };
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});
afterAll(() => outbox.close());
const create = (options: Partial<Parameters<typeof createPrometheusMetrics>[0]> = {}) => {
  const metrics = createPrometheusMetrics({ dispatcher, outbox, ...options });
  closers.push(() => metrics.close());
  return metrics;
};

describe('the Prometheus exposition', () => {
  it('carries postback_build_info with this package’s version, or the one given', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(await create().scrape()).toContain(`postback_build_info{version="${version}"} 1\n`);
    const own = create({ registry: new Registry(), version: '4.2.0-rc.1' });
    expect(await own.scrape()).toMatch(
      /^# TYPE postback_build_info gauge\npostback_build_info\{version="4\.2\.0-rc\.1"\} 1$/m,
    );
  });

  it('names the pause end a timestamp and counts jobs by deadline without an le label', async () => {
    const text = await create().scrape();
    expect(text).toContain('# TYPE postback_delivery_paused_until_timestamp_seconds gauge\n');
    expect(text).toContain('# TYPE postback_open_jobs_by_deadline gauge\n');
    expect(text).toMatch(/^postback_open_jobs_by_deadline\{within_seconds="3600"\} 0$/m);
    expect(text).toMatch(/^postback_open_jobs_by_deadline\{within_seconds="\+Inf"\} 0$/m);
    // `le` belongs to histogram buckets only.
    for (const sample of text.split('\n').filter((l) => l.includes('le="'))) {
      expect(sample).toMatch(/^postback_send_duration_seconds_bucket\{/);
    }
    expect(text).not.toMatch(/^(process|nodejs)_/m);
  });

  it('adds prom-client’s process_* and nodejs_* metrics with defaultMetrics, and close removes them', async () => {
    const registry = new Registry();
    const metrics = createPrometheusMetrics({ dispatcher, outbox, registry, defaultMetrics: true });
    const text = await metrics.scrape();
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_start_time_seconds',
      'nodejs_heap_size_total_bytes',
    ]) {
      expect(text).toMatch(new RegExp(`^${name} `, 'm'));
    }
    expect(text).toMatch(/^nodejs_version_info\{/m);
    expect(text).toMatch(/^nodejs_active_handles\{type="/m);
    // Gauges named like counters, which promtool refuses: their per-type gauges sum to them.
    expect(text).not.toMatch(/^nodejs_active_(handles|requests|resources)_total/m);
    metrics.close();
    expect((await registry.metrics()).trim()).toBe('');
    // Created again on the same registry once closed.
    create({ registry, defaultMetrics: true });
  });

  it('refuses defaultMetrics on a registry that already collects them, naming the option', () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    expect(() => create({ registry, defaultMetrics: true })).toThrow(OptionsError);
    expect(() => create({ registry, defaultMetrics: true })).toThrow(/defaultMetrics/);
    // Nothing of ours was left behind by the refusal.
    expect(registry.getSingleMetric('postback_jobs')).toBeUndefined();
  });
});
