/**
 * The real Bun binary (npm `bun`) runs the shop fixture on TypeScript source (`--conditions=@postback/source`):
 * capture with core's Fetch wrapper on `Bun.serve`, the click read back from the cookie, and the
 * confirmation delivered through @postback/client (the `bun` condition's fetch transport) to a sandbox
 * running in this Node process on a loopback port. Then the undici transport, which Bun only stubs, must
 * pause delivery with a reason instead of retrying "connection failed" until the deadline.
 */
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectShopDelivered, FIXTURES, type RuntimeBinary, runFixture, runtimeBinary } from './harness.ts';

const bun = runtimeBinary('bun');
const skip = 'missing' in bun ? `Bun cannot be installed here: ${bun.missing}` : false;
if (skip) console.warn(`[runtimes] skipping Bun: ${skip}`);

describe.skipIf(skip !== false)('Bun', () => {
  let world: SandboxWorld;
  beforeAll(async () => {
    world = await startSandboxWorld();
  });
  afterAll(() => world?.close());

  const run = async (mode: string, orderId: string) => {
    const [click] = await world.clicks(1);
    const arg = JSON.stringify({ url: world.url, key: world.conversionsKey, token: click?.token, orderId });
    return {
      token: click?.token,
      result: await runFixture(bun as RuntimeBinary, [
        '--conditions=@postback/source',
        `${FIXTURES}/shop.ts`,
        mode,
        arg,
      ]),
    };
  };

  it('captures the click, reads it from the cookie and confirms it through the default transport (fetch)', async () => {
    await expectShopDelivered(world, await run('shop', 'ord_bun_1'), 'ord_bun_1');
  });

  it('pauses delivery with the reason when the undici transport cannot work, and sends nothing', async () => {
    const before = (await world.conversions()).counts.requests;
    const { result } = await run('denied', 'ord_bun_2');
    expect(result).toMatchObject({
      state: 'paused',
      summary: { claimed: 1, deferred: 1, retried: 0 },
      job: { state: 'pending', attempts: 0 },
    });
    expect(result.paused).toEqual([
      expect.stringContaining('undici Pool has no close() (not the real undici)'),
    ]);
    expect((await world.conversions()).counts.requests).toBe(before);
  });
});
