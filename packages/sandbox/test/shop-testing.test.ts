/**
 * `@postback/sandbox/shop-testing` against a stand-in shop written with plain `node:http` (framework-
 * agnostic: the helpers only speak HTTP): a landing with a clean-URL redirect keeps the click cookie, and
 * each assertion passes on what the service applied and fails, with an `AssertionError` that says why,
 * on what it did not. The shop confirms straight to the sandbox, with its own clock left alone.
 */
import { AssertionError } from 'node:assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { SandboxOptionsError } from '../src/index.ts';
import { type ShopSandbox, startShopSandbox } from '../src/shop-testing/index.ts';

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

/** A shop: `/landing` keeps the click in a cookie (after a clean-URL redirect), `/orders` confirms it. */
async function standInShop(sandbox: ShopSandbox, options: { landingStatus?: number } = {}): Promise<string> {
  const v1 = (path: string, body: unknown) =>
    fetch(`${sandbox.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop');
    const token = url.searchParams.get(sandbox.clickParam);
    if (url.pathname === '/landing' && token !== null) {
      res.writeHead(options.landingStatus ?? 302, {
        'set-cookie': `clk=${token}; Path=/; HttpOnly`,
        location: '/welcome',
      });
      return res.end();
    }
    if (url.pathname === '/welcome') return res.end('welcome');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length === 0 ? {} : JSON.parse(Buffer.concat(chunks).toString());
    const click = /(?:^|; )clk=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    const refund = /^\/orders\/([^/]+)\/refund$/.exec(url.pathname)?.[1];
    if (url.pathname === '/orders' && click !== undefined) {
      await v1('/v1/conversions/s2s', {
        click_token: click,
        order_id: body.order_id,
        value_micros: body.total_micros,
      });
    } else if (refund !== undefined) {
      await v1('/v1/conversions/s2s/refund', { campaign_id: sandbox.campaignId, order_id: refund });
    }
    res.writeHead(201, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  opened.push({ close: () => new Promise((resolve) => server.close(() => resolve())) });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function setUp(options: Parameters<typeof startShopSandbox>[0] = {}) {
  const sandbox = await startShopSandbox(options);
  opened.push(sandbox);
  return { sandbox, appUrl: await standInShop(sandbox) };
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('startShopSandbox', () => {
  test('lands with a click through a clean-URL redirect, keeping the cookie; asserts the conversion and the reversal', async () => {
    const { sandbox, appUrl } = await setUp({ clickParam: 'pbclid' });
    const shopper = await sandbox.landWithClick(appUrl, '/landing');
    expect(new URL(shopper.landingUrl).searchParams.get('pbclid')).toBe(shopper.clickToken);
    expect(shopper.landing).toMatchObject({ status: 200, text: 'welcome' });
    expect(shopper.cookie()).toBe(`clk=${shopper.clickToken}`);
    expect(Math.abs(shopper.clickedAt - sandbox.now())).toBeLessThan(5_000);

    expect((await shopper.post('/orders', { order_id: 'o-1', total_micros: 25_000_000 })).status).toBe(201);
    const conversion = await sandbox.expectConversion({ orderId: 'o-1', valueMicros: 25_000_000 });
    expect(conversion).toMatchObject({
      campaign_id: sandbox.campaignId,
      state: 'confirmed',
      charged_micros: 1_000_000,
    });

    const wrongValue = await failure(sandbox.expectConversion({ orderId: 'o-1', valueMicros: 1 }));
    expect(wrongValue).toBeInstanceOf(AssertionError);
    expect(wrongValue).toMatchObject({
      message: 'order o-1 was confirmed with value_micros 25000000, not 1',
      actual: 25_000_000,
      expected: 1,
    });
    expect(await failure(sandbox.expectNoConversion({ orderId: 'o-1', withinMs: 50 }))).toBeInstanceOf(
      AssertionError,
    );

    await shopper.post('/orders/o-1/refund');
    expect(await sandbox.expectReversal({ orderId: 'o-1' })).toMatchObject({ state: 'reversed' });
  });

  test('fails with an AssertionError naming the order when the shop confirmed or reversed nothing', async () => {
    const { sandbox, appUrl } = await setUp({ timeoutMs: 100 });
    const shopper = await sandbox.landWithClick(appUrl, '/welcome'); // a page that keeps no click
    await shopper.post('/orders', { order_id: 'o-2', total_micros: 5 });
    const missing = await failure(sandbox.expectConversion({ orderId: 'o-2', valueMicros: 5 }));
    expect(missing).toBeInstanceOf(AssertionError);
    expect((missing as Error).message).toMatch(
      /^order o-2 was not confirmed to the ad service within 100 ms/,
    );
    const noReversal = await failure(sandbox.expectReversal({ orderId: 'o-2' }));
    expect((noReversal as Error).message).toBe(
      'order o-2 was never confirmed to the ad service, so there is no reversal',
    );
    await sandbox.expectNoConversion({ orderId: 'o-2', withinMs: 50 });
    await sandbox.expectNoLateRequests();
  });

  test('advanceDays moves its clock and the service: an order 8 days after the click is refused', async () => {
    const { sandbox, appUrl } = await setUp();
    const shopper = await sandbox.landWithClick(appUrl, '/landing');
    const before = sandbox.now();
    expect(sandbox.advanceDays(8)).toBeGreaterThanOrEqual(before + 8 * 86_400_000);
    expect(Date.parse((await sandbox.control.clock()).now)).toBeGreaterThanOrEqual(before + 8 * 86_400_000);
    await shopper.post('/orders', { order_id: 'late', total_micros: 5 });
    await sandbox.expectNoConversion({ orderId: 'late', withinMs: 50 });
    expect((await sandbox.conversions()).counts).toMatchObject({ requests: 1, rejections: 1, late: 1 });
    const late = await failure(sandbox.expectNoLateRequests());
    expect(late).toBeInstanceOf(AssertionError);
    expect((late as Error).message).toBe(
      'the ad service received 1 confirmation requests more than 7 days after their click',
    );
  });

  test('a landing the shop answers with an error status throws, naming it', async () => {
    const sandbox = await startShopSandbox();
    opened.push(sandbox);
    const appUrl = await standInShop(sandbox, { landingStatus: 500 });
    await expect(sandbox.landWithClick(appUrl, '/landing')).rejects.toThrow(
      /landing on .*\/landing\?click_token=.* answered 500/,
    );
  });

  test('refuses unknown and bad options, naming them', async () => {
    for (const [options, field] of [
      [{ bidMicros: 0 }, 'bidMicros'],
      [{ timeoutMs: -1 }, 'timeoutMs'],
      [{ clickParam: 'a b' }, 'clickParam'],
      [{ returnWindowDays: 0 }, 'returnWindowDays'],
      [{ bid: 1 }, 'bid'],
    ] as const) {
      const error = await failure(startShopSandbox(options as never));
      expect(error).toBeInstanceOf(SandboxOptionsError);
      expect(error).toMatchObject({ field });
    }
  });
});
