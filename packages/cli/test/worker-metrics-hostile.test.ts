/**
 * `postback worker --metrics-port`, run as the real binary: malformed requests written raw to its
 * `/metrics`, `/healthz` and `/readyz` (the port Prometheus may reach) each get a 4xx and a
 * `metrics.client-error` log line; the worker never stops on them, answers the next request, and exits 0
 * on SIGTERM afterwards.
 */
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostileRequests, sendRaw, unmet } from '../../../test/helpers/hostile-requests.ts';
import { type PostbackProcess, spawnPostback, stopProcess } from '../../../test/helpers/worker-process.ts';
import { type DbFixture, dbFixture } from './db-fixture.ts';

let db: DbFixture;
let world: SandboxWorld;
let worker: PostbackProcess | undefined;
beforeEach(async () => {
  db = dbFixture();
  world = await startSandboxWorld();
});
afterEach(async () => {
  if (worker !== undefined) await stopProcess(worker);
  worker = undefined;
  await world?.close();
  db.cleanup();
});

const ROUTES = ['/metrics', '/healthz', '/readyz'];

describe('postback worker --metrics-port under malformed requests', () => {
  it('answers each with a 4xx, logs it as a client error, and keeps running and answering', async () => {
    const w = spawnPostback(
      [
        'worker',
        '--db',
        db.file,
        '--base-url',
        world.url,
        '--poll-ms',
        '50',
        '--log',
        'json',
        '--metrics-port',
        '0',
      ],
      { POSTBACK_API_KEY: world.conversionsKey },
    );
    worker = w;
    const line = await w.waitForLine(/worker\.metrics/, 20_000);
    const url = new URL((JSON.parse(line) as { url: string }).url);
    const port = Number(url.port);

    const failures: string[] = [];
    let expectedLogs = 0;
    for (const path of ROUTES) {
      for (const request of hostileRequests({ path })) {
        const problem = unmet(request, await sendRaw(port, request));
        if (problem !== null) failures.push(`${path} ${problem}`);
        if (request.expect === '4xx') expectedLogs++;
        if (w.child.exitCode !== null) throw new Error(`the worker exited after ${path} ${request.name}`);
        const next = await fetch(`${url.origin}${path}`);
        await next.arrayBuffer();
        if (next.status !== 200) failures.push(`after ${path} ${request.name}: ${next.status}`);
      }
    }
    expect(failures).toEqual([]);

    const lines = [...w.stdout, ...w.stderr];
    expect(lines.join('\n')).not.toMatch(/unexpected error/);
    const clientErrors = lines.filter((l) => l.includes('"metrics.client-error"'));
    expect(clientErrors.length).toBeGreaterThanOrEqual(expectedLogs);
    const logged = JSON.parse(clientErrors.find((l) => l.includes('//[')) as string);
    expect(logged).toMatchObject({ level: 40, status: 400, reason: 'bad-target', target: '//[' });
    // The key never reaches a log line, whatever the requests held.
    expect(lines.join('\n')).not.toContain(world.conversionsKey);

    w.child.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
  }, 90_000);
});
