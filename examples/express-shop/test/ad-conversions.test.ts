/**
 * The shop's own integration test, as a shop would write it with `@postback/sandbox/shop-testing`: the real
 * app (its middleware, `confirmOrder`, outbox and in-process Dispatcher) against an in-process sandbox of
 * the ad service, sharing the sandbox's clock. An ad click lands, an order is confirmed once with its
 * value, its return is reversed; an order 8 days after the click is never sent.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ShopSandbox, startShopSandbox } from '@postback/sandbox/shop-testing';
import { afterEach, beforeEach, test } from 'vitest';
import { createShop, type Shop } from '../src/shop.ts';

let sandbox: ShopSandbox;
let shop: Shop;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'express-shop-test-'));
  sandbox = await startShopSandbox();
  const env = {
    PORT: '0',
    POSTBACK_API_URL: sandbox.url,
    POSTBACK_API_KEY: sandbox.apiKey,
    POSTBACK_SECRET: 'a-test-cookie-secret-of-32-chars!',
    POSTBACK_DB: join(dir, 'postback.db'),
  };
  shop = await createShop(env, { now: sandbox.now }); // the shop's windows move with advanceDays
});

afterEach(async () => {
  await shop?.close();
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

test('an order after an ad click is confirmed once with its value, and its return reversed', async () => {
  const shopper = await sandbox.landWithClick(shop.url);
  await shopper.post('/orders', { order_id: 'ord-1', total_micros: 25_000_000 });
  await sandbox.expectConversion({ orderId: 'ord-1', valueMicros: 25_000_000 });
  await shopper.post('/orders/ord-1/refund');
  await sandbox.expectReversal({ orderId: 'ord-1' });
});

test('an order 8 days after the click is never sent to the ad service', async () => {
  const shopper = await sandbox.landWithClick(shop.url);
  sandbox.advanceDays(8);
  await shopper.post('/orders', { order_id: 'ord-2', total_micros: 9_000_000 });
  await sandbox.expectNoConversion({ orderId: 'ord-2' });
  await sandbox.expectNoLateRequests(); // nothing was sent after the window
});
