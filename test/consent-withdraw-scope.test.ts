/**
 * A consent withdrawal acts for the shopper's own click, in the shop's own account (issue 30): over real
 * HTTP, an Express shop whose withdrawal route takes the click from the signed cookie (`keptClickOf`), a
 * SQLite outbox file holding the orders of two accounts, and the sandbox as the oracle of what was sent.
 * - A cookie-less `POST /privacy/withdraw?click_token=<someone else's token>` cancels nothing: a token in
 *   a URL is anyone's to write.
 * - The shopper's own withdrawal (their cookie) cancels their unsent confirmation in this shop's account
 *   and leaves another account's order of the same click alone.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@postback/client';
import { createDispatcher, keptClickOf, type Outbox, withdrawConsent } from '@postback/core';
import { postback } from '@postback/express';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutboxFile, type OutboxFile } from './helpers/outbox-file.ts';

const SECRET = 'consent-scope-test-cookie-secret-0123456789';
const ACCOUNT = 'shop-a';

let world: SandboxWorld | undefined;
let db: OutboxFile | undefined;
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await world?.close();
  await db?.cleanup();
});

/** Shop A of a platform: its privacy route withdraws the shopper's own click, in its own account. */
async function startShop(outbox: Outbox): Promise<string> {
  const app = express();
  app.use(postback({ secrets: [SECRET], secure: false }));
  app.get('/', (_req, res) => {
    res.send('shop');
  });
  app.post('/privacy/withdraw', async (req, res) => {
    const click = await keptClickOf(req.postback);
    if (click === null) {
      res.status(400).json({ error: 'no click of yours is known here' });
      return;
    }
    res.json(await withdrawConsent({ outbox }, { token: click.token, account: ACCOUNT }));
  });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function setup() {
  world = await startSandboxWorld();
  db = createOutboxFile('postback-consent-scope-');
  const shop = await startShop(db.outbox);
  const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey, timeout: 2_000 });
  cleanups.push(() => client.close());
  const dispatcher = createDispatcher({ outbox: db.outbox, client, pollIntervalMs: 10 });
  return { w: world, outbox: db.outbox, shop, dispatcher };
}

describe('a consent withdrawal, over HTTP to an Express shop and the sandbox', () => {
  it('cancels nothing for a cookie-less request naming someone else’s click token in its URL', async () => {
    const { w, outbox, shop, dispatcher } = await setup();
    const [victim] = await w.clicks(1);
    const token = victim?.token as string;
    await outbox.confirm({
      orderId: 'ord_victim',
      valueMicros: 25_000_000,
      account: ACCOUNT,
      click: { token, clickedAt: Date.now() - 60_000 },
    });

    const forged = await fetch(`${shop}/privacy/withdraw?click_token=${token}`, { method: 'POST' });
    expect(forged.status).toBe(400);
    expect(await outbox.getByOrder('ord_victim', ACCOUNT)).toEqual([
      expect.objectContaining({ state: 'pending' }),
    ]);
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
    expect((await w.conversions()).conversions.map((c) => c.order_id)).toEqual(['ord_victim']);
  });

  it('withdraws the shopper’s own click from its signed cookie in this account only', async () => {
    const { w, outbox, shop, dispatcher } = await setup();
    const [click] = await w.clicks(1);
    const token = click?.token as string;
    const landing = await fetch(`${shop}/?click_token=${token}`, { redirect: 'manual' });
    const cookie = (landing.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
    expect(cookie).toMatch(/^postback_click=/);
    const clickedAt = Date.now() - 60_000;
    await outbox.confirm({
      orderId: 'ord_a',
      valueMicros: 1_000_000,
      account: ACCOUNT,
      click: { token, clickedAt },
    });
    await outbox.confirm({
      orderId: 'ord_b',
      valueMicros: 2_000_000,
      account: 'shop-b',
      click: { token, clickedAt },
    });

    const mine = await fetch(`${shop}/privacy/withdraw`, { method: 'POST', headers: { cookie } });
    expect(await mine.json()).toMatchObject({
      orders: [{ outcome: 'cancelled', job: { orderId: 'ord_a', account: ACCOUNT } }],
    });
    expect(await outbox.getByOrder('ord_b', 'shop-b')).toEqual([
      expect.objectContaining({ state: 'pending' }),
    ]);
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
    expect((await w.conversions()).conversions.map((c) => c.order_id)).toEqual(['ord_b']);
  });
});
