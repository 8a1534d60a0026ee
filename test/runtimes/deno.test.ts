/**
 * The real Deno binary (npm `deno`) runs the shop fixture on TypeScript source (`--conditions=@postback/source`)
 * under scoped permissions (`--allow-net=127.0.0.1` and nothing else: no env, no read): capture with
 * core's Fetch wrapper on `Deno.serve`, the click read back from the cookie, and the confirmation
 * delivered through @postback/client (the `deno` condition's fetch transport; npm undici would need
 * `--allow-env`) to a sandbox in this Node process. Without net access to the sandbox, delivery pauses
 * with Deno's `NotCapable` in the reason.
 */
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectShopDelivered, FIXTURES, type RuntimeBinary, runFixture, runtimeBinary } from './harness.ts';

const deno = runtimeBinary('deno');
const skip = 'missing' in deno ? `Deno cannot be installed here: ${deno.missing}` : false;
if (skip) console.warn(`[runtimes] skipping Deno: ${skip}`);

describe.skipIf(skip !== false)('Deno', () => {
  let world: SandboxWorld;
  beforeAll(async () => {
    world = await startSandboxWorld();
  });
  afterAll(() => world?.close());

  const run = async (mode: string, orderId: string, allowNet: string) => {
    const [click] = await world.clicks(1);
    const arg = JSON.stringify({ url: world.url, key: world.conversionsKey, token: click?.token, orderId });
    const flags = [
      'run',
      '--no-prompt',
      '--no-lock',
      '--conditions=@postback/source',
      `--allow-net=${allowNet}`,
    ];
    return {
      token: click?.token,
      result: await runFixture(deno as RuntimeBinary, [...flags, `${FIXTURES}/shop.ts`, mode, arg]),
    };
  };

  it('captures the click, reads it from the cookie and confirms it through the default transport (fetch)', async () => {
    await expectShopDelivered(world, await run('shop', 'ord_deno_1', '127.0.0.1'), 'ord_deno_1');
  });

  it('pauses delivery with NotCapable in the reason when net access to the service is denied', async () => {
    const before = (await world.conversions()).counts.requests;
    const { result } = await run('denied', 'ord_deno_2', 'ads.example');
    expect(result).toMatchObject({
      state: 'paused',
      summary: { claimed: 1, deferred: 1, retried: 0 },
      job: { state: 'pending', attempts: 0 },
    });
    expect(result.paused).toEqual([
      expect.stringMatching(/transport unavailable: NotCapable: Requires net access to "127\.0\.0\.1:\d+"/),
    ]);
    expect((await world.conversions()).counts.requests).toBe(before);
  });
});
