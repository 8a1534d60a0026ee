/**
 * `postback worker --pg` (the real binary) while an administrator terminates its database connections:
 * it keeps delivering, or exits with a documented code and a clean message — never 13 ("unsettled
 * top-level await") and never an unhandled `'error'` event.
 */

import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type PostbackProcess,
  spawnPostback,
  stopProcess,
  waitUntil,
} from '../../../test/helpers/worker-process.ts';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
/** Exit codes the CLI README documents. */
const DOCUMENTED = [0, 1, 2, 3, 4, 5];

let world: SandboxWorld;
let schema: string;
let appName: string;
let env: Record<string, string>;
let admin: pg.Client;
const spawned: PostbackProcess[] = [];

beforeEach(async () => {
  world = await startSandboxWorld();
  schema = `pb_cli_kill_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  // Only this worker's connections carry this name: other suites share the database.
  appName = `postback_kill_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  env = { POSTBACK_API_KEY: world.conversionsKey, POSTBACK_PG_SCHEMA: schema };
  expect(await main(['migrate', '--pg', PG_URL, '--schema', schema], captureIo())).toBe(0);
  admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
});
afterEach(async () => {
  for (const proc of spawned.splice(0)) await stopProcess(proc);
  await world?.close();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

async function enqueue(from: number, n: number): Promise<void> {
  const clicks = await world.clicks(n);
  for (const [i, click] of clicks.entries()) {
    const io = captureIo({ env });
    // `--click-token=…` as one argument: a token may start with '-', which parseArgs would read as a flag.
    const args = ['confirm', '--pg', PG_URL, `--click-token=${click.token}`, '--order-id', `k-${from + i}`];
    const code = await main(
      [...args, '--value-micros', '1000', '--clicked-at', new Date(click.clickedAt).toISOString()],
      io,
    );
    expect(code, io.err()).toBe(0);
  }
}

async function terminateWorkerConnections(): Promise<number> {
  const { rows } = await admin.query(
    'SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1',
    [appName],
  );
  return rows.length;
}

describe('postback worker --pg whose connections are terminated', () => {
  it('keeps delivering or exits with a documented code, never 13, never printing the key', async () => {
    await enqueue(0, 5);
    const url = `${PG_URL}?application_name=${appName}`;
    const proc = spawnPostback(
      ['worker', '--pg', url, '--base-url', world.url, '--poll-ms', '50', '--log', 'json'],
      env,
    );
    spawned.push(proc);
    await proc.waitForLine(/"event":"worker.started"/, 15_000);
    await waitUntil(async () => (await world.conversions()).conversions.length === 5, 15_000);

    // Kill every connection of the worker, again and again, while it listens, polls and delivers.
    let killed = 0;
    for (let round = 0; round < 8; round++) {
      killed += await terminateWorkerConnections();
      await new Promise((resolve) => setTimeout(resolve, round % 2 === 0 ? 20 : 250));
    }
    expect(killed).toBeGreaterThan(0);

    const running = () => proc.child.exitCode === null && proc.child.signalCode === null;
    if (running()) {
      // Still up: it must still deliver what comes next.
      await enqueue(5, 3);
      await waitUntil(
        async () => !running() || (await world.conversions()).conversions.length === 8,
        30_000,
        100,
      );
    }
    if (running()) {
      proc.child.kill('SIGTERM');
      const exit = await proc.exited;
      expect(exit.code, proc.stderr.join('\n')).toBe(0);
    } else {
      const exit = await proc.exited;
      expect(exit.code, proc.stderr.join('\n')).not.toBe(13);
      expect(DOCUMENTED, `exit ${exit.code}: ${proc.stderr.join('\n')}`).toContain(exit.code);
      // A clean one-line message, not a stack trace or an unhandled 'error' event.
      expect(proc.stderr.join('\n')).toMatch(/^postback worker: /m);
      expect(proc.stderr.join('\n')).not.toMatch(/^\s+at /m);
    }
    expect(proc.stdout.join('\n') + proc.stderr.join('\n')).not.toContain(world.conversionsKey);
  }, 90_000);

  it('exits 1 with a clean message, not a hang, when SIGTERM comes while the database stops answering', async () => {
    await enqueue(0, 2);
    const url = `${PG_URL}?application_name=${appName}`;
    const proc = spawnPostback(
      ['worker', '--pg', url, '--base-url', world.url, '--poll-ms', '50', '--shutdown-timeout-ms', '500'],
      env,
    );
    spawned.push(proc);
    await waitUntil(async () => (await world.conversions()).conversions.length === 2, 15_000);
    // Another session takes the jobs table: every query of the worker now waits, with no error.
    const locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${schema}.jobs IN ACCESS EXCLUSIVE MODE`);
      await waitUntil(async () => {
        const { rows } = await admin.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
          [appName],
        );
        return rows[0].n > 0;
      }, 10_000);
      const signalled = Date.now();
      proc.child.kill('SIGTERM');
      const exit = await Promise.race([
        proc.exited,
        new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 25_000)),
      ]);
      expect(exit, proc.stderr.join('\n')).toEqual({ code: 1, signal: null });
      expect(Date.now() - signalled).toBeLessThan(25_000);
      expect(proc.stderr.join('\n')).toMatch(/^postback worker: .*did not finish within \d+ ms/m);
      expect(proc.stderr.join('\n')).not.toMatch(/^\s+at /m);
      expect(proc.stdout.join('\n') + proc.stderr.join('\n')).not.toContain(world.conversionsKey);
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
    }
  }, 60_000);
});
