/**
 * Cloudflare Workers in the real workerd (npm `miniflare`, which ships `workerd`): the worker fixture is
 * bundled from TypeScript source with rolldown (`@postback/source` plus the `workerd`/`worker`/`browser`
 * conditions, as Wrangler resolves), then a landing request captures the click, an order reads it back from
 * the cookie and is enqueued, and a `scheduled` event (a Cron Trigger) drains the memory outbox to a
 * sandbox running in this Node process on a loopback port through @postback/client's fetch transport.
 */
import { join } from 'node:path';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, ROOT, workerdBinary } from './harness.ts';

const workerd = workerdBinary();
const skip = 'missing' in workerd ? `workerd cannot be installed here: ${workerd.missing}` : false;
if (skip) console.warn(`[runtimes] skipping workerd: ${skip}`);

async function bundleWorker(): Promise<string> {
  const { rolldown } = await import('rolldown');
  const bundle = await rolldown({
    input: join(FIXTURES, 'worker.ts'),
    cwd: ROOT,
    platform: 'browser',
    resolve: { conditionNames: ['@postback/source', 'workerd', 'worker', 'browser', 'import', 'default'] },
    logLevel: 'silent',
  });
  try {
    const { output } = await bundle.generate({ format: 'esm', codeSplitting: false });
    const [chunk] = output;
    if (chunk === undefined || !('code' in chunk)) throw new Error('rolldown produced no chunk');
    return chunk.code;
  } finally {
    await bundle.close();
  }
}

describe.skipIf(skip !== false)('Cloudflare Workers (workerd)', () => {
  let world: SandboxWorld;
  let mf: import('miniflare').Miniflare;
  beforeAll(async () => {
    world = await startSandboxWorld();
    const { Miniflare } = await import('miniflare');
    mf = new Miniflare({
      modules: true,
      script: await bundleWorker(),
      compatibilityDate: '2026-04-01',
      bindings: {
        AD_BASE_URL: world.url,
        AD_API_KEY: world.conversionsKey,
        COOKIE_SECRET: 'a-test-secret-of-at-least-32-characters!',
      },
    });
    await mf.ready;
  }, 120_000);
  afterAll(async () => {
    await mf?.dispose();
    await world?.close();
  });

  it('captures the click, reads it from the cookie, and a scheduled event delivers the confirmation', async () => {
    const [click] = await world.clicks(1);
    const token = click?.token ?? '';
    const landing = await mf.dispatchFetch(
      `http://shop.test/landing?click_token=${encodeURIComponent(token)}`,
    );
    expect(((await landing.json()) as { click: { token: string } }).click.token).toBe(token);
    const cookie = (landing.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(cookie).not.toBe('');

    const order = await mf.dispatchFetch('http://shop.test/orders?order_id=ord_worker_1', {
      method: 'POST',
      headers: { cookie },
    });
    expect(await order.json()).toMatchObject({ click: { token }, enqueued: true });
    expect((await world.conversions()).conversions).toEqual([]);

    // The Fetcher's `scheduled` (a Cron Trigger), which Miniflare's types leave out.
    const worker = (await mf.getWorker()) as unknown as {
      scheduled(options: { cron: string }): Promise<{ outcome: string }>;
    };
    const outcome = await worker.scheduled({ cron: '*/1 * * * *' });
    expect(outcome.outcome).toBe('ok');

    const jobs = (await (await mf.dispatchFetch('http://shop.test/jobs?order_id=ord_worker_1')).json()) as {
      jobs: Array<{ state: string; campaignId: string | null }>;
      lastDrain: unknown;
    };
    expect(jobs.jobs).toMatchObject([{ state: 'delivered', campaignId: world.campaignId }]);
    expect(jobs.lastDrain).toMatchObject({ claimed: 1, delivered: 1 });
    expect((await world.conversions()).conversions).toEqual([
      expect.objectContaining({ order_id: 'ord_worker_1', state: 'confirmed', value_micros: 9_000 }),
    ]);
  });
});
