/**
 * The worker's spend readings for `postback held` (worker-spend.ts): when a problem is first held and when
 * its campaign is seen accepting s2s, the account's campaign spend is read from the service and kept in
 * the outbox; a key without the read scope is refused, which changes nothing and throws nothing. Against
 * the sandbox over real HTTP.
 */
import { createClient } from '@postback/client';
import { createMemoryOutbox } from '@postback/core';
import { startSandbox } from '@postback/sandbox';
import { describe, expect, it } from 'vitest';
import { watchSpend } from '../src/worker-spend.ts';

/** A stand-in for the Dispatcher's event registry: the test fires the events. */
function events() {
  const listeners = new Map<string, Array<(payload: unknown) => void>>();
  return {
    on(name: string, listener: (payload: unknown) => void) {
      listeners.set(name, [...(listeners.get(name) ?? []), listener]);
    },
    fire(name: string, payload: unknown) {
      for (const listener of listeners.get(name) ?? []) listener(payload);
    },
  };
}

describe('the worker reads the spend at a hold and at a switch', () => {
  it('keeps a reading of the account campaigns at held and switch-seen; a key without read scope keeps none', async () => {
    await using sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
    const { keys } = await sandbox.control.createAccount({ balance_micros: 100_000_000 });
    const ads = createClient({ baseUrl: sandbox.url, apiKey: keys.all });
    const campaign = await ads.campaigns.create({
      name: 'Shoes',
      pricing_model: 'cpa',
      bid_micros: 1_000_000,
      total_budget_micros: 10_000_000,
      conversion_source: 's2s',
      creatives: [{ headline: 'h', body: 'b', cta: 'c', landing_url: 'https://shop.example/' }],
    });
    await ads.close();
    for (const [key, expected] of [
      [keys.read, 2],
      [keys.conversions, 0],
    ] as const) {
      const outbox = createMemoryOutbox();
      const dispatcher = events();
      const logged: unknown[] = [];
      const spend = watchSpend({
        dispatcher,
        outbox,
        baseUrl: sandbox.url,
        keyFor: () => key,
        now: sandbox.now,
        logger: { log: (_level, _name, fields) => logged.push(fields) },
      });
      dispatcher.fire('held', { account: null, campaignId: campaign.id });
      dispatcher.fire('switch-seen', { account: null, campaignId: campaign.id });
      await spend.close();
      const readings = (await outbox.shadow?.spend({ since: 0 })) ?? [];
      expect(readings).toHaveLength(expected);
      if (expected > 0) expect(readings[0]?.campaigns).toEqual([{ campaignId: campaign.id, spendMicros: 0 }]);
      expect(JSON.stringify(logged)).not.toContain(key);
      await outbox.close();
    }
  });
});
