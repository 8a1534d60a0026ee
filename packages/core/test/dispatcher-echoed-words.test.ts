/**
 * A refusal is classed by what the service said, not by what we sent: the sandbox echoes the request's
 * order id and campaign in its 409 and 404 details, and order ids full of the classifier's pattern words
 * ("pixel", "not on s2s", "expired", "older than", "window closed") must never turn those into a hold or
 * an expiry. Over real HTTP: the real client against the sandbox, jobs in memory outboxes.
 */
import { type AdServiceClient, createClient } from '@postback/client';
import { createDispatcher, createMemoryOutbox, type Dispatcher, type Outbox } from '@postback/core';
import { type RunningSandbox, type SandboxAccount, startSandbox } from '@postback/sandbox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** Order ids holding every word the classifier's patterns look for. */
const WORDY_ORDERS = [
  'pixel-not-on-s2s-expired-older-than-window-closed',
  'Pixel Pro (conversion source: pixel) not on s2s',
  'shop: window has closed, too late, too old, expired',
];

let sandbox: RunningSandbox;
let account: SandboxAccount;
let campaignId: string;
const clients: AdServiceClient[] = [];
const outboxes: Outbox[] = [];

function dispatcherFor(outbox: Outbox): Dispatcher {
  const client = createClient({ baseUrl: sandbox.url, apiKey: account.keys.conversions, timeout: 5_000 });
  clients.push(client);
  return createDispatcher({ outbox, client, backoff: { baseMs: 1, maxMs: 1, minMs: 0 } });
}

function newOutbox(): Outbox {
  const outbox = createMemoryOutbox({ now: sandbox.now });
  outboxes.push(outbox);
  return outbox;
}

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  account = await sandbox.control.createAccount({ balance_micros: 500_000_000 });
  const writer = createClient({ baseUrl: sandbox.url, apiKey: account.keys.write, timeout: 5_000 });
  clients.push(writer);
  const campaign = await writer.campaigns.create({
    name: 'Pixel expired: older than the window closed, not on s2s',
    pricing_model: 'cpa',
    bid_micros: 5_000_000,
    total_budget_micros: 100_000_000,
    conversion_source: 's2s',
    creatives: [
      { headline: 'Sale', body: 'Everything 20% off', cta: 'Shop', landing_url: 'https://shop.example/sale' },
    ],
  });
  campaignId = campaign.id;
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const outbox of outboxes.splice(0)) await outbox.close();
  await sandbox.close();
});

async function confirmIn(outbox: Outbox, orderId: string, valueMicros: number): Promise<void> {
  const click = await sandbox.control.click(campaignId);
  await outbox.confirm({
    orderId,
    valueMicros,
    click: { token: click.click_token, clickedAt: Date.parse(click.clicked_at) },
  });
}

describe('a refusal echoing order ids full of pattern words', () => {
  it.each(WORDY_ORDERS)(
    'dead-letters a 409 conflict of order %j: never held, never expired',
    async (orderId) => {
      const first = newOutbox();
      await confirmIn(first, orderId, 42_000_000);
      expect(await dispatcherFor(first).drain()).toMatchObject({ delivered: 1 });

      // The same order id confirmed again with another click and value (another shop's outbox): a 409.
      const second = newOutbox();
      await confirmIn(second, orderId, 7_000_000);
      const dispatcher = dispatcherFor(second);
      const held: unknown[] = [];
      dispatcher.on('held', (event) => held.push(event));
      await dispatcher.drain();
      const [job] = await second.getByOrder(orderId);
      expect(job).toMatchObject({ state: 'dead', heldAt: null });
      expect(job?.lastError).toContain('already confirmed with a different');
      expect(held).toEqual([]);
    },
  );

  it.each(WORDY_ORDERS)(
    'dead-letters a reversal of order %j the service never confirmed (404), naming the campaign tried',
    async (orderId) => {
      const outbox = newOutbox();
      expect((await outbox.refund({ orderId, campaignId })).outcome).toBe('enqueued');
      const dispatcher = dispatcherFor(outbox);
      const held: unknown[] = [];
      dispatcher.on('held', (event) => held.push(event));
      await dispatcher.drain();
      const [job] = await outbox.getByOrder(orderId);
      expect(job).toMatchObject({ kind: 'refund', state: 'dead', heldAt: null });
      expect(job?.lastError).toContain(`campaign ${campaignId} was supplied by the caller`);
      expect(job?.lastError).toContain('no confirmed order');
      expect(held).toEqual([]);
    },
  );

  it('still delivers and reverses a wordy order the service confirmed', async () => {
    const outbox = newOutbox();
    const [orderId] = WORDY_ORDERS as [string];
    await confirmIn(outbox, orderId, 42_000_000);
    const dispatcher = dispatcherFor(outbox);
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
    expect((await outbox.refund({ orderId })).outcome).toBe('enqueued');
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
    const report = await sandbox.control.conversions(account.account_id);
    expect(report.conversions).toEqual([expect.objectContaining({ order_id: orderId, state: 'reversed' })]);
  });
});
