/**
 * Conformance tests: shadow mode (`Outbox.shadow`), the migration tool from pixel to s2s. Its settings
 * persist in the store; a claimed job of an account in shadow mode is recorded (`cancelled`, marked, its
 * attempt uncounted, never claimed again), and ending shadow mode decides each recorded job: dropped, or
 * sent when created at or after the given time (expired when its deadline passed meanwhile). A backend
 * without shadow mode (SQS) has no `shadow`.
 */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import type { Job } from '../../queue/job-types.ts';
import { isShadowRecorded, SHADOW_RECORDED_REASON } from '../../queue/shadow-mark.ts';
import type { OutboxShadow, ShadowScope } from '../../queue/shadow-types.ts';
import { HOUR, LEASE_MS, type Suite } from './suite.ts';

export function describeShadow(s: Suite): void {
  const { enqueue, claimAll, claimOne, test } = s;
  const shadow = () => s.outbox.shadow as OutboxShadow;
  const ALL: ShadowScope = { all: true };

  /** Enqueues an order of `account`, claims it and records it in shadow mode; returns the claimed job. */
  const recorded = async (orderId: string, account: string | null = null): Promise<Job> => {
    await enqueue(orderId, { account });
    const claimed = await claimOne();
    expect(await shadow().record(claimed, { now: s.clock.now() })).toBe('recorded');
    return claimed;
  };

  describe('shadow mode', () => {
    test('a backend has shadow exactly when it declares the capability', async () => {
      expect(s.outbox.shadow !== undefined).toBe(s.has('shadow'));
    });

    test(
      'settings persist: a scope started twice keeps its first time; they are listed oldest first',
      async () => {
        const first = s.clock.now();
        expect(await shadow().start(ALL, first)).toEqual({ scope: 'all', account: null, since: first });
        s.clock.advance(HOUR);
        expect(await shadow().start(ALL, s.clock.now())).toEqual({
          scope: 'all',
          account: null,
          since: first,
        });
        await shadow().start({ account: 'shop-b' }, s.clock.now());
        expect(await shadow().settings()).toEqual([
          { scope: 'all', account: null, since: first },
          { scope: 'account', account: 'shop-b', since: first + HOUR },
        ]);
      },
      'shadow',
    );

    test(
      'a claimed job of an account in shadow mode is recorded: cancelled, marked, uncounted, never claimed again',
      async () => {
        await shadow().start({ account: 'shop-a' }, s.clock.now());
        const claimed = await recorded('ord_s1', 'shop-a');
        const stored = (await s.outbox.get(claimed.id)) as Job;
        expect(stored).toMatchObject({ state: 'cancelled', attempts: 0, lastError: SHADOW_RECORDED_REASON });
        expect(stored.maybeAppliedAt).toBeNull();
        expect(isShadowRecorded(stored)).toBe(true);
        s.clock.advance(DAY_MS);
        expect(await claimAll()).toEqual([]);
      },
      'shadow',
      'lookup',
    );

    test(
      'a job outside shadow mode, past its deadline, or no longer leased is not recorded',
      async () => {
        await shadow().start({ account: 'shop-a' }, s.clock.now());
        await enqueue('ord_other', { account: 'shop-b' });
        const other = await claimOne();
        expect(await shadow().record(other, { now: s.clock.now() })).toBe('not-shadowed');
        expect(await s.stateOf(other.id)).toBe('inflight');

        await enqueue('ord_late', { account: 'shop-a' });
        const late = await claimOne();
        const past = (late.deadline as number) + 1;
        expect(await shadow().record(late, { now: past })).toBe('not-shadowed');
        expect(await s.stateOf(late.id)).toBe('inflight');

        await enqueue('ord_lost', { account: 'shop-a' });
        const lost = await claimOne();
        s.clock.advance(LEASE_MS + 1);
        const retaken = (await claimAll()).find((job) => job.id === lost.id);
        expect(retaken).toBeDefined();
        expect(await shadow().record(lost, { now: s.clock.now() })).toBe('lost');
      },
      'shadow',
      'lookup',
    );

    test(
      'ending shadow mode without a time drops every recorded job, naming why, and forgets the setting',
      async () => {
        await shadow().start(ALL, s.clock.now());
        const a = await recorded('ord_d1');
        const b = await recorded('ord_d2', 'shop-a');
        s.clock.advance(HOUR);
        const result = await shadow().end(ALL, { now: s.clock.now(), sendCreatedFrom: null });
        expect(result.ended).toBe(true);
        expect(result.decided.map((d) => [d.job.id, d.decision, d.job.state]).sort()).toEqual(
          [
            [a.id, 'drop', 'cancelled'],
            [b.id, 'drop', 'cancelled'],
          ].sort(),
        );
        for (const id of [a.id, b.id]) {
          const job = (await s.outbox.get(id)) as Job;
          expect(job.lastError).toMatch(/^shadow end: not sent/);
          expect(isShadowRecorded(job)).toBe(false);
        }
        expect(await shadow().settings()).toEqual([]);
        expect(await claimAll()).toEqual([]);
        expect((await shadow().end(ALL, { now: s.clock.now(), sendCreatedFrom: null })).ended).toBe(false);
      },
      'shadow',
      'lookup',
    );

    test(
      'ending shadow mode with a time sends the jobs created at or after it and drops the older ones',
      async () => {
        await shadow().start(ALL, s.clock.now());
        const before = await recorded('ord_before');
        s.clock.advance(HOUR);
        const from = s.clock.now();
        const after = await recorded('ord_after');
        s.clock.advance(HOUR);
        const { decided } = await shadow().end(ALL, { now: s.clock.now(), sendCreatedFrom: from });
        expect(decided.find((d) => d.job.id === before.id)?.decision).toBe('drop');
        expect(decided.find((d) => d.job.id === after.id)).toMatchObject({
          decision: 'send',
          job: { state: 'pending', attempts: 0, lastError: null },
        });
        const sent = await claimAll();
        expect(sent.map((job) => job.id)).toEqual([after.id]);
        expect(await s.stateOf(before.id)).toBe('cancelled');
      },
      'shadow',
      'lookup',
    );

    test(
      'a recorded job to be sent whose deadline passed is expired, never sent late',
      async () => {
        await shadow().start(ALL, s.clock.now());
        const job = await recorded('ord_old');
        s.clock.set((job.deadline as number) + 1);
        const { decided } = await shadow().end(ALL, { now: s.clock.now(), sendCreatedFrom: 0 });
        expect(decided).toEqual([
          expect.objectContaining({ decision: 'send', job: expect.objectContaining({ state: 'expired' }) }),
        ]);
        expect(await claimAll()).toEqual([]);
      },
      'shadow',
    );

    test(
      'ending one scope leaves the jobs another scope still covers recorded',
      async () => {
        await shadow().start(ALL, s.clock.now());
        await shadow().start({ account: 'shop-a' }, s.clock.now());
        const a = await recorded('ord_a', 'shop-a');
        const b = await recorded('ord_b', 'shop-b');
        const { decided } = await shadow().end(ALL, { now: s.clock.now(), sendCreatedFrom: 0 });
        expect(decided.map((d) => d.job.id)).toEqual([b.id]);
        expect(isShadowRecorded((await s.outbox.get(a.id)) as Job)).toBe(true);
        expect(await shadow().settings()).toEqual([
          expect.objectContaining({ scope: 'account', account: 'shop-a' }),
        ]);
      },
      'shadow',
      'lookup',
    );

    test(
      'a refund or a withdrawal of a recorded order cancels it, so ending shadow mode never sends it',
      async () => {
        await shadow().start(ALL, s.clock.now());
        const refunded = await recorded('ord_r');
        const withdrawn = await recorded('ord_w');
        expect((await s.outbox.refund({ orderId: 'ord_r' })).outcome).toBe('cancelled');
        expect((await s.outbox.withdraw({ orderId: 'ord_w' })).outcome).toBe('cancelled');
        const { decided } = await shadow().end(ALL, { now: s.clock.now(), sendCreatedFrom: 0 });
        expect(decided).toEqual([]);
        expect(await claimAll()).toEqual([]);
        for (const id of [refunded.id, withdrawn.id]) expect(await s.stateOf(id)).toBe('cancelled');
      },
      'shadow',
      'cancelPendingConfirm',
      'lookup',
    );

    test(
      'a refund waiting for a confirm that is then recorded in shadow mode is cancelled with it',
      async () => {
        await shadow().start(ALL, s.clock.now());
        await enqueue('ord_wait');
        const claimed = await claimOne();
        const refund = await s.outbox.refund({ orderId: 'ord_wait' });
        expect(refund.outcome).toBe('enqueued');
        expect(await shadow().record(claimed, { now: s.clock.now() })).toBe('recorded');
        expect(await s.stateOf(refund.job.id)).toBe('cancelled');
        const { decided } = await shadow().end(ALL, { now: s.clock.now(), sendCreatedFrom: 0 });
        expect(decided).toEqual([
          expect.objectContaining({ decision: 'send', job: expect.objectContaining({ state: 'cancelled' }) }),
        ]);
        expect(await claimAll()).toEqual([]);
      },
      'shadow',
      'lookup',
    );

    test(
      'a reversal recorded in shadow mode is sent when it ends, even when its orders are dropped',
      async () => {
        await s.deliver('ord_charged', 'cmp_77');
        await shadow().start(ALL, s.clock.now());
        const refund = await s.outbox.refund({ orderId: 'ord_charged' });
        expect(refund.outcome).toBe('enqueued');
        const claimed = await claimOne();
        expect(claimed.id).toBe(refund.job.id);
        expect(await shadow().record(claimed, { now: s.clock.now() })).toBe('recorded');
        const { decided } = await shadow().end(ALL, { now: s.clock.now(), sendCreatedFrom: null });
        expect(decided).toEqual([
          expect.objectContaining({ decision: 'send', job: expect.objectContaining({ state: 'pending' }) }),
        ]);
        expect((await claimAll()).map((job) => job.id)).toEqual([refund.job.id]);
      },
      'shadow',
    );

    test(
      'spend readings are kept and read back from a time, oldest first; a bad one names its field',
      async () => {
        const t = s.clock.now();
        const reading = (at: number, spendMicros: number) => ({
          account: 'shop-a',
          at,
          campaigns: [{ campaignId: 'cmp_1', spendMicros }],
        });
        await shadow().noteSpend(reading(t + DAY_MS, 9_000_000));
        await shadow().noteSpend(reading(t, 4_000_000));
        await shadow().noteSpend({ account: null, at: t - DAY_MS, campaigns: [] });
        expect(await shadow().spend({ since: t })).toEqual([
          reading(t, 4_000_000),
          reading(t + DAY_MS, 9_000_000),
        ]);
        await s.expectValidation(
          shadow().noteSpend({
            account: null,
            at: t,
            campaigns: [{ campaignId: 'cmp_1', spendMicros: 1.5 }],
          }),
          'campaigns[0].spendMicros',
        );
        await s.expectValidation(shadow().start({ account: '' }, t), 'scope.account');
        await s.expectValidation(shadow().start({} as ShadowScope, t), 'scope');
      },
      'shadow',
    );
  });
}
