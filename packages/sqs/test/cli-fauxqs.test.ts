/**
 * `postback worker --sqs QUEUE_URL --drain` against fauxqs (which long-polls as AWS does), reached only
 * through `AWS_ENDPOINT_URL_SQS`: the queue URL names another server, on another port, which must never
 * be asked. Two jobs are delivered to the sandbox of the ad service, and the run ends long before one
 * long poll would have (it took 40 s for two jobs before the claim fix).
 */
// Relative imports, not '@postback/cli': the CLI depends on this package, and a dependency back would be a cycle.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { main } from '../../cli/src/main.ts';
import { captureIo } from '../../cli/test/capture-io.ts';
import { createSqsOutbox } from '../src/index.ts';
import { type Fauxqs, startFauxqs } from './fauxqs.ts';
import { FAKE_CREDENTIALS } from './harness.ts';

let sqs: Fauxqs;
let world: SandboxWorld;
/** Stands where the queue URL points: it answers 500 and counts what reached it. */
let decoy: Server;
let decoyRequests = 0;

beforeEach(async () => {
  sqs = await startFauxqs();
  world = await startSandboxWorld();
  decoyRequests = 0;
  decoy = createServer((_req, res) => {
    decoyRequests += 1;
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => decoy.listen(0, '127.0.0.1', resolve));
  vi.stubEnv('AWS_ACCESS_KEY_ID', FAKE_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', FAKE_CREDENTIALS.secretAccessKey);
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_PROFILE', '');
  vi.stubEnv('AWS_ENDPOINT_URL', '');
  vi.stubEnv('AWS_IGNORE_CONFIGURED_ENDPOINT_URLS', '');
  vi.stubEnv('AWS_ENDPOINT_URL_SQS', sqs.endpoint);
});

afterEach(async () => {
  vi.unstubAllEnvs();
  decoy.closeAllConnections();
  await new Promise<void>((resolve) => decoy.close(() => resolve()));
  await world.close();
  await sqs.close();
});

/** The URL of fauxqs's queue `name`, on the decoy's host and port (fauxqs finds a queue by its path). */
async function queueOnDecoy(name: string): Promise<string> {
  const real = new URL(await sqs.createQueue(name));
  return `http://127.0.0.1:${(decoy.address() as AddressInfo).port}${real.pathname}`;
}

test('worker --sqs --drain sends to AWS_ENDPOINT_URL_SQS, never to the queue URL’s host, and ends long before one 20 s long poll', async () => {
  const deadLetterQueueUrl = await queueOnDecoy('postback-dlq.fifo');
  const queueUrl = await queueOnDecoy('postback.fifo');
  const producer = createSqsOutbox({ queueUrl, deadLetterQueueUrl, client: sqs.client, onWarning: () => {} });
  for (const [i, click] of (await world.clicks(2)).entries())
    await producer.confirm({ orderId: `ord_${i}`, valueMicros: 1_000, click });
  await producer.close();

  const io = captureIo({
    env: { POSTBACK_API_KEY: world.conversionsKey, POSTBACK_SQS_DLQ_URL: deadLetterQueueUrl },
  });
  const args = ['worker', '--sqs', queueUrl, '--base-url', world.url, '--drain', '--sqs-wait-seconds', '20'];
  const running = main([...args, '--prune-every', 'off', '--summary-every', 'off'], io);
  // Only a claim that waited out a 20 s long poll can take the run past half of it.
  const timer = setTimeout(() => io.controller.abort(), 10_000);
  const code = await running.finally(() => clearTimeout(timer));
  expect(io.controller.signal.aborted, 'the drain was still running after 10 s').toBe(false);
  expect(code, io.err()).toBe(0);
  expect((await world.conversions()).conversions.map((c) => c.order_id).sort()).toEqual(['ord_0', 'ord_1']);
  expect(decoyRequests).toBe(0);
}, 30_000);
