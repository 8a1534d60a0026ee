/**
 * End to end in a real browser: for each example shop, an ad click in the sandbox lands the shopper on
 * the shop, the Order button confirms the order to the sandbox (once, with the right value), and the
 * Return button reverses it. Everything real: sandbox and shop on ephemeral loopback ports, SQLite
 * outbox in a temp dir, the shop's in-process Dispatcher, headless Chromium.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createShop as createExpressShop } from '@postback/example-express-shop';
import { createShop as createFastifyShop } from '@postback/example-fastify-shop';
import { createShop as createKoaShop } from '@postback/example-koa-shop';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, launchBrowser } from './helpers/browser.ts';

const PRICE_MICROS = 49_990_000; // what the landing page's product costs

describe.each([
  { name: 'express-shop', createShop: createExpressShop, title: 'Express shop' },
  { name: 'koa-shop', createShop: createKoaShop, title: 'Koa shop' },
  { name: 'fastify-shop', createShop: createFastifyShop, title: 'Fastify shop' },
])('$name in a browser', ({ createShop, title }) => {
  let world: SandboxWorld;
  let shop: Awaited<ReturnType<typeof createExpressShop>>;
  let browser: Browser;
  let dir: string;
  let campaignId: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postback-e2e-'));
    world = await startSandboxWorld();
    shop = await createShop({
      PORT: '0',
      HOST: '127.0.0.1',
      POSTBACK_API_URL: world.url,
      POSTBACK_API_KEY: world.conversionsKey,
      POSTBACK_SECRET: 'e2e-cookie-secret-0123456789abcdef0123',
      POSTBACK_DB: join(dir, 'postback.db'),
    });
    campaignId = await world.createCampaign(`${shop.url}/`);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await shop?.close();
    await world?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('confirms an order placed after an ad click exactly once, with its value, and reverses it on return', async () => {
    const click = await world.click(campaignId);
    expect(click.landingUrl.startsWith(`${shop.url}/?click_token=`)).toBe(true);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(click.landingUrl);
      await expect(page.title()).resolves.toBe(title);
      expect(await page.textContent('#visitor')).toBe('Welcome, ad visitor');
      const cookies = await context.cookies();
      expect(cookies.map((c) => c.name)).toContain('postback_click');

      await page.click('#order');
      await page.waitForFunction(() => document.getElementById('answer')?.textContent !== '');
      const ordered = JSON.parse((await page.textContent('#answer')) ?? '') as {
        status: number;
        order_id: string;
        attributed: boolean;
      };
      expect(ordered).toMatchObject({ status: 201, attributed: true });

      const confirmed = await eventually('the confirmation in the sandbox', async () => {
        const { conversions } = await world.conversions();
        return conversions.find((c) => c.order_id === ordered.order_id);
      });
      expect(confirmed).toMatchObject({
        campaign_id: campaignId,
        value_micros: PRICE_MICROS,
        state: 'confirmed',
      });

      await page.click('#return');
      await page.waitForFunction(() =>
        document.getElementById('answer')?.textContent?.includes('"status":202'),
      );
      const reversed = await eventually('the reversal in the sandbox', async () => {
        const { conversions } = await world.conversions();
        return conversions.find((c) => c.order_id === ordered.order_id && c.state === 'reversed');
      });
      expect(reversed.reversed_at).not.toBeNull();

      const report = await world.conversions();
      expect(report.conversions.filter((c) => c.order_id === ordered.order_id)).toHaveLength(1);
      expect(report.counts).toMatchObject({ duplicates: 0, late: 0, rejections: 0 });
    } finally {
      await context.close();
    }
  });

  it('records an order from a visitor who came without a click as not attributed, queues nothing and offers no reversal', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${shop.url}/`);
      expect(await page.textContent('#visitor')).toBe('Welcome');
      await page.click('#order');
      await page.waitForFunction(() => document.getElementById('answer')?.textContent !== '');
      const ordered = JSON.parse((await page.textContent('#answer')) ?? '') as { order_id: string };
      expect(ordered).toMatchObject({ status: 201, attributed: false });
      expect(await shop.backend.outbox.getByOrder(ordered.order_id)).toEqual([]);
      expect(await page.isDisabled('#return')).toBe(true);
    } finally {
      await context.close();
    }
  });
});
