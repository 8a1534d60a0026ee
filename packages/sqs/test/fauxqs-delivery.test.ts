/**
 * End to end on fauxqs, an SQS emulator from npm whose long poll waits as AWS's does (our own emulator
 * caps a long poll at 50 ms, which hid a claim that waited on an empty receive): the core Dispatcher
 * delivers from the SQS outbox, through the real client, to the sandbox of the ad service. Real time
 * throughout; the sandbox's records say what was charged, fauxqs's counts what is left.
 */
import { GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { type AdServiceClient, createClient } from '@postback/client';
import { createDispatcher, type RunSummary } from '@postback/core';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createMemoryOrderLedger, createSqsOutbox, type SqsOutbox } from '../src/index.ts';
import { type Fauxqs, startFauxqs } from './fauxqs.ts';

/** AWS's longest long poll, and the outbox's default. */
const LONG_POLL_SECONDS = 20;

let sqs: Fauxqs;
let world: SandboxWorld;
let client: AdServiceClient;
let outbox: SqsOutbox;

beforeEach(async () => {
  sqs = await startFauxqs();
  world = await startSandboxWorld();
  client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey, timeout: 5_000 });
  const deadLetterQueueUrl = await sqs.createQueue('postback-dlq.fifo');
  const queueUrl = await sqs.createQueue('postback.fifo');
  outbox = createSqsOutbox({
    queueUrl,
    deadLetterQueueUrl,
    client: sqs.client,
    ledger: createMemoryOrderLedger(),
    waitTimeSeconds: LONG_POLL_SECONDS,
    onWarning: () => {},
  });
});

afterEach(async () => {
  await outbox.close();
  await client.close();
  await world.close();
  await sqs.close();
});

/** Messages left in the queue, visible or not. */
async function left(): Promise<number> {
  const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] as const;
  const { Attributes } = await sqs.client.send(
    new GetQueueAttributesCommand({ QueueUrl: outbox.queueUrl, AttributeNames: [...names] }),
  );
  return names.reduce((sum, name) => sum + Number(Attributes?.[name] ?? 0), 0);
}

/**
 * Drains with a Dispatcher of default batch size (16: two receives' worth), or gives up after `limitMs`:
 * the drain's summary, or `'late'` (its claims are then cut short and the outbox closed, so nothing hangs).
 */
async function drainWithin(limitMs: number): Promise<RunSummary | 'late'> {
  const dispatcher = createDispatcher({ outbox, client });
  const drained = dispatcher.drain();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), limitMs);
  });
  const outcome = await Promise.race([drained, late]).finally(() => clearTimeout(timer));
  if (outcome === 'late') {
    outbox.interruptClaims();
    await outbox.close();
    await drained.catch(() => {});
  }
  return outcome;
}

test('fauxqs long-polls as AWS does: a receive on an empty queue answers after its WaitTimeSeconds, not at once', async () => {
  // What the drain test below relies on: were fauxqs to answer an empty long poll at once, as our own
  // emulator nearly does, that test could not fail.
  const started = performance.now();
  const { Messages } = await sqs.client.send(
    new ReceiveMessageCommand({ QueueUrl: outbox.queueUrl, WaitTimeSeconds: 1, MaxNumberOfMessages: 10 }),
  );
  expect(Messages ?? []).toEqual([]);
  expect(performance.now() - started).toBeGreaterThanOrEqual(900);
});

test('a drain of two jobs ends long before one long-poll wait: no received job waits on an empty receive, and the last claim proves the queue empty quickly', async () => {
  const [a, b] = await world.clicks(2);
  await outbox.confirm({ orderId: 'ord_1', valueMicros: 1_000, click: a! });
  await outbox.confirm({ orderId: 'ord_2', valueMicros: 2_000, click: b! });
  // Only a receive that waited out its long poll (20 s) can take this drain past half of it.
  const summary = await drainWithin((LONG_POLL_SECONDS * 1000) / 2);
  expect(summary).toMatchObject({ claimed: 2, delivered: 2 });
  expect((await world.conversions()).conversions.map((c) => c.order_id).sort()).toEqual(['ord_1', 'ord_2']);
  expect(await left()).toBe(0);
}, 30_000);

test('confirms an order once and reverses it in the campaign the confirmation returned, refund enqueued before delivery', async () => {
  const [click] = await world.clicks(1);
  await outbox.confirm({ orderId: 'ord_1001', valueMicros: 42_000, click: click! });
  // Asked for before the confirmation went out: it waits behind it in the FIFO group.
  expect((await outbox.refund({ orderId: 'ord_1001' })).outcome).toBe('enqueued');
  // Round one delivers the confirm; only then does SQS hand out the refund, in round two.
  const summary = await drainWithin((LONG_POLL_SECONDS * 1000) / 2);
  expect(summary).toMatchObject({ claimed: 2, delivered: 2 });
  expect((await world.conversions()).conversions).toEqual([
    expect.objectContaining({ order_id: 'ord_1001', campaign_id: world.campaignId, state: 'reversed' }),
  ]);
  expect(await left()).toBe(0);
}, 30_000);
