/**
 * Held jobs do not storm the service, over real HTTP against the sandbox: 40 orders of a campaign on pixel
 * billing are held, then 10 orders of another campaign are delivered (half of their answers naming no
 * campaign, as a lost or reshaped answer would). Those deliveries prove nothing of the held campaign: the
 * service sees about one probe per problem per `holdProbeMs`, the problem is named once, and after the
 * switch to s2s the probe releases the 40, each delivered once.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from '@postback/client';
import { createDispatcher, type DispatcherEvents, type Outbox } from '@postback/core';
import { createPostgresOutbox, migrate } from '@postback/postgres';
import { startSandbox } from '@postback/sandbox';
import { createSqliteOutbox } from '@postback/sqlite';
import pg from 'pg';
import { describe, expect, it } from 'vitest';

const HOUR = 3_600_000;
const PROBE = 6 * HOUR;
const HELD = 40;
const OTHERS = 10;

const campaignOf = (name: string) => ({
  name,
  pricing_model: 'cpa' as const,
  bid_micros: 1_000_000,
  total_budget_micros: 500_000_000,
  conversion_source: 's2s' as const,
  creatives: [{ headline: 'h', body: 'b', cta: 'c', landing_url: 'https://shop.example/' }],
});

const PG_URL = process.env.POSTBACK_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** An outbox on the sandbox's clock, with what closes it (a Postgres one in a fresh schema, dropped). */
type Store = (now: () => number) => Promise<{ outbox: Outbox; close: () => Promise<void> }>;
const sqlite: Store = async (now) => {
  const outbox = createSqliteOutbox({ filename: ':memory:', now });
  return { outbox, close: () => outbox.close() };
};
const postgres: Store = async (now) => {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  const schema = `pbt_${randomBytes(6).toString('hex')}`;
  await migrate(pool, { schema });
  const outbox = createPostgresOutbox({ pool, schema, now });
  return {
    outbox,
    close: async () => {
      await outbox.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
};

describe.each([
  ['SQLite', sqlite],
  ['PostgreSQL', postgres],
])('held orders beside deliveries of another campaign (%s)', (_name, store) => {
  it('are probed once per problem per holdProbeMs, named once, and delivered once each after the switch', async () => {
    await using sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
    const { account_id, keys } = await sandbox.control.createAccount({ balance_micros: 5_000_000_000 });
    const ads = createClient({ baseUrl: sandbox.url, apiKey: keys.all });
    const client = createClient({ baseUrl: sandbox.url, apiKey: keys.conversions, timeout: 5_000 });
    const { outbox, close } = await store(sandbox.now);
    try {
      const pixel = await ads.campaigns.create(campaignOf('Pixel by mistake'));
      const s2s = await ads.campaigns.create(campaignOf('On s2s'));
      await sandbox.control.setConversionSource(pixel.id, 'pixel');
      const order = async (orderId: string, campaignId: string) => {
        const click = await sandbox.control.click(campaignId);
        await outbox.confirm({
          orderId,
          valueMicros: 30_000_000,
          click: { token: click.click_token, clickedAt: Date.parse(click.clicked_at) },
        });
      };
      for (let i = 0; i < HELD; i++) await order(`held_${i}`, pixel.id);

      const dispatcher = createDispatcher({
        outbox,
        client,
        now: sandbox.now,
        holdProbeMs: PROBE,
        // No pixel: held orders probe the campaign and are sent at its switch.
        onSwitch: 'send',
        concurrency: 8,
      });
      const held: Array<DispatcherEvents['held']> = [];
      dispatcher.on('held', (event) => held.push(event));
      expect(await dispatcher.drain()).toMatchObject({ held: HELD, delivered: 0, dead: 0 });
      // One of them probes the problem (even when refused at the same time), due after holdProbeMs; the
      // others wait for its answer, until their last chance (days away).
      const probes = (await outbox.listJobs()).filter(
        (job) => (job.nextAttemptAt as number) <= sandbox.now() + PROBE,
      );
      expect(probes).toHaveLength(1);
      await sandbox.control.clearRequests();

      // 10 deliveries of the other campaign over two probe periods, every other answer naming no campaign.
      const start = sandbox.now();
      for (let i = 0; i < OTHERS; i++) {
        await sandbox.control.setVariants(i % 2 === 0 ? ['no-campaign-id'] : []);
        await order(`other_${i}`, s2s.id);
        sandbox.advance(PROBE / 5);
        expect(await dispatcher.drain()).toMatchObject({ delivered: 1, dead: 0 });
      }
      await sandbox.control.clearVariants();
      const periods = Math.ceil((sandbox.now() - start) / PROBE);
      const { requests } = await sandbox.control.requests({ accountId: account_id, key: 'conversions' });
      const refused = requests.filter((r) => r.status === 422).length;
      expect(requests.length - refused).toBe(OTHERS);
      expect(refused).toBeGreaterThanOrEqual(1);
      expect(refused).toBeLessThanOrEqual(periods);
      expect(held).toHaveLength(1);
      expect(held[0]).toMatchObject({ campaignId: pixel.id });

      // The switch: the problem's probe is delivered and releases the rest.
      await sandbox.control.setConversionSource(pixel.id, 's2s');
      sandbox.advance(PROBE);
      expect(await dispatcher.drain()).toMatchObject({ delivered: HELD, held: 0, dead: 0 });
      expect(held).toHaveLength(1);
      const report = await sandbox.control.conversions(account_id);
      const ofPixel = report.conversions.filter((c) => c.campaign_id === pixel.id);
      expect(ofPixel).toHaveLength(HELD);
      expect(new Set(ofPixel.map((c) => c.order_id)).size).toBe(HELD);
      for (const job of await outbox.listJobs())
        expect(job).toMatchObject({ state: 'delivered', attempts: 1 });
    } finally {
      await close();
      await client.close();
      await ads.close();
    }
  }, 120_000);
});
