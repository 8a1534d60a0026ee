/**
 * A reversal is the service's to refuse (issue 22). Over real HTTP against the sandbox, with the real
 * client, a real SQLite outbox file and the Dispatcher, every clock following the sandbox's:
 * - no return window is assumed: a sandbox whose window is 60 days takes a reversal on day 45 sent with
 *   default options, and its own records show the charge given back;
 * - a window the shop configured (30 days) refuses the same refund at once: `window-closed`, nothing sent;
 * - past the service's window, its "window closed" answer ends the reversal `expired`, in its words;
 * - a 404 for a reversal whose campaign came from the service's own confirmation answer ends it
 *   `unmatched` (the service has no such conversion); one whose campaign a person gave is `dead`, naming
 *   the campaign tried.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@postback/client';
import { createDispatcher, DAY_MS, type Outbox, type WindowPolicy } from '@postback/core';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { createSqliteOutbox } from '@postback/sqlite';
import { afterEach, describe, expect, it } from 'vitest';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A sandbox whose return window is `returnWindowDays`, and a clock that follows the sandbox's. */
async function sandbox(returnWindowDays = 60) {
  const world = await startSandboxWorld({ sandbox: { returnWindowDays } });
  cleanups.push(() => world.close());
  let offsetMs = (await world.now()) - Date.now();
  return {
    world,
    now: () => Date.now() + offsetMs,
    advanceDays: async (days: number) => {
      offsetMs = (await world.advanceClock(days * 86_400)) - Date.now();
    },
  };
}

/** A SQLite outbox file in its own directory, on `now`, with `policy` (the defaults when none). */
function outboxFile(now: () => number, policy?: Partial<WindowPolicy>): { outbox: Outbox } {
  const dir = mkdtempSync(join(tmpdir(), 'postback-reversal-'));
  const filename = join(dir, 'postback.db');
  const outbox = createSqliteOutbox({ filename, now, ...(policy === undefined ? {} : { policy }) });
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => outbox.close());
  return { outbox };
}

/** Delivers what is due once, through `world` with its key, on `now`. */
async function deliver(outbox: Outbox, world: SandboxWorld, now: () => number): Promise<void> {
  const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
  const dispatcher = createDispatcher({ outbox, client, now, backoff: { baseMs: 10, maxMs: 50, minMs: 5 } });
  try {
    for (let round = 0; round < 5; round++) if ((await dispatcher.runOnce()).claimed === 0) break;
  } finally {
    await dispatcher.stop({ timeoutMs: 5_000 });
    await client.close();
  }
}

/** One order confirmed and delivered through `world`: its order id. */
async function confirmed(outbox: Outbox, s: Awaited<ReturnType<typeof sandbox>>, orderId: string) {
  const [click] = await s.world.clicks(1);
  if (click === undefined) throw new Error('no click');
  await outbox.confirm({ orderId, valueMicros: 25_000_000, click });
  await deliver(outbox, s.world, s.now);
  const [confirm] = await outbox.getByOrder(orderId);
  expect(confirm).toMatchObject({ state: 'delivered', campaignId: s.world.campaignId });
  expect((await s.world.conversions()).conversions.find((c) => c.order_id === orderId)?.state).toBe(
    'confirmed',
  );
  return orderId;
}

describe('a reversal long after the confirmation', () => {
  it('is sent on day 45 with default options, and the sandbox (return window 60 days) reverses the charge', async () => {
    const s = await sandbox(60);
    const { outbox } = outboxFile(s.now);
    await confirmed(outbox, s, 'ord-45');
    const spentBefore = await s.world.spendMicros();
    await s.advanceDays(45);

    const result = await outbox.refund({ orderId: 'ord-45' });
    expect(result).toMatchObject({ outcome: 'enqueued', job: { kind: 'refund', campaignFrom: 'answer' } });
    await deliver(outbox, s.world, s.now);

    expect((await outbox.getByOrder('ord-45'))[1]).toMatchObject({ kind: 'refund', state: 'delivered' });
    const conversion = (await s.world.conversions()).conversions.find((c) => c.order_id === 'ord-45');
    expect(conversion).toMatchObject({ state: 'reversed', reversed_at: expect.any(String) });
    expect(await s.world.spendMicros()).toBe(spentBefore - (conversion?.charged_micros ?? 0));
  }, 30_000);

  it('with a 30-day return window configured, answers window-closed on day 45 and sends nothing', async () => {
    const s = await sandbox(60);
    const { outbox } = outboxFile(s.now, { returnWindowMs: 30 * DAY_MS });
    await confirmed(outbox, s, 'ord-45');
    const requests = (await s.world.conversions()).counts.requests;
    await s.advanceDays(45);

    const result = await outbox.refund({ orderId: 'ord-45' });
    expect(result).toMatchObject({ outcome: 'window-closed', job: { kind: 'confirm', state: 'delivered' } });
    await deliver(outbox, s.world, s.now);

    expect((await outbox.getByOrder('ord-45')).map((j) => j.kind)).toEqual(['confirm']);
    const seen = await s.world.conversions();
    expect(seen.counts.requests).toBe(requests);
    expect(seen.conversions.find((c) => c.order_id === 'ord-45')?.state).toBe('confirmed');
  }, 30_000);

  it('past the service’s window, ends expired with the service’s words, the charge untouched', async () => {
    const s = await sandbox(60);
    const { outbox } = outboxFile(s.now);
    await confirmed(outbox, s, 'ord-61');
    await s.advanceDays(61);

    expect((await outbox.refund({ orderId: 'ord-61' })).outcome).toBe('enqueued');
    await deliver(outbox, s.world, s.now);

    const refund = (await outbox.getByOrder('ord-61'))[1];
    expect(refund).toMatchObject({ kind: 'refund', state: 'expired', attempts: 1 });
    expect(refund?.lastError).toMatch(/the service says the window has closed: .*return window closed/);
    const conversion = (await s.world.conversions()).conversions.find((c) => c.order_id === 'ord-61');
    expect(conversion?.state).toBe('confirmed');
  }, 30_000);
});

describe('a reversal the service answers 404', () => {
  it('ends unmatched when its campaign came from the confirmation’s answer: the service has no such conversion', async () => {
    // The confirmation was applied by one service (world a); the reversal reaches another (world b), which
    // never applied it: its 404 carries its JSON `detail`.
    const a = await sandbox(60);
    const b = await startSandboxWorld();
    cleanups.push(() => b.close());
    const { outbox } = outboxFile(a.now);
    await confirmed(outbox, a, 'ord-elsewhere');

    const result = await outbox.refund({ orderId: 'ord-elsewhere' });
    expect(result.job).toMatchObject({ campaignId: a.world.campaignId, campaignFrom: 'answer' });
    await deliver(outbox, b, a.now);

    const refund = (await outbox.getByOrder('ord-elsewhere'))[1];
    expect(refund).toMatchObject({ kind: 'refund', state: 'unmatched', attempts: 1 });
    expect(refund?.lastError).toMatch(/no such conversion to reverse: .*404/);
    expect(await outbox.listDead()).toEqual([]);
    expect((await outbox.stats(a.now())).counts).toMatchObject({ unmatched: 1, dead: 0 });
    expect((await b.conversions()).conversions).toEqual([]);
  }, 30_000);

  it('is dead, naming the campaign tried, when a person gave the campaign (it may be a typo)', async () => {
    const s = await sandbox(60);
    const { outbox } = outboxFile(s.now);
    await confirmed(outbox, s, 'ord-typo');
    const typo = 'cmp_typo00000000';

    const result = await outbox.refund({ orderId: 'ord-typo', campaignId: typo });
    expect(result.job).toMatchObject({ campaignId: typo, campaignFrom: 'caller' });
    await deliver(outbox, s.world, s.now);

    const [dead] = await outbox.listDead();
    expect(dead).toMatchObject({ kind: 'refund', orderId: 'ord-typo', state: 'dead' });
    expect(dead?.lastError).toMatch(new RegExp(`campaign ${typo} was supplied by the caller.*404`));
    expect((await s.world.conversions()).conversions.find((c) => c.order_id === 'ord-typo')?.state).toBe(
      'confirmed',
    );
    expect((await outbox.stats(s.now())).counts.unmatched).toBe(0);
  }, 30_000);
});
