/**
 * The money promise near the deadline: confirmations whose answers are lost after the service applied
 * them (`reset_after_rate`), with 5xx and resets, while the sandbox clock runs past their 7-day windows.
 * Then every order is refunded (the app gives no campaign; an operator supplies it where a reversal asks
 * for one). The sandbox is the oracle: every conversion it applied ends reversed, nothing was charged
 * twice, nothing arrived late, and the campaign's spend is back to zero. Runs against the default answers
 * and against answers of a shape the client does not expect.
 */
import { createClient } from '@postback/client';
import { createDispatcher, DAY_MS } from '@postback/core';
import type { SandboxVariant } from '@postback/sandbox';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutboxFile, type OutboxFile } from './helpers/outbox-file.ts';
import { waitUntil } from './helpers/worker-process.ts';

const ORDERS = 120;
const MINUTE = 60_000;

let world: SandboxWorld | undefined;
let db: OutboxFile | undefined;
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await world?.close();
  await db?.cleanup();
});

describe.each([
  ['the default answers', [] as SandboxVariant[]],
  ['answers without campaign_id, with extra fields', ['no-campaign-id', 'extra-fields'] as SandboxVariant[]],
])('lost answers near the deadline, %s', (_, variants) => {
  it('reverses every conversion the service applied, never late, never twice', async () => {
    world = await startSandboxWorld({ sandbox: { variants } });
    const w = world;
    db = createOutboxFile('postback-promise-');
    const outbox = db.outbox;
    let offsetMs = (await w.now()) - Date.now();
    const now = () => Date.now() + offsetMs;
    const advance = async (ms: number) => {
      offsetMs = (await w.advanceClock(ms / 1_000)) - Date.now();
    };

    const clicks = await w.clicks(ORDERS);
    const orderOf = (i: number) => `promise-${i}`;
    for (const [i, click] of clicks.entries()) {
      await outbox.confirm({ orderId: orderOf(i), valueMicros: 1_000 + i, click });
    }
    // Ten minutes before the deadlines (7 days − the 1-hour safety margin).
    await advance(7 * DAY_MS - 60 * MINUTE - 10 * MINUTE);
    await w.setFaults({ reset_after_rate: 0.4, reset_rate: 0.1, error_rate: 0.2, error_status: 503 });

    const client = createClient({ baseUrl: w.url, apiKey: w.conversionsKey, timeout: 2_000 });
    cleanups.push(() => client.close());
    const dispatcher = createDispatcher({
      outbox,
      client,
      now,
      concurrency: 8,
      pollIntervalMs: 10,
      backoff: { baseMs: 60_000, maxMs: 120_000, minMs: 30_000 },
    });
    cleanups.push(() => dispatcher.stop({ timeoutMs: 5_000 }));
    let outcomes = 0;
    for (const name of ['delivered', 'retried', 'dead', 'expired'] as const) {
      dispatcher.on(name, () => {
        outcomes += 1;
      });
    }
    dispatcher.start();

    // Every job gets a try (retried ones wait at least 30 s of sandbox time), then another five minutes
    // later, still under faults; then the windows close under the retries.
    await waitUntil(() => outcomes >= ORDERS, 20_000);
    const retried = (await db.counts()).pending;
    await advance(5 * MINUTE);
    dispatcher.wake();
    await waitUntil(() => outcomes >= ORDERS + retried, 20_000);
    await advance(20 * MINUTE);
    dispatcher.wake();
    await waitUntil(async () => {
      const counts = await db?.counts();
      return counts !== undefined && counts.pending === 0 && counts.inflight === 0;
    }, 20_000);
    const ended = await db.counts();
    expect(ended.delivered + ended.expired + ended.dead).toBe(ORDERS);
    expect(ended.expired).toBeGreaterThan(0); // the scenario did reach the deadline

    // The customers return every order. The app knows no campaign.
    await w.clearFaults();
    const refunds = new Map<string, string>();
    for (let i = 0; i < ORDERS; i++) {
      refunds.set(orderOf(i), (await outbox.refund({ orderId: orderOf(i) })).outcome);
    }
    const settled = async () => {
      const counts = await db?.counts();
      return counts !== undefined && counts.pending === 0 && counts.inflight === 0;
    };
    dispatcher.wake();
    await waitUntil(settled, 20_000);
    // An operator supplies the campaign of every reversal that asks for one.
    for (const job of await outbox.listDead({ limit: 1_000 })) {
      if (job.kind !== 'refund' || !/campaign_id/.test(job.lastError ?? '')) continue;
      const supplied = await outbox.refund({ orderId: job.orderId, campaignId: w.campaignId });
      expect(supplied.outcome).toBe('updated');
    }
    dispatcher.wake();
    await waitUntil(settled, 20_000);

    const oracle = await w.conversions();
    expect(oracle.conversions.length).toBeGreaterThan(0);
    const applied = oracle.conversions.map((c) => c.order_id);
    expect(new Set(applied).size).toBe(applied.length); // never charged twice
    for (const conversion of oracle.conversions) {
      expect({ order: conversion.order_id, state: conversion.state }).toEqual({
        order: conversion.order_id,
        state: 'reversed',
      });
      expect(refunds.get(conversion.order_id)).toBe('enqueued');
    }
    // The scenario did apply confirmations whose answers were lost: their jobs did not end delivered.
    const lost = [];
    for (const conversion of oracle.conversions) {
      const [confirm] = await outbox.getByOrder(conversion.order_id);
      if (confirm?.state !== 'delivered') lost.push(confirm);
    }
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.every((job) => job?.maybeAppliedAt !== null)).toBe(true);
    expect(oracle.counts.late).toBe(0);
    expect(await w.spendMicros()).toBe(0);
  }, 90_000);
});
