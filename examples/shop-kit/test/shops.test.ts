/**
 * The example shops over plain HTTP, every framework with the same expectations: malformed order bodies
 * get a 400 naming the field, refunds of orders never attributed are 404, a landing sets the click cookie
 * (without `Secure` on loopback), orders are durably queued, and configuration errors name the variable
 * without echoing secrets. Real servers on ephemeral ports, a real SQLite file, the sandbox as ad service.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { createShop as createExpressShop } from '@postback/example-express-shop';
import { createShop as createFastifyShop } from '@postback/example-fastify-shop';
import { createShop as createKoaShop } from '@postback/example-koa-shop';
import { readShopConfig, ShopConfigError } from '@postback/example-shop-kit';
import { startSandbox } from '@postback/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SECRET = 'shop-test-cookie-secret-0123456789abcdef';

describe.each([
  { name: 'express-shop', createShop: createExpressShop },
  { name: 'koa-shop', createShop: createKoaShop },
  { name: 'fastify-shop', createShop: createFastifyShop },
])('$name over HTTP', ({ createShop }) => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let shop: Awaited<ReturnType<typeof createExpressShop>>;
  let dir: string;
  let landingUrl: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postback-shop-'));
    sandbox = await startSandbox({ port: 0 });
    const account = await sandbox.control.createAccount({});
    // Enqueue only: these tests look at the shop's answers and its outbox, not at delivery.
    shop = await createShop({
      PORT: '0',
      POSTBACK_API_URL: sandbox.url,
      POSTBACK_API_KEY: account.keys.conversions,
      POSTBACK_SECRET: SECRET,
      POSTBACK_DB: join(dir, 'postback.db'),
      POSTBACK_WORKER: 'off',
      POSTBACK_CLICK_PARAM: 'ct',
    });
    landingUrl = `${shop.url}/?ct=tok_${'a'.repeat(24)}`;
  });

  afterAll(async () => {
    await shop?.close();
    await sandbox?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const post = async (path: string, body: string | undefined, cookie?: string) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (cookie) headers.cookie = cookie;
    const res = await fetch(`${shop.url}${path}`, { method: 'POST', headers, body });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('sets the signed click cookie on a landing with the configured parameter, without Secure on loopback', async () => {
    const res = await fetch(landingUrl);
    expect(await res.text()).toContain('Welcome, ad visitor');
    const [cookie] = res.headers.getSetCookie();
    expect(cookie).toMatch(/^postback_click=[A-Za-z0-9_-]{52}\.[A-Za-z0-9._~-]+;/);
    expect(cookie).not.toMatch(/;\s*Secure/i);
  });

  it('queues the confirmation of an order from a clicked visitor and answers attributed: true', async () => {
    const landing = await fetch(landingUrl);
    const cookie = landing.headers.getSetCookie()[0]?.split(';')[0];
    const answer = await post(
      '/orders',
      JSON.stringify({ order_id: 'ord_http_1', total_micros: 1_500_000 }),
      cookie,
    );
    expect(answer).toEqual({ status: 201, body: { order_id: 'ord_http_1', attributed: true } });
    const [job] = await shop.backend.outbox.getByOrder('ord_http_1');
    expect(job).toMatchObject({ kind: 'confirm', valueMicros: 1_500_000, state: 'pending' });

    const refund = await post('/orders/ord_http_1/refund', undefined);
    expect(refund.status).toBe(202);
    // Not sent yet (no worker): the return cancels the confirmation instead of queueing a reversal.
    expect(refund.body).toEqual({ order_id: 'ord_http_1', outcome: 'cancelled' });
  });

  it.each([
    ['not JSON', '{"order_id":', 'body'],
    ['no body', undefined, 'body'],
    ['an array', '[]', 'body'],
    ['a missing order id', JSON.stringify({ total_micros: 1 }), 'order_id'],
    ['an order id with a space', JSON.stringify({ order_id: 'a b', total_micros: 1 }), 'order_id'],
    ['a fractional total', JSON.stringify({ order_id: 'o1', total_micros: 1.5 }), 'total_micros'],
    ['a zero total', JSON.stringify({ order_id: 'o1', total_micros: 0 }), 'total_micros'],
    ['a total given as a string', JSON.stringify({ order_id: 'o1', total_micros: '10' }), 'total_micros'],
    ['an unknown field', JSON.stringify({ order_id: 'o1', total_micros: 1, coupon: 'x' }), 'coupon'],
  ])('refuses an order body with %s with 400 naming the field', async (_label, body, field) => {
    const answer = await post('/orders', body);
    expect(answer.status).toBe(400);
    expect(answer.body.field).toBe(field);
    expect(typeof answer.body.error).toBe('string');
  });

  it('answers 404 naming order_id for the refund of an order that was never attributed', async () => {
    await post('/orders', JSON.stringify({ order_id: 'ord_organic', total_micros: 1_000 }));
    expect(await post('/orders/ord_organic/refund', undefined)).toEqual({
      status: 404,
      body: { error: 'no attributed order with this id', field: 'order_id' },
    });
  });
});

describe('shop configuration', () => {
  const env = {
    POSTBACK_API_URL: 'http://127.0.0.1:1',
    POSTBACK_API_KEY: 'key_secret_value',
    POSTBACK_SECRET: SECRET,
  };

  it.each([
    ['POSTBACK_API_URL', { POSTBACK_API_URL: undefined }],
    ['POSTBACK_API_URL', { POSTBACK_API_URL: 'ftp://x' }],
    ['POSTBACK_API_KEY', { POSTBACK_API_KEY: '' }],
    ['POSTBACK_SECRET', { POSTBACK_SECRET: 'short-secret' }],
    ['PORT', { PORT: '70000' }],
    ['POSTBACK_WORKER', { POSTBACK_WORKER: 'maybe' }],
  ])('names %s when it is missing or invalid, without echoing a secret', (field, change) => {
    let caught: unknown;
    try {
      readShopConfig({ ...env, ...change });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ShopConfigError);
    expect((caught as ShopConfigError).field).toBe(field);
    expect((caught as Error).message).not.toContain('short-secret');
  });

  it('keeps the API key and cookie secret out of inspect and JSON of the configuration', () => {
    const config = readShopConfig(env);
    expect(config.apiKey).toBe('key_secret_value');
    expect(config.secret).toBe(SECRET);
    for (const text of [inspect(config), JSON.stringify(config)]) {
      expect(text).not.toContain('key_secret_value');
      expect(text).not.toContain(SECRET);
    }
  });

  it('turns Secure cookies on for a non-loopback host and lets POSTBACK_SECURE_COOKIE decide', () => {
    expect(readShopConfig({ ...env, HOST: '0.0.0.0' }).secureCookie).toBe(true);
    expect(readShopConfig({ ...env, HOST: '127.0.0.1' }).secureCookie).toBe(false);
    expect(readShopConfig({ ...env, HOST: '0.0.0.0', POSTBACK_SECURE_COOKIE: 'off' }).secureCookie).toBe(
      false,
    );
  });
});
