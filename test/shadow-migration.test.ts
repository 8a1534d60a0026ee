/**
 * Moving a shop from pixel to s2s with shadow mode, over real HTTP, on the sandbox's movable clock: two
 * simulated days in shadow mode (the worker records every order and the sandbox receives nothing from
 * it; the pixel bills the orders until the shop turns it off at T), `postback shadow report` shows the
 * orders beside the pixel's spend, the campaign is switched to s2s, and `postback shadow end
 * --send-unbilled-after T` sends the orders the pixel did not bill: the sandbox's records show each order
 * charged exactly once across both paths.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@postback/client';
import { createDispatcher } from '@postback/core';
import { type RunningSandbox, startSandbox } from '@postback/sandbox';
import { createSqliteOutbox } from '@postback/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { createShadowCommand } from '../packages/cli/src/commands/shadow.ts';
import { defaultContext } from '../packages/cli/src/context.ts';
import { capturedIo } from './helpers/captured-io.ts';

const HOUR = 3_600_000;
const ORDERS = 10;
const BID = 1_000_000;
const VALUE = 30_000_000;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** `postback shadow <args> --json` in process on the sandbox's clock: its exit code and JSON. */
async function shadowCli(sandbox: RunningSandbox, args: string[], env: Record<string, string>) {
  const captured = capturedIo(env);
  const command = createShadowCommand({ openBackend: defaultContext.openBackend, now: sandbox.now });
  const code = await command.run([...args, '--json'], captured.io);
  expect(captured.err()).toBe('');
  return { code, json: JSON.parse(captured.out()) };
}

/**
 * The pixel side of an order: the shop's pixel fires for it, and the sandbox bills it while the campaign
 * is on pixel (its `POST /_sandbox/pixel` control route, which raises the campaign's spend as the service
 * would). The one place this test bills through the pixel.
 */
async function pixelBills(sandbox: RunningSandbox, click: { click_token: string }, orderId: string) {
  const fired = await sandbox.control.firePixel({ click_token: click.click_token, order_id: orderId });
  expect(fired).toMatchObject({ billed: true, charged_micros: BID });
}

describe('moving from pixel to s2s with shadow mode', () => {
  it('charges each order exactly once across the pixel and s2s, after two days in shadow mode', async () => {
    await using sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
    const dir = mkdtempSync(join(tmpdir(), 'postback-shadow-'));
    dirs.push(dir);
    const file = join(dir, 'outbox.db');
    const { account_id, keys } = await sandbox.control.createAccount({ balance_micros: 500_000_000 });
    const ads = createClient({ baseUrl: sandbox.url, apiKey: keys.all });
    const client = createClient({ baseUrl: sandbox.url, apiKey: keys.conversions, timeout: 5_000 });
    const outbox = createSqliteOutbox({ filename: file, now: sandbox.now });
    const env = { POSTBACK_API_KEY: keys.read };
    const db = ['--db', file, '--base-url', sandbox.url];
    try {
      const campaign = await ads.campaigns.create({
        name: 'Shoes',
        pricing_model: 'cpa',
        bid_micros: BID,
        total_budget_micros: 100_000_000,
        conversion_source: 's2s',
        creatives: [{ headline: 'h', body: 'b', cta: 'c', landing_url: 'https://shop.example/' }],
      });
      await sandbox.control.setConversionSource(campaign.id, 'pixel');
      const t0 = sandbox.now();
      expect((await shadowCli(sandbox, ['start', ...db], env)).json).toMatchObject({
        scope: 'all',
        since: expect.any(String),
      });

      const dispatcher = createDispatcher({ outbox, client, now: sandbox.now, concurrency: 1 });
      // The shop turns its pixel off at T, a day and a half in.
      const T = t0 + 36 * HOUR;
      const billedByPixel = new Set<string>();
      const reports = [];
      for (let i = 0; i < ORDERS; i++) {
        sandbox.advance((48 * HOUR) / ORDERS - 60_000);
        const orderId = `ord_${i}`;
        const click = await sandbox.control.click(campaign.id);
        await outbox.confirm({
          orderId,
          valueMicros: VALUE,
          click: { token: click.click_token, clickedAt: Date.parse(click.clicked_at) },
        });
        if (sandbox.now() < T) {
          await pixelBills(sandbox, click, orderId);
          billedByPixel.add(orderId);
        }
        expect(await dispatcher.drain()).toMatchObject({ shadowed: 1, delivered: 0 });
        if (i === ORDERS / 2 - 1 || i === ORDERS - 1)
          reports.push(await shadowCli(sandbox, ['report', ...db], env));
      }
      expect(billedByPixel.size).toBeGreaterThan(0);
      expect(billedByPixel.size).toBeLessThan(ORDERS);

      // In shadow mode the sandbox heard nothing from the worker's key.
      expect(
        (await sandbox.control.requests({ accountId: account_id, key: 'conversions' })).requests,
      ).toEqual([]);
      expect((await sandbox.control.conversions(account_id)).conversions).toEqual([]);

      // The report, side by side: every order recorded with the body it would have sent, and the spend
      // the pixel billed between the readings over the same days.
      const { json: report } = reports.at(-1) as {
        json: { days: Array<Record<string, number | null | unknown[]>> };
      };
      const sum = (field: string) => report.days.reduce((n, d) => n + ((d[field] as number | null) ?? 0), 0);
      expect(sum('orders')).toBe(ORDERS);
      expect(sum('recorded')).toBe(ORDERS);
      expect(sum('recorded_value_micros')).toBe(ORDERS * VALUE);
      expect(sum('spend_micros')).toBe(billedByPixel.size * BID);
      const bodies = report.days.flatMap(
        (d) => d.requests as Array<{ path: string; body: { order_id: string } }>,
      );
      expect(bodies.map((r) => r.body.order_id).sort()).toEqual(
        Array.from({ length: ORDERS }, (_, i) => `ord_${i}`).sort(),
      );
      expect(JSON.stringify(reports)).not.toContain(keys.read);

      // The switch: the campaign goes to s2s, shadow mode ends sending what the pixel did not bill.
      sandbox.advance(HOUR);
      await sandbox.control.setConversionSource(campaign.id, 's2s');
      const end = await shadowCli(
        sandbox,
        ['end', '--db', file, '--send-unbilled-after', new Date(T).toISOString()],
        {},
      );
      expect(end.json).toMatchObject({
        ended: true,
        sent: ORDERS - billedByPixel.size,
        dropped: billedByPixel.size,
      });
      expect(await dispatcher.drain()).toMatchObject({ delivered: ORDERS - billedByPixel.size, shadowed: 0 });

      // The oracle: each order charged once, by the pixel or by s2s, never both, none missing, none late.
      const { conversions, counts } = await sandbox.control.conversions(account_id);
      const bySs2 = new Set(conversions.map((c) => c.order_id));
      expect(conversions.every((c) => c.state === 'confirmed' && c.charged_micros === BID)).toBe(true);
      expect([...bySs2].filter((id) => billedByPixel.has(id))).toEqual([]);
      expect(new Set([...bySs2, ...billedByPixel]).size).toBe(ORDERS);
      expect(bySs2.size + billedByPixel.size).toBe(ORDERS);
      expect(counts.late).toBe(0);
      const [listed] = (await ads.campaigns.list()).campaigns;
      expect((listed as { spend_micros?: number }).spend_micros).toBe(ORDERS * BID);
    } finally {
      await outbox.close();
      await client.close();
      await ads.close();
    }
  }, 120_000);
});
