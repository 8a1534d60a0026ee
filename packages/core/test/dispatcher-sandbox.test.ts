/**
 * The Dispatcher against the sandbox emulator of the ad service (`@postback/sandbox`): real clicks of a
 * real s2s campaign, confirmed and reversed through the real client, with the sandbox's fault injection
 * standing in for an unreliable network. The sandbox's own records say what was charged.
 */
import { type AdServiceClient, createClient } from '@postback/client';
import { createDispatcher, createMemoryOutbox, type Dispatcher, type Outbox } from '@postback/core';
import {
  type RunningSandbox,
  type SandboxAccount,
  type SandboxVariant,
  startSandbox,
} from '@postback/sandbox';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

/** The sandbox's response variants of the suite under way: the default answers, then unexpected ones. */
let variants: SandboxVariant[] = [];
let sandbox: RunningSandbox;
let account: SandboxAccount;
let campaignId: string;
let outbox: Outbox;
const clients: AdServiceClient[] = [];

function clientWith(apiKey: string): AdServiceClient {
  const client = createClient({ baseUrl: sandbox.url, apiKey, timeout: 5_000 });
  clients.push(client);
  return client;
}

function dispatcherWith(client: AdServiceClient, extra: { authPauseMs?: number } = {}): Dispatcher {
  return createDispatcher({
    outbox,
    client,
    backoff: { baseMs: 1, maxMs: 1, minMs: 0 },
    ...extra,
  });
}

async function clickAndConfirm(orderId: string, valueMicros: number) {
  const click = await sandbox.control.click(campaignId);
  await outbox.confirm({
    orderId,
    valueMicros,
    click: { token: click.click_token, clickedAt: Date.parse(click.clicked_at) },
  });
}

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, host: '127.0.0.1', variants });
  account = await sandbox.control.createAccount({ balance_micros: 500_000_000 });
  const campaign = await clientWith(account.keys.write).campaigns.create({
    name: 'Spring sale',
    pricing_model: 'cpa',
    bid_micros: 5_000_000,
    total_budget_micros: 100_000_000,
    conversion_source: 's2s',
    creatives: [
      { headline: 'Sale', body: 'Everything 20% off', cta: 'Shop', landing_url: 'https://shop.example/sale' },
    ],
  });
  campaignId = campaign.id;
  outbox = createMemoryOutbox({ now: sandbox.now });
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await outbox.close();
  await sandbox.close();
});

describe.each([[[] as SandboxVariant[]], [['extra-fields', 'unknown-enums'] as SandboxVariant[]]])(
  'Dispatcher against the sandbox answering with variants %j',
  (these) => {
    beforeAll(() => {
      variants = these;
    });

    it('confirms an order once and reverses it with the campaign the confirmation returned', async () => {
      await clickAndConfirm('ord_1001', 42_000_000);
      const dispatcher = dispatcherWith(clientWith(account.keys.conversions));
      expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
      const [confirm] = await outbox.getByOrder('ord_1001');
      expect(confirm).toMatchObject({ state: 'delivered', campaignId });

      expect((await outbox.refund({ orderId: 'ord_1001' })).outcome).toBe('enqueued');
      expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
      const report = await sandbox.control.conversions(account.account_id);
      expect(report.conversions).toEqual([
        expect.objectContaining({
          order_id: 'ord_1001',
          campaign_id: campaignId,
          value_micros: 42_000_000,
          state: 'reversed',
        }),
      ]);
    });

    it('charges each order exactly once through injected 503s and connection resets', async () => {
      for (let i = 0; i < 5; i++) await clickAndConfirm(`ord_${i}`, 1_000_000 * (i + 1));
      await sandbox.control.setFaults({ fail_next: 3, error_status: 503, reset_after_rate: 0.3 });
      const dispatcher = dispatcherWith(clientWith(account.keys.conversions));
      for (let round = 0; round < 20; round++) {
        await dispatcher.drain();
        if ((await outbox.stats(sandbox.now())).counts.delivered === 5) break;
        await new Promise((resolve) => setTimeout(resolve, 5)); // let the 1 ms backoff pass
      }
      await sandbox.control.clearFaults();
      expect((await outbox.stats(sandbox.now())).counts.delivered).toBe(5);
      const report = await sandbox.control.conversions(account.account_id);
      expect(report.conversions.map((c) => c.order_id).sort()).toEqual([
        'ord_0',
        'ord_1',
        'ord_2',
        'ord_3',
        'ord_4',
      ]);
    });

    it('pauses on a key without the conversions scope instead of dead-lettering the order', async () => {
      await clickAndConfirm('ord_1', 1_000_000);
      const dispatcher = dispatcherWith(clientWith(account.keys.read), { authPauseMs: 60_000 });
      const paused: unknown[] = [];
      dispatcher.on('paused', (event) => paused.push(event));
      await dispatcher.drain();
      expect(paused).toEqual([expect.objectContaining({ status: 403 })]);
      expect(await outbox.getByOrder('ord_1')).toEqual([
        expect.objectContaining({ state: 'pending', attempts: 0 }),
      ]);
      expect(JSON.stringify(paused)).not.toContain(account.keys.read);
    });
  },
);
