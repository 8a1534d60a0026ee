/**
 * A 429 slows the sender, not one job: against the sandbox's rate-limit fault (`rate_limit_per_s`, each
 * 429 asking `Retry-After: 30`), a running Dispatcher pauses the key's scope for the wait (all sends
 * without accounts; the account's with `apiKeyFor`), sends nothing of it until then, then one probe, and
 * the jobs that met a 429 keep their attempts. The sandbox clock is moved by hand, so no test waits 30 s.
 */
import { type AdServiceClient, createClient } from '@postback/client';
import {
  type ConversionsClient,
  createDispatcher,
  createMemoryOutbox,
  type Dispatcher,
  type Outbox,
} from '@postback/core';
import { type RunningSandbox, startSandbox } from '@postback/sandbox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** Orders per account: more than `concurrency`, so some are claimed while their key is paused. */
const ORDERS = 8;
let sandbox: RunningSandbox;
let outbox: Outbox;
const clients: AdServiceClient[] = [];
const dispatchers: Dispatcher[] = [];

/** An account with an s2s campaign: its conversions key and `count` confirmations of its clicks enqueued. */
async function accountWithOrders(name: string, count: number): Promise<{ key: string; account: string }> {
  const account = await sandbox.control.createAccount({ balance_micros: 500_000_000 });
  const writer = createClient({ baseUrl: sandbox.url, apiKey: account.keys.write, timeout: 5_000 });
  clients.push(writer);
  const campaign = await writer.campaigns.create({
    name: `Sale ${name}`,
    pricing_model: 'cpa',
    bid_micros: 1_000_000,
    total_budget_micros: 100_000_000,
    conversion_source: 's2s',
    creatives: [{ headline: 'Sale', body: 'All 20% off', cta: 'Shop', landing_url: 'https://shop.example/' }],
  });
  for (let i = 0; i < count; i++) {
    const click = await sandbox.control.click(campaign.id);
    await outbox.confirm({
      orderId: `${name}-${i}`,
      valueMicros: 1_000_000,
      account: name,
      click: { token: click.click_token, clickedAt: Date.parse(click.clicked_at) },
    });
  }
  return { key: account.keys.conversions, account: name };
}

/** A client that notes, per key, when each request began (sandbox clock). */
function recordingClient(defaultKey: string, starts: Map<string, number[]>): ConversionsClient {
  const client = createClient({ baseUrl: sandbox.url, apiKey: defaultKey, timeout: 5_000 });
  clients.push(client);
  const note = (options: { apiKey?: string }) => {
    const key = options.apiKey ?? defaultKey;
    starts.set(key, [...(starts.get(key) ?? []), sandbox.now()]);
  };
  return {
    conversions: {
      confirm(body, options) {
        note(options);
        return client.conversions.confirm(body, options);
      },
      refund(body, options) {
        note(options);
        return client.conversions.refund(body, options);
      },
    },
  };
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  outbox = createMemoryOutbox({ now: sandbox.now });
});

afterEach(async () => {
  for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop({ timeoutMs: 1_000 });
  for (const client of clients.splice(0)) await client.close();
  await outbox.close();
  await sandbox.close();
});

describe('Dispatcher under a rate limit (sandbox rate_limit_per_s, Retry-After: 30)', () => {
  it.each([
    ['one key: all sends pause', false],
    ['a key per account: each account pauses on its own', true],
  ])(
    '%s; nothing of the key is sent for 30 s but one probe, and attempts are not burnt',
    async (_, perAccount) => {
      const a = await accountWithOrders('a', ORDERS);
      const b = perAccount ? await accountWithOrders('b', ORDERS) : null;
      await sandbox.control.setFaults({ rate_limit_per_s: 2, retry_after_s: 30 });
      const starts = new Map<string, number[]>();
      const keys = new Map([a, ...(b === null ? [] : [b])].map((x) => [x.account, x.key]));
      const dispatcher = createDispatcher({
        outbox,
        client: recordingClient(a.key, starts),
        now: sandbox.now,
        concurrency: 4,
        pollIntervalMs: 10,
        leaseMs: 3_600_000, // the sandbox clock jumps by 30 s at a time
        ...(perAccount ? { apiKeyFor: (account: string | null) => keys.get(account ?? '') } : {}),
      });
      dispatchers.push(dispatcher);
      const pauses: Array<{ until: number; at: number; cause: string; account?: string | null }> = [];
      dispatcher.on('paused', (e) => pauses.push({ ...e, at: sandbox.now() }));
      dispatcher.on('account-paused', (e) => pauses.push({ ...e, at: sandbox.now() }));
      let resumed = 0;
      dispatcher.on('resumed', () => resumed++);
      dispatcher.on('account-resumed', () => resumed++);
      dispatcher.start();

      const scopes = perAccount ? 2 : 1;
      await until(() => pauses.length >= scopes, 'the pauses');
      expect(pauses.map((p) => p.cause)).toEqual(Array(scopes).fill('rate-limited'));
      for (const pause of pauses) expect(pause.until - pause.at).toBeGreaterThan(29_000);
      // Real time passes (the sandbox clock with it); then the sandbox clock is moved to 1 ms before the
      // end of each pause: nothing of a paused key may be sent meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const lastUntil = Math.max(...pauses.map((p) => p.until));
      sandbox.advance(lastUntil - 1 - sandbox.now());
      await new Promise((resolve) => setTimeout(resolve, 300));
      const sentDuring = (key: string, pause: { at: number; until: number }) =>
        (starts.get(key) ?? []).filter((t) => t > pause.at && t < pause.until).length;
      for (const pause of pauses) {
        const key = perAccount ? (keys.get(pause.account ?? '') as string) : a.key;
        expect(sentDuring(key, pause)).toBe(0);
      }
      // The wait is over: one probe per scope, then delivery resumes and everything is delivered.
      sandbox.advance(31_000);
      dispatcher.wake(); // the loop sleeps out a pause on a real timer: cut it short
      await until(() => resumed >= scopes, 'the probes');
      for (const pause of pauses) {
        const key = perAccount ? (keys.get(pause.account ?? '') as string) : a.key;
        // In the 30 s after the 429 (and up to the probe's answer): the probe only.
        const window = { at: pause.at, until: pause.until + 1 };
        expect(sentDuring(key, window)).toBeLessThanOrEqual(1);
      }
      const total = ORDERS * scopes;
      await until(
        async () => {
          // Each later 429 asks for 30 s again: let them pass.
          if (dispatcher.state === 'paused' || (await dispatcher.metrics()).pausedAccounts.length > 0) {
            sandbox.advance(31_000);
            dispatcher.wake();
          }
          return (await outbox.stats(sandbox.now())).counts.delivered === total;
        },
        'every job delivered',
        30_000,
      );
      // The jobs that met a 429 did not burn an attempt: each was delivered at its first counted one.
      for (const account of keys.keys()) {
        for (let i = 0; i < ORDERS; i++) {
          const [job] = await outbox.getByOrder(`${account}-${i}`, account);
          expect(job).toMatchObject({ state: 'delivered', attempts: 1 });
        }
      }
    },
  );
});
