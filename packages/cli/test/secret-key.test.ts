/**
 * The API key never leaves the process: a service that echoes it in its refusals (the sandbox's
 * `refuse-key` variant: `422 {"detail":"key <KEY> is not allowed ..."}`) must not get it into the
 * worker's log, the dead-letter reasons stored in the SQLite file, or any output of status and dlq.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnPostback } from '../../../test/helpers/worker-process.ts';
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

/** Runs the real binary to its end; what it printed on stdout and stderr. */
async function postback(args: string[], env: Record<string, string> = {}) {
  const proc = spawnPostback(args, env);
  const { code } = await proc.exited;
  return { code, output: `${proc.stdout.join('\n')}\n${proc.stderr.join('\n')}` };
}

describe('a service that echoes the API key in its refusals', () => {
  it('never gets the key into the worker log, the SQLite file, status or dlq list (text or JSON)', async () => {
    const key = world.conversionsKey;
    const clicks = await world.clicks(3);
    const outbox = db.open();
    for (const [i, click] of clicks.entries()) {
      await outbox.confirm({ orderId: `echo-${i}`, valueMicros: 1_000, click });
    }
    await outbox.close();
    const res = await fetch(new URL('/_sandbox/variants', world.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ variants: ['refuse-key'] }),
    });
    expect(res.status).toBe(200);

    const outputs: string[] = [];
    const worker = await postback(
      ['worker', '--db', db.file, '--base-url', world.url, '--drain', '--poll-ms', '20'],
      { POSTBACK_API_KEY: key },
    );
    outputs.push(worker.output);
    expect(worker.code, worker.output).toBe(0);
    for (const args of [['status'], ['status', '--json'], ['dlq', 'list'], ['dlq', 'list', '--json']]) {
      const run = await postback([...args, '--db', db.file]);
      expect(run.code, run.output).toBe(0);
      outputs.push(run.output);
    }

    // The refusals did happen and were kept, with the service's reason (the test would prove nothing else).
    const listed = JSON.parse(outputs[4]?.split('\n')[0] ?? '{}');
    expect(listed.jobs).toHaveLength(3);
    expect(listed.jobs[0].reason).toMatch(/422.*not allowed/);

    for (const output of outputs) expect(output).not.toContain(key);
    for (const file of readdirSync(db.dir)) {
      expect(readFileSync(join(db.dir, file)).includes(key), `${file} holds the key`).toBe(false);
    }
  }, 60_000);
});
