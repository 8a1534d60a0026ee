/**
 * Consent reaches the job (issue 22), through the public API over real HTTP: an Express shop with
 * `@postback/express` capture, a SQLite click store and a SQLite outbox (real files), a Dispatcher
 * delivering to the sandbox. The sandbox is the oracle of what was charged.
 * - Consent refused: no cookie, nothing in the click store, `confirmOrder` answers not enqueued with
 *   reason `no-consent`, and the sandbox receives nothing.
 * - Consent withdrawn after the order (`withdrawConsent`, called by the shop's own route): the click store
 *   forgets the click, the pending confirmation is cancelled and never reaches the sandbox; an order
 *   already delivered is reported as possibly charged, and left as it is.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@postback/client';
import { createDispatcher, type Outbox, withdrawConsent } from '@postback/core';
import { confirmOrder, postback } from '@postback/express';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { createSqliteClickStore, type SqliteClickStore } from '@postback/sqlite';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutboxFile, type OutboxFile } from './helpers/outbox-file.ts';

const SECRET = 'consent-test-cookie-secret-0123456789abcdef';
const VALUE_MICROS = 25_000_000;

let world: SandboxWorld | undefined;
let db: OutboxFile | undefined;
let clickStore: SqliteClickStore | undefined;
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await clickStore?.close();
  await world?.close();
  await db?.cleanup();
});

/**
 * The shop: capture asks consent from the `x-consent` header and keeps clicks under `x-customer`;
 * `POST /orders/:id` confirms; `POST /consent/withdraw?order=…` withdraws the customer's consent.
 */
async function startShop(outbox: Outbox, clicks: SqliteClickStore): Promise<string> {
  const app = express();
  app.use(
    postback({
      secrets: [SECRET],
      secure: false,
      consent: (req) => req.get('x-consent') === 'yes',
      store: clicks,
      key: (req) => req.get('x-customer') ?? null,
    }),
  );
  app.get('/', (_req, res) => {
    res.send('shop');
  });
  app.post('/orders/:id', async (req, res) => {
    res.json(await confirmOrder(req, outbox, { orderId: req.params.id, valueMicros: VALUE_MICROS }));
  });
  app.post('/consent/withdraw', async (req, res) => {
    const orderId = typeof req.query.order === 'string' ? req.query.order : undefined;
    const key = req.get('x-customer');
    const withdrawal = {
      ...(key === undefined ? {} : { key }),
      ...(orderId === undefined ? {} : { orderId }),
    };
    res.json(await withdrawConsent({ outbox, clickStore: clicks }, withdrawal));
  });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function setup() {
  world = await startSandboxWorld();
  db = createOutboxFile('postback-consent-');
  clickStore = createSqliteClickStore({ filename: db.file });
  const shop = await startShop(db.outbox, clickStore);
  const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey, timeout: 2_000 });
  cleanups.push(() => client.close());
  const dispatcher = createDispatcher({ outbox: db.outbox, client, pollIntervalMs: 10 });
  return { w: world, db, clicks: clickStore, shop, dispatcher };
}

const post = (url: string, headers: Record<string, string>) =>
  fetch(url, { method: 'POST', headers }).then((response) => response.json());

describe('consent, over HTTP to an Express shop and the sandbox', () => {
  it('with consent refused, keeps the click nowhere, confirms no order and sends nothing', async () => {
    const { w, db, clicks, shop, dispatcher } = await setup();
    const [click] = await w.clicks(1);
    const customer = { 'x-customer': 'cust_refused' };
    const landing = await fetch(`${shop}/?click_token=${click?.token}`, { headers: customer });
    expect(landing.headers.getSetCookie()).toEqual([]);
    expect(await clicks.get('cust_refused', Date.now())).toBeNull();

    const order = await post(`${shop}/orders/ord_refused`, customer);
    expect(order).toEqual({ enqueued: false, click: null, reason: 'no-consent' });
    // No click at all: the other reason.
    expect(await post(`${shop}/orders/ord_organic`, { 'x-consent': 'yes' })).toMatchObject({
      enqueued: false,
      reason: 'no-click',
    });
    expect(await db.outbox.getByOrder('ord_refused')).toEqual([]);
    await dispatcher.drain();
    expect((await w.conversions()).counts.requests).toBe(0);
  });

  it('a withdrawal cancels the pending confirmation (nothing reaches the sandbox) and names one already sent', async () => {
    const { w, db, clicks, shop, dispatcher } = await setup();
    const [first, second] = await w.clicks(2);
    const consenting = { 'x-consent': 'yes', 'x-customer': 'cust_1' };

    // An order delivered before consent is withdrawn.
    const early = await fetch(`${shop}/?click_token=${first?.token}`, { headers: consenting });
    const earlyCookie = (early.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
    expect(earlyCookie).toMatch(/^postback_click=/);
    expect(await post(`${shop}/orders/ord_sent`, { ...consenting, cookie: earlyCookie })).toMatchObject({
      enqueued: true,
    });
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });

    // Then a new click and an order whose confirmation is still pending when consent is withdrawn.
    await fetch(`${shop}/?click_token=${second?.token}`, { headers: consenting });
    expect(await clicks.get('cust_1', Date.now())).toMatchObject({ token: second?.token });
    expect(await post(`${shop}/orders/ord_pending`, consenting)).toMatchObject({
      enqueued: true,
      click: { token: second?.token },
    });

    const pending = await post(`${shop}/consent/withdraw?order=ord_pending`, { 'x-customer': 'cust_1' });
    expect(pending).toMatchObject({
      clickDeleted: true,
      orders: [{ outcome: 'cancelled', job: { orderId: 'ord_pending', state: 'cancelled' } }],
      mayHaveCharged: [],
    });
    expect(await clicks.get('cust_1', Date.now())).toBeNull();
    const sent = await post(`${shop}/consent/withdraw?order=ord_sent`, {});
    expect(sent).toMatchObject({
      clickDeleted: false,
      orders: [{ outcome: 'may-have-charged', job: { state: 'delivered' } }],
      mayHaveCharged: [{ orderId: 'ord_sent' }],
    });

    expect(await dispatcher.drain()).toMatchObject({ delivered: 0 });
    const report = await w.conversions();
    expect(report.conversions.map((c) => c.order_id)).toEqual(['ord_sent']);
    expect(report.counts.requests).toBe(1);
    expect(await db.counts()).toMatchObject({ delivered: 1, cancelled: 1, pending: 0 });
  });
});
