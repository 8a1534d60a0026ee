/**
 * The Fastify example shop over plain HTTP, with the expectations of the Express and Koa shops: a landing
 * sets the click cookie (without `Secure` on loopback), an order from a clicked visitor is durably queued
 * and its return cancels it, malformed bodies get a 400 naming the field, and refunds of orders never
 * attributed are 404. Real server on an ephemeral port, a real SQLite file, the sandbox as ad service.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '@postback/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createShop, type Shop } from '../src/shop.ts';

describe('fastify-shop over HTTP', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let shop: Shop;
  let dir: string;
  let landingUrl: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postback-fastify-shop-'));
    sandbox = await startSandbox({ port: 0 });
    const account = await sandbox.control.createAccount({});
    // Enqueue only: these tests look at the shop's answers and its outbox, not at delivery.
    shop = await createShop({
      PORT: '0',
      POSTBACK_API_URL: sandbox.url,
      POSTBACK_API_KEY: account.keys.conversions,
      POSTBACK_SECRET: 'fastify-shop-cookie-secret-0123456789abc',
      POSTBACK_DB: join(dir, 'postback.db'),
      POSTBACK_WORKER: 'off',
      POSTBACK_CLICK_PARAM: 'ct',
    });
    landingUrl = `${shop.url}/?ct=tok_${'f'.repeat(24)}`;
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
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('Welcome, ad visitor');
    const [cookie] = res.headers.getSetCookie();
    expect(cookie).toMatch(/^postback_click=[A-Za-z0-9_-]{52}\.[A-Za-z0-9._~-]+;/);
    expect(cookie).not.toMatch(/;\s*Secure/i);
  });

  it('queues the confirmation of an order from a clicked visitor, and its return cancels it', async () => {
    const cookie = (await fetch(landingUrl)).headers.getSetCookie()[0]?.split(';')[0];
    const answer = await post(
      '/orders',
      JSON.stringify({ order_id: 'ord_f1', total_micros: 1_500_000 }),
      cookie,
    );
    expect(answer).toEqual({ status: 201, body: { order_id: 'ord_f1', attributed: true } });
    const [job] = await shop.backend.outbox.getByOrder('ord_f1');
    expect(job).toMatchObject({ kind: 'confirm', valueMicros: 1_500_000, state: 'pending' });
    expect(await post('/orders/ord_f1/refund', undefined)).toEqual({
      status: 202,
      body: { order_id: 'ord_f1', outcome: 'cancelled' },
    });
  });

  it.each([
    ['not JSON', '{"order_id":', 'body'],
    ['no body', undefined, 'body'],
    ['an array', '[]', 'body'],
    ['a fractional total', JSON.stringify({ order_id: 'o1', total_micros: 1.5 }), 'total_micros'],
    ['an unknown field', JSON.stringify({ order_id: 'o1', total_micros: 1, coupon: 'x' }), 'coupon'],
  ])('refuses an order body with %s with 400 naming the field', async (_label, body, field) => {
    const answer = await post('/orders', body);
    expect(answer.status).toBe(400);
    expect(answer.body.field).toBe(field);
  });

  it('answers 404 naming order_id for the refund of an order that was never attributed', async () => {
    await post('/orders', JSON.stringify({ order_id: 'ord_organic', total_micros: 1_000 }));
    expect(await post('/orders/ord_organic/refund', undefined)).toEqual({
      status: 404,
      body: { error: 'no attributed order with this id', field: 'order_id' },
    });
  });
});
