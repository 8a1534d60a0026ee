/**
 * The example end to end: the producer script enqueues, the worker delivers to the sandbox of the ad
 * service, over the real AWS SDK talking to the SQS emulator (nock) — what a user sees after step 5 of
 * the README, minus AWS.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { createClient } from '@postback/client';
import { type RunningSandbox, type SandboxAccount, startSandbox } from '@postback/sandbox';
import nock from 'nock';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { SqsEmulator } from '../../../packages/sqs/test/sqs-emulator.ts';
import { ConfigError, readConfig } from '../src/config.ts';
import { enqueue } from '../src/enqueue.ts';
import { startWorker } from '../src/worker.ts';

let sqs: SqsEmulator;
let sandbox: RunningSandbox;
let account: SandboxAccount;
let client: SQSClient;
let env: Record<string, string>;

beforeEach(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1/);
  sqs = new SqsEmulator().start();
  const dlq = sqs.createQueue('postback-dlq.fifo', { MessageRetentionPeriod: '1209600' });
  const queue = sqs.createQueue('postback.fifo', {
    MessageRetentionPeriod: '1209600',
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: sqs.arnOf(dlq), maxReceiveCount: 20 }),
  });
  client = new SQSClient({
    region: 'us-east-1',
    endpoint: sqs.endpoint,
    credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'example-secret' },
  });
  sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  account = await sandbox.control.createAccount({ balance_micros: 500_000_000 });
  env = {
    SQS_QUEUE_URL: queue,
    SQS_DLQ_URL: dlq,
    POSTBACK_API_URL: sandbox.url,
    POSTBACK_API_KEY: account.keys.conversions,
  };
});

afterEach(async () => {
  client.destroy();
  await sandbox.close();
  sqs.stop();
  nock.enableNetConnect();
});

test('an order enqueued by the shop script is confirmed by the worker, then reversed, and the key never shows in the log', async () => {
  const writer = createClient({ baseUrl: sandbox.url, apiKey: account.keys.write });
  const campaign = await writer.campaigns.create({
    name: 'Spring sale',
    pricing_model: 'cpa',
    bid_micros: 5_000_000,
    total_budget_micros: 100_000_000,
    conversion_source: 's2s',
    creatives: [{ headline: 'Sale', body: '20% off', cta: 'Shop', landing_url: 'https://shop.example/sale' }],
  });
  await writer.close();
  const click = await sandbox.control.click(campaign.id);
  const printed: string[] = [];
  const options = { client, waitTimeSeconds: 1 } as const;
  expect(
    await enqueue(
      ['confirm', 'A-1001', '12.34', click.click_token, click.clicked_at],
      env,
      (l) => printed.push(l),
      options,
    ),
  ).toBe(0);
  expect(await enqueue(['refund', 'A-1001', campaign.id], env, (l) => printed.push(l), options)).toBe(0);
  expect(printed.join('\n')).toMatch(
    /queued confirmation of A-1001 \(12340000 micros\)[\s\S]*refund of A-1001: enqueued/,
  );

  const log: string[] = [];
  const worker = await startWorker(env, (l) => log.push(l), options);
  const until = Date.now() + 10_000;
  while (
    Date.now() < until &&
    (await sandbox.control.conversions(account.account_id)).conversions[0]?.state !== 'reversed'
  ) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await worker.stop();
  expect((await sandbox.control.conversions(account.account_id)).conversions).toEqual([
    expect.objectContaining({ order_id: 'A-1001', value_micros: 12_340_000, state: 'reversed' }),
  ]);
  expect(log.join('\n')).toMatch(
    /delivered confirm A-1001[\s\S]*delivered refund A-1001[\s\S]*worker stopped/,
  );
  expect(log.join('\n')).not.toContain(account.keys.conversions);
  expect(sqs.messages(env.SQS_QUEUE_URL as string)).toHaveLength(0);
});

test('the producer prints its usage for bad arguments and the configuration names a missing variable', async () => {
  const printed: string[] = [];
  expect(await enqueue(['confirm', 'A-1'], env, (l) => printed.push(l))).toBe(2);
  expect(printed.join('')).toMatch(/usage/);
  expect(() => readConfig({ SQS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/q.fifo' })).toThrow(
    ConfigError,
  );
  expect(() => readConfig({ SQS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/q.fifo' })).toThrow(
    /SQS_DLQ_URL/,
  );
});
