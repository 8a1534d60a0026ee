import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../test/helpers/worker-process.ts';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

let world: SandboxWorld;
let schema: string;
let env: Record<string, string>;

beforeEach(async () => {
  world = await startSandboxWorld();
  schema = `pb_cli_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  env = { POSTBACK_API_KEY: world.conversionsKey, POSTBACK_PG_SCHEMA: schema };
  expect(await main(['migrate', '--pg', PG_URL, '--schema', schema], captureIo())).toBe(0);
});
afterEach(async () => {
  await world?.close();
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
});

describe('postback worker --pg', () => {
  it('wakes on LISTEN/NOTIFY: a job enqueued by `postback confirm` is delivered long before the next poll', async () => {
    const io = captureIo({ env });
    // A 30 s poll: only the wake-up can explain a delivery within seconds.
    const running = main(
      ['worker', '--pg', PG_URL, '--base-url', world.url, '--poll-ms', '30000', '--log', 'json'],
      io,
    );
    await waitUntil(() => io.err().includes('"event":"worker.started"'), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [click] = await world.clicks(1);
    const confirm = captureIo({ env });
    const args = [
      'confirm',
      '--pg',
      PG_URL,
      // One argument: a token may start with '-', which parseArgs would read as another flag.
      `--click-token=${click?.token}`,
      '--order-id',
      'pg-1',
      '--value-micros',
      '5000',
    ];
    const confirmed = await main(
      [...args, '--clicked-at', new Date(click?.clickedAt as number).toISOString()],
      confirm,
    );
    expect(confirmed, confirm.err()).toBe(0);
    const enqueuedAt = Date.now();
    await waitUntil(async () => (await world.conversions()).conversions.length === 1, 10_000);
    expect(Date.now() - enqueuedAt).toBeLessThan(10_000);
    io.controller.abort();
    expect(await running).toBe(0);

    const status = captureIo({ env });
    expect(await main(['status', '--pg', PG_URL, '--json'], status)).toBe(0);
    expect(JSON.parse(status.out()).counts).toMatchObject({ delivered: 1, pending: 0, inflight: 0 });
    expect(io.out() + io.err()).not.toContain(world.conversionsKey);
  }, 40_000);
});
