/**
 * A held campaign's switch to s2s (issue 31): the orders held while the campaign was on pixel may have been
 * billed by the pixel, so at the default `onSwitch: 'ask'` they are never sent without a decision; the
 * switch is seen by an order created after it (`switch-seen`, once) and kept by the store for an operator;
 * `'drop'` cancels them with a ledger row each, `'send'` sends them. Over real HTTP with the scripted fake of
 * the service; the memory outbox on a fake clock.
 */
import type { DispatcherEvents } from '@postback/core';
import { describe, expect, it } from 'vitest';
import {
  clock,
  confirmRequests,
  dispatcherWith,
  enqueue,
  eventsNamed,
  outbox,
  service,
  setUpDispatcherHarness,
} from './dispatcher-harness.ts';
import { CONFIRM_PATH } from './fake-ad-service.ts';

setUpDispatcherHarness();

/** The campaign the fake service names when it accepts a confirmation. */
const CAMPAIGN = 'cmp_from_service';
const PROBE = 10 * 60_000;
const notOnS2s = {
  status: 422,
  body: { detail: `campaign ${CAMPAIGN} is not on s2s: its conversion source is pixel` },
};

/** Three orders refused while the campaign is on pixel: held. */
async function holdThree(options: Parameters<typeof dispatcherWith>[0] = {}) {
  for (let i = 0; i < 3; i++) {
    await enqueue(`held_${i}`);
    service.script(CONFIRM_PATH, notOnS2s);
    clock.advance(1_000);
  }
  const dispatcher = dispatcherWith({ holdProbeMs: PROBE, ...options });
  expect(await dispatcher.drain()).toMatchObject({ held: 3 });
  return dispatcher;
}

describe("a held campaign's switch to s2s", () => {
  it("at the default 'ask', held orders are never sent: the switch is seen once and kept; they expire unsent", async () => {
    const dispatcher = await holdThree();
    // Held orders are not probes: nothing is sent for them as hours pass.
    for (let h = 0; h < 30; h++) {
      clock.advance(PROBE);
      expect(await dispatcher.drain()).toMatchObject({ claimed: 0 });
    }
    expect(confirmRequests()).toHaveLength(3);
    // The campaign is switched; an order created now is sent at once and names it.
    await enqueue('fresh_1');
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
    await enqueue('fresh_2');
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
    const seen = eventsNamed('switch-seen');
    expect(seen).toEqual(
      [
        {
          account: null,
          campaignId: CAMPAIGN,
          at: clock.now(),
          onSwitch: 'ask',
          decided: 0,
        } satisfies DispatcherEvents['switch-seen'],
      ]
        .slice(0, 1)
        .map((e) => ({ ...e, at: seen[0]?.at })),
    );
    expect(await outbox.switches?.list()).toEqual([{ account: null, campaignId: CAMPAIGN, at: seen[0]?.at }]);
    const held = (await outbox.listJobs()).filter((job) => job.orderId.startsWith('held_'));
    expect(held.map((job) => [job.state, job.heldCampaignId])).toEqual(Array(3).fill(['pending', CAMPAIGN]));
    // Windows keep running: past their deadlines they expire, unsent.
    clock.advance(8 * 86_400_000);
    expect(await dispatcher.drain()).toMatchObject({ expired: 3 });
    expect(confirmRequests().filter((r) => String(r.body.order_id).startsWith('held_'))).toHaveLength(3);
    expect((await outbox.readLedger()).filter((row) => row.kind === 'expired')).toHaveLength(3);
  });

  it("'drop' cancels the held orders at the switch, each with a held-drop ledger row naming the option", async () => {
    const dispatcher = await holdThree({ onSwitch: 'drop' });
    await enqueue('fresh_1');
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
    expect(eventsNamed('switch-seen')).toMatchObject([{ onSwitch: 'drop', decided: 3 }]);
    const held = (await outbox.listJobs()).filter((job) => job.orderId.startsWith('held_'));
    expect(held.map((job) => job.state)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(held[0]?.lastError).toMatch(/^held drop: billed by the pixel/);
    const rows = (await outbox.readLedger()).filter((row) => row.kind === 'held-drop');
    expect(rows.map((row) => [row.orderId, row.actor, row.valueMicros])).toEqual(
      held.map((job) => [job.orderId, 'option onSwitch', 12_340_000]),
    );
    expect(await outbox.switches?.list()).toEqual([]);
    clock.advance(PROBE);
    expect(await dispatcher.drain()).toMatchObject({ claimed: 0 });
    expect(confirmRequests()).toHaveLength(4);
  });

  it("a choice per campaign: 'send' for this one sends its held orders once each at the switch", async () => {
    const dispatcher = await holdThree({
      onSwitch: ({ campaignId }) => (campaignId === CAMPAIGN ? 'send' : 'ask'),
    });
    await enqueue('fresh_1');
    await dispatcher.drain();
    expect(eventsNamed('switch-seen')).toMatchObject([{ onSwitch: 'send', decided: 3 }]);
    await dispatcher.drain();
    const jobs = await outbox.listJobs();
    expect(jobs.map((job) => job.state)).toEqual(Array(4).fill('delivered'));
    const accepted = confirmRequests().slice(3);
    expect(accepted.map((r) => r.body.order_id).sort()).toEqual(['fresh_1', 'held_0', 'held_1', 'held_2']);
    expect((await outbox.readLedger()).filter((row) => row.kind === 'held-send')).toHaveLength(3);
  });

  it("an operator's decision after 'ask': send makes them due, each delivered once; a late one expires unsent", async () => {
    const dispatcher = await holdThree();
    await enqueue('fresh_1');
    await dispatcher.drain();
    const [late] = (await outbox.listJobs()).filter((job) => job.orderId === 'held_0');
    const decided = await outbox.switches?.decide({
      account: null,
      campaignId: CAMPAIGN,
      decision: 'send',
      now: clock.now(),
      createdBefore: (late?.createdAt ?? 0) + 1,
    });
    expect(decided?.map((d) => [d.decision, d.job.orderId, d.job.state])).toEqual([
      ['send', 'held_0', 'pending'],
    ]);
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
    // The rest are still held, and the switch kept; decided past their deadlines they expire, unsent.
    expect(await outbox.switches?.list()).toHaveLength(1);
    clock.advance(8 * 86_400_000);
    const tooLate = await outbox.switches?.decide({
      account: null,
      campaignId: CAMPAIGN,
      decision: 'send',
      now: clock.now(),
    });
    expect(tooLate?.map((d) => d.job.state)).toEqual(['expired', 'expired']);
    expect(await dispatcher.drain()).toMatchObject({ claimed: 0 });
    expect(confirmRequests().map((r) => r.body.order_id)).toEqual([
      'held_0',
      'held_1',
      'held_2',
      'fresh_1',
      'held_0',
    ]);
    expect(await outbox.switches?.list()).toEqual([]);
  });

  it('an undecided held order is due at its last chance and expires there, unsent, before its deadline', async () => {
    const dispatcher = await holdThree();
    const [first] = (await outbox.listJobs()).filter((job) => job.orderId === 'held_0');
    const deadline = first?.deadline as number;
    expect(first?.nextAttemptAt).toBeLessThan(deadline);
    clock.set(first?.nextAttemptAt as number);
    expect(await dispatcher.drain()).toMatchObject({ expired: 1, delivered: 0 });
    const ended = await outbox.get(first?.id as string);
    expect(ended).toMatchObject({ state: 'expired' });
    expect(ended?.lastError).toContain('no decision');
    expect(ended?.updatedAt).toBeLessThanOrEqual(deadline);
    expect(confirmRequests()).toHaveLength(3);
  });
});
