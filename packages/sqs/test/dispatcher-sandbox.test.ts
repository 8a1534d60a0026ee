/**
 * End to end: the core Dispatcher delivers jobs from the SQS outbox (real AWS SDK → nock → SQS emulator)
 * to the sandbox of the ad service (real HTTP on 127.0.0.1) through the real client. The sandbox's own
 * records say what was charged; the emulator's queues say what is left.
 */
import { type AdServiceClient, createClient } from '@postback/client';
import { createDispatcher, type Dispatcher } from '@postback/core';
import { type RunningSandbox, type SandboxAccount, startSandbox } from '@postback/sandbox';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createMemoryOrderLedger, type SqsOutbox } from '../src/index.ts';
import { type Harness, startHarness } from './harness.ts';

let h: Harness;
let sandbox: RunningSandbox;
let account: SandboxAccount;
let campaignId: string;
let client: AdServiceClient;
let outbox: SqsOutbox;

beforeEach(async () => {
  h = startHarness();
  sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  account = await sandbox.control.createAccount({ balance_micros: 500_000_000 });
  const writer = createClient({ baseUrl: sandbox.url, apiKey: account.keys.write });
  const campaign = await writer.campaigns.create({
    name: 'Spring sale',
    pricing_model: 'cpa',
    bid_micros: 5_000_000,
    total_budget_micros: 100_000_000,
    conversion_source: 's2s',
    creatives: [
      { headline: 'Sale', body: 'Everything 20% off', cta: 'Shop', landing_url: 'https://shop.example/sale' },
    ],
  });
  await writer.close();
  campaignId = campaign.id;
  client = createClient({ baseUrl: sandbox.url, apiKey: account.keys.conversions, timeout: 5_000 });
  outbox = h.outbox({ ledger: createMemoryOrderLedger(), waitTimeSeconds: 0 });
});

afterEach(async () => {
  await client.close();
  await sandbox.close();
  await h.close();
});

function dispatcher(): Dispatcher {
  return createDispatcher({
    outbox,
    client,
    now: () => h.sqs.now(),
    backoff: { baseMs: 1_000, maxMs: 1_000 },
  });
}

async function clickAndConfirm(orderId: string, valueMicros: number): Promise<void> {
  const click = await sandbox.control.click(campaignId);
  await outbox.confirm({
    orderId,
    valueMicros,
    click: { token: click.click_token, clickedAt: Date.parse(click.clicked_at) },
  });
}

test('confirms an order once and reverses it in the campaign the confirmation returned, refund enqueued before delivery', async () => {
  await clickAndConfirm('ord_1001', 42_000_000);
  // The refund is asked for before the confirmation went out: it waits behind it in the FIFO group.
  expect((await outbox.refund({ orderId: 'ord_1001' })).outcome).toBe('enqueued');
  const worker = dispatcher();
  // Round one delivers the confirm; only then does SQS hand out the refund, in round two.
  expect(await worker.drain()).toMatchObject({ claimed: 2, delivered: 2 });
  const report = await sandbox.control.conversions(account.account_id);
  expect(report.conversions).toEqual([
    expect.objectContaining({
      order_id: 'ord_1001',
      campaign_id: campaignId,
      value_micros: 42_000_000,
      state: 'reversed',
    }),
  ]);
  expect(h.sqs.messages(h.queueUrl)).toHaveLength(0);
});

test('charges each order exactly once through 503s: retries wait in SQS visibility, not in the worker', async () => {
  for (let i = 0; i < 4; i++) await clickAndConfirm(`ord_${i}`, 1_000_000 * (i + 1));
  await sandbox.control.setFaults({ fail_next: 3, error_status: 503 });
  const worker = dispatcher();
  let delivered = 0;
  for (let round = 0; round < 10 && delivered < 4; round++) {
    delivered += (await worker.drain()).delivered;
    h.sqs.advance(1_000); // the 1 s backoff, as visibility timeouts on the emulator's clock
  }
  expect(delivered).toBe(4);
  const report = await sandbox.control.conversions(account.account_id);
  expect(report.conversions.map((c) => c.order_id).sort()).toEqual(['ord_0', 'ord_1', 'ord_2', 'ord_3']);
  expect(h.sqs.messages(h.queueUrl)).toHaveLength(0);
});

test('a confirmation the service refuses goes to the dead-letter queue with the service’s reason', async () => {
  await outbox.confirm({
    orderId: 'ord_bad',
    valueMicros: 1_000,
    click: { token: 'tok_never_issued_by_the_sandbox', clickedAt: h.sqs.now() - 1_000 },
  });
  expect(await dispatcher().drain()).toMatchObject({ dead: 1 });
  const [dead] = await outbox.listDead();
  expect(dead).toMatchObject({ orderId: 'ord_bad', state: 'dead' });
  expect(dead?.lastError).toMatch(/\d{3}/);
  expect(dead?.lastError).not.toContain(account.keys.conversions);
  expect(h.sqs.messages(h.queueUrl)).toHaveLength(0);
});

test('a worker stopping while its claim waits in a 20-second long poll stops at once', async () => {
  const slow = h.outbox({ waitTimeSeconds: 20 });
  const worker = createDispatcher({ outbox: slow, client, wake: () => () => slow.interruptClaims() });
  worker.start();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const started = Date.now();
  await worker.stop({ timeoutMs: 10_000 });
  expect(Date.now() - started).toBeLessThan(5_000);
});
