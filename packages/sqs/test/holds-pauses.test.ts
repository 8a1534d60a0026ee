/**
 * Holds and pauses end to end on a standard queue whose redrive policy allows 3 receives: the core
 * Dispatcher delivers from the SQS outbox, through the real client, to the sandbox of the ad service,
 * on our emulator and on fauxqs (both following a test clock). A pixel campaign's orders held through
 * more probes than the redrive policy allows, and a 20 s key outage, push nothing into the dead-letter
 * queue: waiting is a delayed re-send, whose new message has not been received yet (`resend.ts`). And on
 * FIFO and standard queues, the delivery that proves a campaign switched releases its held orders.
 */
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type AdServiceClient, createClient } from '@postback/client';
import { createDispatcher, type Dispatcher, type DispatcherOptions } from '@postback/core';
import { createFakeClock } from '@postback/core/testing';
import { type RunningSandbox, type SandboxAccount, startSandbox } from '@postback/sandbox';
import { afterEach, describe, expect, test } from 'vitest';
import { createMemoryOrderLedger, createSqsOutbox, type SqsOutbox } from '../src/index.ts';
import { followClock, startFauxqs } from './fauxqs.ts';
import { startHarness } from './harness.ts';

/** The redrive policy's receives before a message is dead-lettered. */
const MAX_RECEIVE_COUNT = 3;
const REDRIVE = (arn: string) =>
  JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: MAX_RECEIVE_COUNT });
const PROBE_MS = 60_000;

/** One SQS server with a standard queue and its dead-letter queue, on a clock the test moves. */
interface World {
  client: SQSClient;
  queueUrl: string;
  dlqUrl: string;
  now(): number;
  advance(ms: number): void;
  close(): Promise<void>;
}

async function emulatorWorld(fifo = false): Promise<World> {
  const h = startHarness({ standard: !fifo });
  const queueUrl = h.sqs.createQueue(fifo ? 'held.fifo' : 'held', {
    MessageRetentionPeriod: '1209600',
    RedrivePolicy: REDRIVE(h.sqs.arnOf(h.dlqUrl)),
  });
  return {
    client: h.client,
    queueUrl,
    dlqUrl: h.dlqUrl,
    now: () => h.sqs.now(),
    advance: (ms) => h.sqs.advance(ms),
    close: () => h.close(),
  };
}

async function fauxqsWorld(fifo = false): Promise<World> {
  const suffix = fifo ? '.fifo' : '';
  const clock = createFakeClock(Date.now());
  // fauxqs keeps delays and visibility by Date.now(), and so does the sandbox: both follow the clock.
  const restore = followClock(clock.now);
  const sqs = await startFauxqs();
  const dlqUrl = await sqs.createQueue(`held-dlq${suffix}`);
  const queueUrl = await sqs.createQueue(`held${suffix}`, {
    RedrivePolicy: REDRIVE(`arn:aws:sqs:us-east-1:000000000000:held-dlq${suffix}`),
  });
  return {
    client: sqs.client,
    queueUrl,
    dlqUrl,
    now: clock.now,
    advance: (ms) => clock.advance(ms),
    close: async () => {
      await sqs.close();
      restore();
    },
  };
}

let world: World | undefined;
let sandbox: RunningSandbox | undefined;
let client: AdServiceClient | undefined;
let outbox: SqsOutbox | undefined;
afterEach(async () => {
  await outbox?.close();
  await client?.close();
  await sandbox?.close();
  await world?.close();
  world = sandbox = client = outbox = undefined;
});

/** Messages in a queue: visible, in flight and delayed. */
async function count(queueUrl: string): Promise<number> {
  const names = [
    'ApproximateNumberOfMessages',
    'ApproximateNumberOfMessagesNotVisible',
    'ApproximateNumberOfMessagesDelayed',
  ] as const;
  const { Attributes } = await (world as World).client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...names] }),
  );
  return names.reduce((sum, name) => sum + Number(Attributes?.[name] ?? 0), 0);
}

/** The world, the sandbox with one account and a campaign of `source`, and the outbox. */
async function setUp(start: () => Promise<World>, source: 'pixel' | 's2s') {
  world = await start();
  sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  const account: SandboxAccount = await sandbox.control.createAccount({ balance_micros: 500_000_000 });
  const writer = createClient({ baseUrl: sandbox.url, apiKey: account.keys.write });
  const campaign = await writer.campaigns.create({
    name: 'Spring sale',
    pricing_model: 'cpa',
    bid_micros: 1_000_000,
    total_budget_micros: 400_000_000,
    conversion_source: source,
    creatives: [
      { headline: 'Sale', body: 'Everything 20% off', cta: 'Shop', landing_url: 'https://shop.example/sale' },
    ],
  });
  await writer.close();
  client = createClient({ baseUrl: sandbox.url, apiKey: account.keys.conversions, timeout: 5_000 });
  outbox = createSqsOutbox({
    queueUrl: world.queueUrl,
    deadLetterQueueUrl: world.dlqUrl,
    client: world.client,
    ledger: createMemoryOrderLedger(),
    waitTimeSeconds: 0,
    deadLetterWaitSeconds: 0,
    deleteBatchWindowMs: 1,
    onWarning: () => {},
  });
  return { account, campaignId: campaign.id };
}

async function confirmOrders(campaignId: string, n: number, from = 0): Promise<void> {
  for (let i = from; i < from + n; i++) {
    const click = await (sandbox as RunningSandbox).control.click(campaignId);
    await (outbox as SqsOutbox).confirm({
      orderId: `ord_${i}`,
      valueMicros: 1_000_000 + i,
      click: { token: click.click_token, clickedAt: Date.parse(click.clicked_at) },
    });
  }
}

function dispatcher(
  options: Partial<Pick<DispatcherOptions, 'holdProbeMs' | 'authPauseMs' | 'onSwitch'>> = {},
): Dispatcher {
  const w = world as World;
  return createDispatcher({
    outbox: outbox as SqsOutbox,
    client: client as AdServiceClient,
    now: () => w.now(),
    backoff: { baseMs: 1_000, maxMs: 1_000 },
    // No pixel: SQS keeps no switches, so held orders are sent at the switch only with 'send' (README).
    onSwitch: 'send',
    ...options,
  });
}

/** Each applied order of the account, and how many times it was applied. */
async function applied(account: SandboxAccount): Promise<Map<string, number>> {
  const report = await (sandbox as RunningSandbox).control.conversions(account.account_id);
  const out = new Map<string, number>();
  for (const c of report.conversions) out.set(c.order_id, (out.get(c.order_id) ?? 0) + 1);
  return out;
}

describe.each([
  ['our emulator', () => emulatorWorld()],
  ['fauxqs', () => fauxqsWorld()],
])('on %s, a standard queue with maxReceiveCount 3', (_name, start) => {
  test('a pixel campaign’s 30 orders held through more probes than maxReceiveCount stay out of the dead-letter queue, and are all delivered once when the campaign switches', async () => {
    const { account, campaignId } = await setUp(start, 'pixel');
    await confirmOrders(campaignId, 30);
    const worker = dispatcher({ holdProbeMs: PROBE_MS });
    for (let probe = 0; probe < MAX_RECEIVE_COUNT + 2; probe++) {
      expect(await worker.drain()).toMatchObject(
        probe === 0 ? { claimed: 30, held: 30, dead: 0 } : { claimed: 1, held: 1, dead: 0 },
      );
      (world as World).advance(PROBE_MS);
    }
    expect(await count((world as World).dlqUrl)).toBe(0);
    expect((await applied(account)).size).toBe(0);

    await (sandbox as RunningSandbox).control.setConversionSource(campaignId, 's2s');
    expect(await worker.drain()).toMatchObject({ delivered: 1, dead: 0 });
    (world as World).advance(15 * 60_000);
    await worker.drain();
    const orders = await applied(account);
    expect([...orders.keys()].sort()).toEqual(Array.from({ length: 30 }, (_, i) => `ord_${i}`).sort());
    expect([...orders.values()].every((times) => times === 1)).toBe(true);
    expect(await count((world as World).queueUrl)).toBe(0);
    expect(await count((world as World).dlqUrl)).toBe(0);
  });

  const ORDERS = 3;
  test('a 20 s 401 outage pushes nothing into the dead-letter queue; every order is delivered once after it', async () => {
    const { account, campaignId } = await setUp(start, 's2s');
    // Few orders, so the probes of the outage (one every 2 s) meet each of them more than 3 times.
    await confirmOrders(campaignId, ORDERS);
    await (sandbox as RunningSandbox).control.revokeKeys(account.account_id);
    const worker = dispatcher({ authPauseMs: 2_000 });
    let deferred = 0;
    for (let second = 0; second < 20; second++) {
      deferred += (await worker.drain()).deferred;
      (world as World).advance(1_000);
    }
    // Each probe met the refused key: more refusals than the redrive policy allows receives.
    expect(deferred).toBeGreaterThan(MAX_RECEIVE_COUNT);
    expect(await count((world as World).dlqUrl)).toBe(0);
    await (sandbox as RunningSandbox).control.restoreKeys(account.account_id);
    let delivered = 0;
    for (let round = 0; round < 10 && delivered < ORDERS; round++) {
      delivered += (await worker.drain()).delivered;
      (world as World).advance(1_000);
    }
    expect(delivered).toBe(ORDERS);
    const orders = await applied(account);
    expect(orders.size).toBe(ORDERS);
    expect([...orders.values()].every((times) => times === 1)).toBe(true);
    expect(await count((world as World).dlqUrl)).toBe(0);
  });
});

describe.each([
  ['our emulator', 'standard', () => emulatorWorld()],
  ['our emulator', 'FIFO', () => emulatorWorld(true)],
  ['fauxqs', 'standard', () => fauxqsWorld()],
  ['fauxqs', 'FIFO', () => fauxqsWorld(true)],
])('on %s, a %s queue', (_name, kind, start) => {
  test('after the switch the first delivery releases the held orders: on FIFO at once, on a standard queue when their current delay ends', async () => {
    const { account, campaignId } = await setUp(start, 'pixel');
    await confirmOrders(campaignId, 5);
    const worker = dispatcher({ holdProbeMs: 6 * 3_600_000 });
    expect(await worker.drain()).toMatchObject({ held: 5 });
    await (sandbox as RunningSandbox).control.setConversionSource(campaignId, 's2s');
    await confirmOrders(campaignId, 1, 5);
    const first = await worker.drain();
    if (kind === 'FIFO') {
      expect(first).toMatchObject({ delivered: 6 });
    } else {
      expect(first).toMatchObject({ delivered: 1 });
      (world as World).advance(900_000);
      expect(await worker.drain()).toMatchObject({ delivered: 5 });
    }
    const orders = await applied(account);
    expect(orders.size).toBe(6);
    expect([...orders.values()].every((times) => times === 1)).toBe(true);
    expect(await count((world as World).dlqUrl)).toBe(0);
  });

  test("at onSwitch 'ask' (the default) no held order is sent after the switch: a later order is, the held ones expire unsent", async () => {
    const { account, campaignId } = await setUp(start, 'pixel');
    await confirmOrders(campaignId, 5);
    const worker = dispatcher({ onSwitch: 'ask' });
    expect(await worker.drain()).toMatchObject({ held: 5 });
    await (sandbox as RunningSandbox).control.setConversionSource(campaignId, 's2s');
    await confirmOrders(campaignId, 1, 5);
    expect(await worker.drain()).toMatchObject({ delivered: 1 });
    // Past every deadline: the held orders come back only to expire, unsent.
    (world as World).advance(8 * 86_400_000);
    expect(await worker.drain()).toMatchObject({ expired: 5, delivered: 0 });
    expect([...(await applied(account)).keys()]).toEqual(['ord_5']);
    expect(await count((world as World).dlqUrl)).toBe(5);
  });
});
