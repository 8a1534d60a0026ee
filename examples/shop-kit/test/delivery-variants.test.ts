/**
 * The example shops deliver through their in-process worker to a sandbox that answers in shapes the client
 * does not expect (extra fields, unknown enum values, a confirmation answer without `campaign_id`): the
 * order is still charged once, and its return reversed once the campaign is known. The sandbox's own
 * records are the oracle. Real servers on ephemeral ports, a real SQLite file.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createShop as createExpressShop } from '@postback/example-express-shop';
import { createShop as createKoaShop } from '@postback/example-koa-shop';
import { type SandboxVariant, startSandbox } from '@postback/sandbox';
import { afterEach, describe, expect, it } from 'vitest';

const SECRET = 'shop-test-cookie-secret-0123456789abcdef';
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > end) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.each([
  { name: 'express-shop', createShop: createExpressShop },
  { name: 'koa-shop', createShop: createKoaShop },
])('$name delivering to a sandbox with unexpected answers', ({ createShop }) => {
  it.each([
    [['extra-fields', 'unknown-enums'] as SandboxVariant[], true],
    [['no-campaign-id', 'extra-fields'] as SandboxVariant[], false],
  ])(
    'with variants %j: the order is charged once and its return reversed',
    async (variants, knowsCampaign) => {
      const dir = await mkdtemp(join(tmpdir(), 'postback-shop-variants-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      const sandbox = await startSandbox({ port: 0, variants });
      cleanups.push(() => sandbox.close());
      const account = await sandbox.control.createAccount({ balance_micros: 100_000_000 });
      const created = await fetch(`${sandbox.url}/v1/campaigns`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.keys.write}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'variants',
          pricing_model: 'cpa',
          conversion_source: 's2s',
          bid_micros: 2_000_000,
          total_budget_micros: 50_000_000,
          daily_cap_micros: 50_000_000,
          creatives: [
            { headline: 'h', body: 'b', cta: 'Buy', landing_url: 'https://shop.example/', format: 'card' },
          ],
        }),
      });
      const campaignId = ((await created.json()) as { id: string }).id;
      const shop = await createShop({
        PORT: '0',
        POSTBACK_API_URL: sandbox.url,
        POSTBACK_API_KEY: account.keys.conversions,
        POSTBACK_SECRET: SECRET,
        POSTBACK_DB: join(dir, 'postback.db'),
      });
      cleanups.push(() => shop.close());

      const click = await sandbox.control.click(campaignId);
      const landing = await fetch(`${shop.url}/?click_token=${click.click_token}`);
      const cookie = landing.headers.getSetCookie()[0]?.split(';')[0] ?? '';
      const order = await fetch(`${shop.url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ order_id: 'ord_variant', total_micros: 3_000_000 }),
      });
      expect(await order.json()).toEqual({ order_id: 'ord_variant', attributed: true });

      const outbox = shop.backend.outbox;
      const [confirm] = await until(
        () => outbox.getByOrder('ord_variant'),
        (jobs) => jobs[0]?.state === 'delivered',
      );
      expect(confirm?.campaignId).toBe(knowsCampaign ? campaignId : null);

      await fetch(`${shop.url}/orders/ord_variant/refund`, { method: 'POST' });
      if (!knowsCampaign) {
        // The reversal waits for an operator to say which campaign (postback refund --campaign …).
        await until(
          () => outbox.getByOrder('ord_variant'),
          (jobs) => jobs[1]?.state === 'dead',
        );
        expect((await outbox.refund({ orderId: 'ord_variant', campaignId })).outcome).toBe('updated');
        shop.backend.enqueued();
      }
      await until(
        () => outbox.getByOrder('ord_variant'),
        (jobs) => jobs[1]?.state === 'delivered',
      );
      const report = await sandbox.control.conversions(account.account_id);
      expect(report.conversions).toEqual([
        expect.objectContaining({ order_id: 'ord_variant', campaign_id: campaignId, state: 'reversed' }),
      ]);
    },
  );
});
