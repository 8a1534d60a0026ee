/**
 * A campaign not on s2s is a problem of the campaign, not of the job: its jobs are held (pending, their
 * attempts uncounted, one of them probing the problem every `holdProbeMs`), the problem is named once
 * (`held`), and its probe's delivery releases the rest at once (`hold-released`). Over real HTTP with the scripted
 * fake of the service; the memory outbox on a fake clock.
 */
import {
  createMemoryOutbox,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_SEND_TIMEOUT_MS,
  type Outbox,
} from '@postback/core';
import { lastChanceAt, waitTimingOf } from '@postback/core/store';
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

const PROBE = 10 * 60_000;
const notOnS2s = (campaign: string) => ({
  status: 422,
  body: { detail: `campaign ${campaign} is not on s2s: its conversion source is pixel` },
});

describe('a campaign not on s2s', () => {
  it('holds each job (pending, attempts uncounted) and names the problem once, with the campaign', async () => {
    for (let i = 0; i < 3; i++) {
      await enqueue(`ord_${i}`);
      service.script(CONFIRM_PATH, notOnS2s('cmp_pix'));
    }
    const dispatcher = dispatcherWith({ onSwitch: 'send', holdProbeMs: PROBE });
    expect(await dispatcher.drain()).toMatchObject({ claimed: 3, held: 3, dead: 0, retried: 0 });
    const held = await outbox.listJobs();
    expect(held.map((job) => [job.state, job.attempts, job.heldCampaignId])).toEqual([
      ['pending', 0, 'cmp_pix'],
      ['pending', 0, 'cmp_pix'],
      ['pending', 0, 'cmp_pix'],
    ]);
    // One job probes the problem; the others wait for its answer, at the latest until their last chance
    // (their deadline less the default send timeout and poll interval: a real try before the deadline).
    const probes = held.filter((job) => job.nextAttemptAt === clock.now() + PROBE);
    expect(probes).toHaveLength(1);
    const waiting = held.filter((job) => job !== probes[0]);
    const timing = waitTimingOf({
      sendTimeoutMs: DEFAULT_SEND_TIMEOUT_MS,
      pollIntervalMs: DEFAULT_POLL_INTERVAL_MS,
    });
    expect(waiting.map((job) => job.nextAttemptAt)).toEqual(waiting.map((job) => lastChanceAt(job, timing)));
    expect(held[0]?.lastError).toContain('campaign cmp_pix is not on s2s');
    const events = eventsNamed('held');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      account: null,
      campaignId: 'cmp_pix',
      nextProbeAt: clock.now() + PROBE,
    });
    expect((await outbox.stats(clock.now())).held).toEqual([
      expect.objectContaining({ campaignId: 'cmp_pix', count: 3, valueMicros: 3 * 12_340_000 }),
    ]);
    expect(eventsNamed('dead')).toEqual([]);
    // Nothing is sent again before the probe.
    expect(await dispatcher.drain()).toMatchObject({ claimed: 0 });
    expect(confirmRequests()).toHaveLength(3);
  });

  it('the first delivery releases the rest: delivered at once, each once, with no operator action', async () => {
    // Held at different times, so only the first is due at its probe.
    for (let i = 0; i < 4; i++) {
      await enqueue(`ord_${i}`);
      service.script(CONFIRM_PATH, notOnS2s('cmp_pix'));
      expect(await dispatcherWith({ onSwitch: 'send', holdProbeMs: PROBE }).drain()).toMatchObject({
        held: 1,
      });
      clock.advance(60_000);
    }
    const dispatcher = dispatcherWith({ onSwitch: 'send', holdProbeMs: PROBE });
    clock.advance(PROBE - 4 * 60_000);
    // The campaign was switched meanwhile: unscripted confirms are accepted (campaign cmp_pix).
    const summary = await dispatcher.drain();
    expect(summary).toMatchObject({ delivered: 4, held: 0, dead: 0 });
    const released = eventsNamed('hold-released');
    expect(released).toHaveLength(1);
    expect(released[0]).toMatchObject({ account: null, released: 3 });
    const jobs = await outbox.listJobs();
    expect(jobs.map((job) => [job.state, job.heldAt])).toEqual(Array(4).fill(['delivered', null]));
    expect(new Set(confirmRequests().map((r) => r.body.order_id)).size).toBe(4);
    expect(confirmRequests()).toHaveLength(8);
    expect((await outbox.stats(clock.now())).held).toEqual([]);
  });

  it('probes again every holdProbeMs, keeping the first hold time, and expires at the deadline unsent after it', async () => {
    const job = await enqueue('ord_late', clock.now() - 7 * 86_400_000 + 3 * 3_600_000);
    const deadline = job.deadline as number;
    const first = clock.now();
    service.script(CONFIRM_PATH, notOnS2s('cmp_pix'), notOnS2s('cmp_pix'));
    const dispatcher = dispatcherWith({ onSwitch: 'send', holdProbeMs: 30 * 60_000 });
    await dispatcher.drain();
    clock.advance(30 * 60_000);
    await dispatcher.drain();
    expect(await outbox.get(job.id)).toMatchObject({ state: 'pending', heldAt: first, attempts: 0 });
    clock.set(deadline + 1);
    expect(await dispatcher.drain()).toMatchObject({ expired: 1 });
    expect(await outbox.get(job.id)).toMatchObject({ state: 'expired', heldAt: null });
    expect(confirmRequests()).toHaveLength(2);
    expect(eventsNamed('held')).toHaveLength(1);
  });

  it('names a problem again when it comes back after its held jobs all ended (a new alert, not a repeat)', async () => {
    const first = await enqueue('ord_1', clock.now() - 7 * 86_400_000 + 2 * 3_600_000);
    service.script(CONFIRM_PATH, notOnS2s('cmp_pix'));
    const dispatcher = dispatcherWith({ onSwitch: 'send', holdProbeMs: PROBE });
    await dispatcher.drain();
    clock.set((first.deadline as number) + 1);
    expect(await dispatcher.drain()).toMatchObject({ expired: 1 });
    // Two days later, a new order of the same campaign: held, and named again.
    clock.advance(2 * 86_400_000);
    await enqueue('ord_2');
    service.script(CONFIRM_PATH, notOnS2s('cmp_pix'));
    expect(await dispatcher.drain()).toMatchObject({ held: 1 });
    expect(eventsNamed('held')).toHaveLength(2);
  });

  it('a detail without a campaign id holds the job with the campaign unknown; a matching pattern option is used', async () => {
    await enqueue('ord_1');
    service.script(CONFIRM_PATH, { status: 422, body: { detail: 'S2S_DISABLED for this campaign' } });
    const dispatcher = dispatcherWith({ campaignNotS2sPattern: /S2S_DISABLED/ });
    expect(await dispatcher.drain()).toMatchObject({ held: 1 });
    expect(eventsNamed('held')[0]).toMatchObject({ campaignId: null });
  });

  it('on a store that cannot hold jobs (features.holds false) the job is dead, as before', async () => {
    const inner = createMemoryOutbox({ now: clock.now });
    const noHolds: Outbox = { ...inner, features: { ...inner.features, holds: false } };
    await noHolds.confirm({
      orderId: 'ord_1',
      valueMicros: 1,
      click: { token: 'tok_ord_1_XyZ', clickedAt: clock.now() - 3_600_000 },
    });
    service.script(CONFIRM_PATH, notOnS2s('cmp_pix'));
    const dispatcher = dispatcherWith({ outbox: noHolds });
    expect(await dispatcher.drain()).toMatchObject({ dead: 1, held: 0 });
    expect(eventsNamed('held')).toEqual([]);
    const [dead] = await noHolds.listDead();
    expect(dead?.lastError).toContain('not on s2s');
    await noHolds.close();
  });
});
