/**
 * Conformance tests: a held campaign's switch to s2s (`Outbox.switches`, issue 31). The store notes the
 * first sighting of a held problem's campaign accepting s2s, lists the switches not yet decided, and
 * decides the pending held jobs of one problem in one transaction: `send` makes them due now (expired
 * past their deadline), `drop` cancels them, a held reversal is always sent. A backend without switches
 * (`switches` undefined: SQS) skips the group.
 */
import { describe, expect, type TestContext } from 'vitest';
import { OutboxClosedError } from '../../errors.ts';
import { DAY_MS } from '../../policy.ts';
import type { HeldProblem } from '../../queue/held-types.ts';
import type { Job } from '../../queue/job-types.ts';
import { HELD_DROPPED_PREFIX } from '../../queue/switch-rules.ts';
import type { OutboxSwitches } from '../../queue/switch-types.ts';
import { HOUR, type Suite } from './suite.ts';
import type { OutboxCapability } from './types.ts';

const NOT_S2S = 'Ad service answered 422: campaign cmp_pix is not on s2s: its conversion source is pixel';
const PROBE = 10 * 60_000;

export function describeSwitches(s: Suite): void {
  const { enqueue, claimAll, claimOne } = s;
  const switches = () => s.outbox.switches as OutboxSwitches;
  /** `s.test`, skipped (saying why) when the running backend keeps no switches. */
  const test = (title: string, fn: () => Promise<void>, ...capabilities: OutboxCapability[]) =>
    s.test(
      title,
      async (context: TestContext) => {
        if (s.outbox.switches === undefined) context.skip('the backend keeps no switches');
        await fn();
      },
      'holds',
      ...capabilities,
    );

  /** Holds a claimed job for `campaignId` at the clock's time; its next probe `PROBE` later. */
  const hold = async (job: Job, campaignId: string | null = 'cmp_pix') => {
    const now = s.clock.now();
    const held = { now, nextAttemptAt: now + PROBE, error: NOT_S2S, hold: { campaignId } };
    expect(await s.outbox.retry(job, held)).toBe(true);
  };
  /** Enqueues, claims and holds an order of `account`; returns the held job as claimed. */
  const heldOrder = async (
    orderId: string,
    account: string | null = 'shop_a',
    campaignId: string | null = 'cmp_pix',
    clickedAt?: number,
  ): Promise<Job> => {
    const click = clickedAt === undefined ? {} : { click: { token: `tok_${orderId}_AbC`, clickedAt } };
    await enqueue(orderId, { account, valueMicros: 5_000_000, ...click });
    const [claimed] = await claimAll(1);
    expect(claimed?.orderId).toBe(orderId);
    await hold(claimed as Job, campaignId);
    return claimed as Job;
  };
  const seen = (account: string | null, campaignId: string, at: number) => ({ account, campaignId, at });
  const decide = (
    account: string | null,
    campaignId: string | null,
    decision: 'send' | 'drop',
    createdBefore: number | null = null,
  ) => switches().decide({ account, campaignId, decision, now: s.clock.now(), createdBefore });

  describe('switches', () => {
    test('note keeps a switch once, when jobs are held for it, at its first sighting', async () => {
      const t = s.clock.now();
      expect(await switches().note(seen('shop_a', 'cmp_pix', t))).toBe(false);
      await heldOrder('ord_n1');
      expect(await switches().note(seen('shop_b', 'cmp_pix', t))).toBe(false);
      expect(await switches().note(seen('shop_a', 'cmp_other', t))).toBe(false);
      expect(await switches().note(seen('shop_a', 'cmp_pix', t))).toBe(true);
      expect(await switches().note(seen('shop_a', 'cmp_pix', t + HOUR))).toBe(false);
      expect(await switches().list()).toEqual([seen('shop_a', 'cmp_pix', t)]);
    });

    test('list names the switches seen, oldest first; an account of none is null', async () => {
      const t = s.clock.now();
      await heldOrder('ord_l1', 'shop_a');
      await heldOrder('ord_l2', null);
      await heldOrder('ord_l3', 'shop_b', 'cmp_third');
      expect(await switches().note(seen('shop_a', 'cmp_pix', t + 2_000))).toBe(true);
      expect(await switches().note(seen(null, 'cmp_pix', t))).toBe(true);
      expect(await switches().note(seen('shop_b', 'cmp_third', t + 1_000))).toBe(true);
      expect(await switches().list()).toEqual([
        seen(null, 'cmp_pix', t),
        seen('shop_b', 'cmp_third', t + 1_000),
        seen('shop_a', 'cmp_pix', t + 2_000),
      ]);
    });

    test(
      'drop cancels the pending held jobs of that problem only, naming why, and forgets the switch',
      async () => {
        const dropped = await heldOrder('ord_1', 'shop_a');
        const otherAccount = await heldOrder('ord_1', 'shop_b');
        const otherCampaign = await heldOrder('ord_2', 'shop_a', 'cmp_other');
        const unnamed = await heldOrder('ord_3', 'shop_a', null);
        await switches().note(seen('shop_a', 'cmp_pix', s.clock.now()));
        await switches().note(seen('shop_b', 'cmp_pix', s.clock.now()));
        s.clock.advance(1_000);
        const decided = await decide('shop_a', 'cmp_pix', 'drop');
        expect(decided).toEqual([
          {
            decision: 'drop',
            job: expect.objectContaining({ id: dropped.id, state: 'cancelled', heldAt: null }),
          },
        ]);
        const stored = (await s.outbox.get(dropped.id)) as Job;
        expect(stored).toMatchObject({
          state: 'cancelled',
          updatedAt: s.clock.now(),
          heldAt: null,
          heldCampaignId: null,
        });
        expect(stored.lastError?.startsWith(HELD_DROPPED_PREFIX)).toBe(true);
        for (const job of [otherAccount, otherCampaign, unnamed])
          expect(await s.outbox.get(job.id)).toMatchObject({ state: 'pending', heldAt: expect.any(Number) });
        expect(await switches().list()).toEqual([seen('shop_b', 'cmp_pix', s.clock.now() - 1_000)]);
        expect(await decide('shop_a', null, 'drop')).toEqual([
          expect.objectContaining({ decision: 'drop', job: expect.objectContaining({ id: unnamed.id }) }),
        ]);
      },
      'lookup',
    );

    test('send makes the held jobs due now, held no longer, their error cleared', async () => {
      const job = await heldOrder('ord_s1');
      await switches().note(seen('shop_a', 'cmp_pix', s.clock.now()));
      s.clock.advance(1_000);
      const now = s.clock.now();
      expect(await claimAll()).toEqual([]);
      const decided = await decide('shop_a', 'cmp_pix', 'send');
      expect(decided).toEqual([
        {
          decision: 'send',
          job: expect.objectContaining({
            id: job.id,
            state: 'pending',
            nextAttemptAt: now,
            updatedAt: now,
            lastError: null,
            heldAt: null,
            heldCampaignId: null,
          }),
        },
      ]);
      const [claimed] = await claimAll();
      expect(claimed).toMatchObject({ id: job.id, heldAt: null, heldCampaignId: null, lastError: null });
      expect(await switches().list()).toEqual([]);
      expect((await s.outbox.stats(now)).held).toEqual([]);
    });

    test('a held job sent past its deadline expires, with its ledger row, and is never claimed', async () => {
      const job = await heldOrder('ord_late', 'shop_a', 'cmp_pix', s.clock.now() - 6 * DAY_MS);
      s.clock.set((job.deadline as number) + 1);
      const decided = await decide('shop_a', 'cmp_pix', 'send');
      expect(decided).toEqual([
        {
          decision: 'send',
          job: expect.objectContaining({ id: job.id, state: 'expired', heldAt: null, heldCampaignId: null }),
        },
      ]);
      expect(decided[0]?.job.lastError).toMatch(/^held send: /);
      s.clock.advance(DAY_MS);
      expect(await claimAll()).toEqual([]);
      if (s.has('lookup')) expect(await s.stateOf(job.id)).toBe('expired');
      if (s.has('ledger'))
        expect(await s.outbox.readLedger({ orderId: 'ord_late' })).toEqual([
          expect.objectContaining({
            kind: 'expired',
            actor: 'dispatcher',
            jobId: job.id,
            account: 'shop_a',
            valueMicros: 5_000_000,
          }),
        ]);
    });

    test(
      'createdBefore decides only the older jobs; the switch is kept while some of the problem stay held',
      async () => {
        const older = await heldOrder('ord_old');
        s.clock.advance(1_000); // less than a probe's wait: the older job stays held
        const bound = s.clock.now();
        const newer = await heldOrder('ord_new');
        const at = s.clock.now();
        await switches().note(seen('shop_a', 'cmp_pix', at));
        const decided = await decide('shop_a', 'cmp_pix', 'drop', bound);
        expect(decided.map((d) => d.job.id)).toEqual([older.id]);
        expect(await s.outbox.get(newer.id)).toMatchObject({ state: 'pending', heldCampaignId: 'cmp_pix' });
        expect(await switches().list()).toEqual([seen('shop_a', 'cmp_pix', at)]);
        expect((await decide('shop_a', 'cmp_pix', 'send')).map((d) => d.job.id)).toEqual([newer.id]);
        expect(await switches().list()).toEqual([]);
      },
      'lookup',
    );

    test('a held reversal is sent even when its problem is dropped', async () => {
      await s.deliver('ord_charged', 'cmp_pix');
      const refund = await s.outbox.refund({ orderId: 'ord_charged' });
      expect(refund.outcome).toBe('enqueued');
      const claimed = await claimOne();
      expect(claimed.id).toBe(refund.job.id);
      await hold(claimed);
      await switches().note(seen(null, 'cmp_pix', s.clock.now()));
      const decided = await decide(null, 'cmp_pix', 'drop');
      expect(decided).toEqual([
        {
          decision: 'send',
          job: expect.objectContaining({ id: refund.job.id, state: 'pending', heldAt: null }),
        },
      ]);
      expect((await claimAll()).map((job) => job.id)).toEqual([refund.job.id]);
      expect(await switches().list()).toEqual([]);
    });

    test(
      'a dropped confirm takes its waiting refund along: never charged, the refund is cancelled',
      async () => {
        await enqueue('ord_wait', { account: 'shop_a' });
        const claimed = await claimOne();
        const refund = await s.outbox.refund({ orderId: 'ord_wait', account: 'shop_a' });
        expect(refund.outcome).toBe('enqueued');
        await hold(claimed);
        expect(await s.stateOf(refund.job.id)).toBe('pending');
        const decided = await decide('shop_a', 'cmp_pix', 'drop');
        expect(decided.map((d) => [d.job.id, d.decision, d.job.state])).toEqual([
          [claimed.id, 'drop', 'cancelled'],
        ]);
        expect(await s.stateOf(refund.job.id)).toBe('cancelled');
        s.clock.advance(DAY_MS);
        expect(await claimAll()).toEqual([]);
      },
      'lookup',
    );

    test(
      'an inflight held job (its probe) is not decided; with no pending one left the switch is forgotten',
      async () => {
        const job = await heldOrder('ord_probe');
        await switches().note(seen('shop_a', 'cmp_pix', s.clock.now()));
        s.clock.advance(PROBE);
        const probe = await claimOne();
        expect(probe).toMatchObject({ id: job.id, heldCampaignId: 'cmp_pix' });
        expect(await decide('shop_a', 'cmp_pix', 'drop')).toEqual([]);
        expect(await s.stateOf(job.id)).toBe('inflight');
        expect(await switches().list()).toEqual([]);
        expect(await switches().note(seen('shop_a', 'cmp_pix', s.clock.now()))).toBe(false);
      },
      'lookup',
    );

    test(
      "stats name each held problem's earliest deadline, what a decision on them must come before",
      async () => {
        const a = await heldOrder('ord_e1', 'shop_a', 'cmp_pix', s.clock.now() - 2 * DAY_MS);
        const b = await heldOrder('ord_e2', 'shop_a', 'cmp_pix', s.clock.now() - 3 * DAY_MS);
        const c = await heldOrder('ord_e3', 'shop_b', 'cmp_pix');
        expect(b.deadline as number).toBeLessThan(a.deadline as number);
        const held = (await s.outbox.stats(s.clock.now())).held;
        const of = (account: string) => held.find((p) => p.account === account) as HeldProblem;
        expect(held).toHaveLength(2);
        expect(of('shop_a')).toMatchObject({ count: 2, earliestDeadline: b.deadline });
        expect(of('shop_b')).toMatchObject({ count: 1, earliestDeadline: c.deadline });
      },
      'exactStats',
    );

    test('a bad switch or decision is refused, naming its field, before any write', async () => {
      const t = s.clock.now();
      await heldOrder('ord_bad');
      await s.expectValidation(switches().note(null as never), 'seen');
      await s.expectValidation(switches().note(seen('', 'cmp_pix', t)), 'account');
      await s.expectValidation(switches().note(seen('shop_a', 'pixel', t)), 'campaignId');
      await expect(switches().note(seen('shop_a', 'cmp_pix', -1))).rejects.toThrow(/^at /);
      const ok = { account: 'shop_a', campaignId: 'cmp_pix', decision: 'drop' as const, now: t };
      await s.expectValidation(switches().decide(null as never), 'options');
      await s.expectValidation(switches().decide({ ...ok, decision: 'maybe' as never }), 'decision');
      await s.expectValidation(switches().decide({ ...ok, campaignId: 'pixel' }), 'campaignId');
      await s.expectValidation(switches().decide({ ...ok, account: '' }), 'account');
      await expect(switches().decide({ ...ok, now: -1 })).rejects.toThrow(/^now /);
      await expect(switches().decide({ ...ok, createdBefore: 1.5 })).rejects.toThrow(/^createdBefore /);
      expect(await switches().list()).toEqual([]);
      expect((await s.outbox.stats(t)).held).toEqual([expect.objectContaining({ count: 1 })]);
    });

    test('every call after close() rejects with OutboxClosedError', async () => {
      const t = s.clock.now();
      await s.outbox.close();
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['note', () => switches().note(seen('shop_a', 'cmp_pix', t))],
        ['list', () => switches().list()],
        ['decide', () => decide('shop_a', 'cmp_pix', 'send')],
      ];
      for (const [method, call] of calls) {
        const err = await call().then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, `switches.${method} after close()`).toBeInstanceOf(OutboxClosedError);
      }
    });
  });
}
