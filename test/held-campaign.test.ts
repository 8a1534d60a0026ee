/**
 * A campaign on pixel billing, over real HTTP, through public APIs only: the sandbox answers each order of
 * it with a 422 ("campaign cmp_… is not on s2s"), the Dispatcher holds the jobs in a SQLite file (none dead,
 * none burning attempts), names the problem once, `postback status --fail-on-paused` exits 12 while they
 * are held; the advertiser switches the campaign to s2s on day 3 (the sandbox's clock, the Dispatcher's
 * `now`), and the first probe after it delivers and releases the rest: all 20 charged once each, inside
 * their windows, with no operator action.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '@postback/cli';
import { createClient } from '@postback/client';
import { createDispatcher, type DispatcherEvents } from '@postback/core';
import { startSandbox } from '@postback/sandbox';
import { createSqliteOutbox } from '@postback/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { capturedIo } from './helpers/captured-io.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PROBE = 6 * HOUR;
const ORDERS = 20;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** `postback status --db <file> --json --fail-on-paused`, in process: its exit code and JSON. */
async function status(file: string) {
  const captured = capturedIo();
  const code = await main(['status', '--db', file, '--json', '--fail-on-paused'], captured.io);
  return { code, json: JSON.parse(captured.out()), err: captured.err() };
}

describe('orders of a campaign not on s2s', () => {
  it('are held, named once, and all delivered once each after the switch to s2s on day 3', async () => {
    await using sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
    const dir = mkdtempSync(join(tmpdir(), 'postback-held-'));
    dirs.push(dir);
    const file = join(dir, 'outbox.db');
    const { account_id, keys } = await sandbox.control.createAccount({ balance_micros: 500_000_000 });
    const ads = createClient({ baseUrl: sandbox.url, apiKey: keys.all });
    const client = createClient({ baseUrl: sandbox.url, apiKey: keys.conversions, timeout: 5_000 });
    const outbox = createSqliteOutbox({ filename: file, now: sandbox.now });
    try {
      const campaign = await ads.campaigns.create({
        name: 'Pixel by mistake',
        pricing_model: 'cpa',
        bid_micros: 1_000_000,
        total_budget_micros: 100_000_000,
        conversion_source: 's2s',
        creatives: [{ headline: 'h', body: 'b', cta: 'c', landing_url: 'https://shop.example/' }],
      });
      await sandbox.control.setConversionSource(campaign.id, 'pixel');
      const t0 = sandbox.now();
      for (let i = 0; i < ORDERS; i++) {
        const click = await sandbox.control.click(campaign.id);
        const clickedAt = Date.parse(click.clicked_at);
        await outbox.confirm({
          orderId: `ord_${i}`,
          valueMicros: 30_000_000,
          click: { token: click.click_token, clickedAt },
        });
      }

      const dispatcher = createDispatcher({
        outbox,
        client,
        now: sandbox.now,
        holdProbeMs: PROBE,
        // No pixel: the campaign was left on pixel by mistake, its held orders are to be sent.
        onSwitch: 'send',
        concurrency: 1,
      });
      const held: Array<DispatcherEvents['held']> = [];
      const released: Array<DispatcherEvents['hold-released']> = [];
      dispatcher.on('held', (event) => held.push(event));
      dispatcher.on('hold-released', (event) => released.push(event));

      // Day 0: every order is refused and held; nothing is dead, no attempt is counted.
      expect(await dispatcher.drain()).toMatchObject({ held: ORDERS, dead: 0, delivered: 0 });
      expect(held).toHaveLength(1);
      expect(held[0]).toMatchObject({ campaignId: campaign.id, account: null });
      const during = await status(file);
      expect(during.code).toBe(12);
      expect(during.json.alerts).toEqual(['jobs-held']);
      expect(during.json.held).toEqual([
        expect.objectContaining({ campaignId: campaign.id, count: ORDERS, valueMicros: ORDERS * 30_000_000 }),
      ]);
      expect(during.err).toContain(campaign.id);

      // Probed every 6 hours until day 3 by one order, the others waiting for its answer: still held,
      // never dead, attempts never counted.
      while (sandbox.now() < t0 + 3 * DAY) {
        sandbox.advance(PROBE);
        expect(await dispatcher.drain()).toMatchObject({ held: 1, dead: 0, delivered: 0 });
      }
      const jobs = await outbox.listJobs({ states: ['pending'] });
      expect(jobs).toHaveLength(ORDERS);
      expect(jobs.every((job) => job.attempts === 0 && job.heldCampaignId === campaign.id)).toBe(true);
      expect(held).toHaveLength(1);
      expect((await outbox.stats(sandbox.now())).counts.dead).toBe(0);

      // Day 3: the advertiser switches the campaign. At the problem's probe, it is delivered and releases
      // the other 19 at once, long before their own last chances.
      expect(sandbox.now()).toBeGreaterThanOrEqual(t0 + 3 * DAY);
      await sandbox.control.setConversionSource(campaign.id, 's2s');
      const probes = jobs.map((job) => job.nextAttemptAt).sort((a, b) => a - b);
      sandbox.advance((probes[0] as number) - sandbox.now());
      expect(await dispatcher.drain()).toMatchObject({ delivered: ORDERS, held: 0, dead: 0 });
      expect(sandbox.now()).toBeLessThan(probes[1] as number);
      expect(released).toHaveLength(1);
      expect(released[0]).toMatchObject({ campaignId: campaign.id, released: ORDERS - 1 });

      const report = await sandbox.control.conversions(account_id);
      expect(report.conversions).toHaveLength(ORDERS);
      expect(new Set(report.conversions.map((c) => c.order_id)).size).toBe(ORDERS);
      expect(report.conversions.every((c) => c.state === 'confirmed' && c.campaign_id === campaign.id)).toBe(
        true,
      );
      for (const job of await outbox.listJobs()) {
        expect(job).toMatchObject({ state: 'delivered', heldAt: null, attempts: 1 });
        expect(job.deliveredAt as number).toBeLessThanOrEqual(job.deadline as number);
      }
      const after = await status(file);
      expect(after.code).toBe(0);
      expect(after.json.held).toEqual([]);
      expect(after.json.counts).toMatchObject({ delivered: ORDERS, dead: 0 });
    } finally {
      await outbox.close();
      await client.close();
      await ads.close();
    }
  }, 120_000);
});
