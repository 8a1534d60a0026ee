/**
 * A worker stays alive while the service (or a proxy in front of it) answers with a runaway body: a
 * Dispatcher delivering to a server that streams a 2xx of 128 MiB of JSON, with `@postback/metrics`'
 * `/healthz` served from the same process. `/healthz` answers promptly throughout, the heart-beat keeps
 * its rhythm, and the job is delivered (a 2xx is applied, whatever its body) once the client has read
 * its bound of the answer and closed the connection.
 */
import { createClient } from '@postback/client';
import { createDispatcher, createMemoryOutbox, type Outbox } from '@postback/core';
import { createPrometheusMetrics, serveMetrics } from '@postback/metrics';
import { describe, expect, it } from 'vitest';
import { startFloodServer } from '../packages/client/test/helpers/flood-server.ts';

const MIB = 1024 * 1024;

describe('a worker meeting an answer of 128 MiB', () => {
  it('keeps /healthz and its heart-beat live and delivers the job, reading only the client bound of the answer', async () => {
    // A JSON array of 64 million numbers: whole, it would cost seconds of parsing on the loop.
    const flood = await startFloodServer({
      status: 200,
      headers: { 'content-type': 'application/json' },
      head: '{"order_id":"ord_huge","pad":[',
      chunk: '0,'.repeat(32 * 1024),
      padBytes: 128 * MIB,
      tail: '0]}',
    });
    const memory = createMemoryOutbox();
    const beats: number[] = [];
    const outbox: Outbox = {
      ...memory,
      beat: async (beat) => {
        beats.push(performance.now());
        return memory.beat(beat);
      },
    };
    const client = createClient({ baseUrl: flood.url, apiKey: 'pbsk_huge_answer', timeout: 60_000 });
    const dispatcher = createDispatcher({ outbox, client, pollIntervalMs: 10, watchIntervalMs: 50 });
    const metrics = createPrometheusMetrics({ dispatcher, outbox });
    const server = await serveMetrics(metrics, { port: 0 });
    try {
      await outbox.confirm({
        orderId: 'ord_huge',
        valueMicros: 1_000,
        click: { token: 'tok_abcdefghijklmnop', clickedAt: Date.now() },
      });
      const delivered = new Promise<void>((resolve) => dispatcher.on('delivered', () => resolve()));
      dispatcher.start();
      // Probe /healthz one request after another until the job is delivered: the slowest answer counts.
      let done = false;
      void delivered.then(() => {
        done = true;
      });
      const latencies: number[] = [];
      const started = performance.now();
      while (!done && performance.now() - started < 30_000) {
        const at = performance.now();
        const res = await fetch(`${server.url}/healthz`);
        expect(res.status).toBe(200);
        await res.text();
        latencies.push(performance.now() - at);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(done).toBe(true);
      expect(latencies.length).toBeGreaterThan(0);
      // Generous for a busy CI machine; on main the answer held the loop for well over a second.
      expect(Math.max(...latencies)).toBeLessThan(750);
      const gaps = beats.slice(1).map((at, i) => at - (beats[i] as number));
      expect(Math.max(0, ...gaps)).toBeLessThan(800);
      await expect(flood.ended()).resolves.toEqual({ cutShort: true });
      expect(flood.written()).toBeLessThan(32 * MIB);
      const [job] = await outbox.listJobs({ limit: 1 });
      expect(job).toMatchObject({ orderId: 'ord_huge', state: 'delivered' });
    } finally {
      await dispatcher.stop({ timeoutMs: 1_000 });
      await server.close();
      await metrics.close();
      await client.close();
      await outbox.close();
      await flood.close();
    }
  }, 90_000);
});
