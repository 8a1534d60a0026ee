import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../src/server.ts';
import { prepareSandboxWorld, type SandboxWorld, startSandboxWorld } from '../src/testing/sandbox-world.ts';

let world: SandboxWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('a sandbox world', () => {
  it('holds an account and an s2s campaign whose clicks confirm with the conversions key', async () => {
    world = await startSandboxWorld({ bidMicros: 2_000 });
    const [click] = await world.clicks(1);
    expect(click?.token).toEqual(expect.any(String));
    const res = await fetch(`${world.url}/v1/conversions/s2s`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${world.conversionsKey}` },
      body: JSON.stringify({ click_token: click?.token, order_id: 'o-1', value_micros: 5 }),
    });
    expect(res.status).toBe(200);
    const { conversions } = await world.conversions();
    expect(conversions).toMatchObject([
      { order_id: 'o-1', campaign_id: world.campaignId, state: 'confirmed' },
    ]);
    expect(await world.spendMicros()).toBe(2_000);
  });

  it('makes clicks on other campaigns, moves the clock and sets faults', async () => {
    world = await startSandboxWorld();
    const other = await world.createCampaign('https://shop.example/other');
    const click = await world.click(other);
    expect(new URL(click.landingUrl).searchParams.get('click_token')).toBe(click.token);
    const before = await world.now();
    expect(await world.advanceClock(60)).toBeGreaterThanOrEqual(before + 60_000);
    await world.setFaults({ error_rate: 1, error_status: 503 });
    const faulted = await fetch(`${world.url}/v1/conversions/s2s`, { method: 'POST' });
    expect(faulted.status).toBe(503);
    await world.clearFaults();
  });

  it('prepares a sandbox already running, and closes it when the preparation fails', async () => {
    const sandbox = await startSandbox({ port: 0 });
    world = await prepareSandboxWorld(sandbox.url, () => sandbox.close());
    expect(world.accountId).toEqual(expect.any(String));
    let closed = false;
    await expect(
      prepareSandboxWorld('http://127.0.0.1:1', async () => {
        closed = true;
      }),
    ).rejects.toThrow();
    expect(closed).toBe(true);
  });
});
