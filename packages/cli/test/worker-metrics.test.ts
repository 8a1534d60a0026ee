/**
 * `postback worker --metrics-port`: the worker serves Prometheus text, /healthz and /readyz while it
 * delivers, and stops serving when it stops.
 */
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../test/helpers/worker-process.ts';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture } from './db-fixture.ts';

let db: DbFixture;
let world: SandboxWorld;
beforeEach(async () => {
  db = dbFixture();
  world = await startSandboxWorld();
});
afterEach(async () => {
  await world?.close();
  db.cleanup();
});

/** The metrics URL the worker logged (`worker.metrics` with `--log json`). */
function metricsUrl(out: string): string | undefined {
  for (const line of out.split('\n')) {
    if (!line.includes('worker.metrics')) continue;
    const url = (JSON.parse(line) as { url?: unknown }).url;
    if (typeof url === 'string') return url;
  }
  return undefined;
}

describe('postback worker --metrics-port', () => {
  it('serves /metrics with the delivered count, /healthz and /readyz while it runs, on loopback', async () => {
    const clicks = await world.clicks(5);
    const outbox = db.open();
    for (const [i, click] of clicks.entries()) {
      await outbox.confirm({ orderId: `m-${i}`, valueMicros: 1_000, click });
    }
    await outbox.close();
    const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey } });
    const running = main(
      [
        'worker',
        '--db',
        db.file,
        '--base-url',
        world.url,
        '--poll-ms',
        '20',
        '--log',
        'json',
        '--metrics-port',
        '0',
      ],
      io,
    );
    // Log lines go to stdout or stderr depending on the logger's version: look in both.
    const logged = () => metricsUrl(`${io.out()}\n${io.err()}`);
    await waitUntil(async () => logged() !== undefined, 10_000);
    const url = logged() as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await waitUntil(async () => (await world.conversions()).conversions.length === 5, 15_000);

    // The sandbox applies a conversion before the worker records it delivered: wait for the counter.
    const scrape = async () => (await fetch(`${url}/metrics`)).text();
    await waitUntil(
      async () => /^postback_jobs_delivered_total\{kind="confirm"\} 5$/m.test(await scrape()),
      10_000,
    );
    const text = await scrape();
    expect(text).toMatch(/^postback_jobs_delivered_total\{kind="confirm"\} 5$/m);
    expect(text).toMatch(/^postback_jobs\{state="delivered"\} 5$/m);
    expect(text).toMatch(/^postback_delivery_paused 0$/m);
    expect(text).not.toContain(world.conversionsKey);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    io.controller.abort();
    expect(await running).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('refuses a metrics port out of range as a usage error', async () => {
    const io = captureIo({ env: { POSTBACK_API_KEY: 'k' } });
    const code = await main(
      ['worker', '--db', db.file, '--base-url', world.url, '--metrics-port', '70000'],
      io,
    );
    expect(code).toBe(2);
    expect(io.err()).toMatch(/metrics-port/);
  });
});
