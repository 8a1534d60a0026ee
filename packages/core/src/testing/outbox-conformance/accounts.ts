/**
 * Conformance tests: many advertiser accounts in one outbox. An order is its account and its order id; a
 * claim never takes a job of an excluded (paused) account; one account's backlog does not hold back
 * another's fresh job; urgent deadlines go first; a quiet account's fresh job goes before the turns.
 */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import { QUIET_MAX_PENDING, QUIET_SCAN, QUIET_WITHIN_MS } from '../../queue/accounts.ts';
import type { Job } from '../../queue/job-types.ts';
import { HOUR, type Suite } from './suite.ts';

export function describeAccounts(s: Suite): void {
  const { enqueue, claimAll, test } = s;
  const accountsOf = (jobs: readonly Job[]) => jobs.map((job) => job.account);

  describe('accounts', () => {
    test('a job keeps its account; a job enqueued without one has account null', async () => {
      const a = await enqueue('ord_1', { account: 'shop-a' });
      const none = await enqueue('ord_2');
      expect(a.account).toBe('shop-a');
      expect(none.account).toBeNull();
      const claimed = await claimAll();
      expect(new Map(claimed.map((job) => [job.orderId, job.account]))).toEqual(
        new Map([
          ['ord_1', 'shop-a'],
          ['ord_2', null],
        ]),
      );
    });

    test('the same order id in two accounts is two orders; each is idempotent on its own', async () => {
      const a = await s.outbox.confirm(s.confirmInput('1001', { account: 'shop-a' }));
      const b = await s.outbox.confirm(s.confirmInput('1001', { account: 'shop-b' }));
      const none = await s.outbox.confirm(s.confirmInput('1001'));
      expect([a.created, b.created, none.created]).toEqual([true, true, true]);
      expect(new Set([a.job.id, b.job.id, none.job.id]).size).toBe(3);
      const again = await s.outbox.confirm(s.confirmInput('1001', { account: 'shop-b' }));
      expect(again).toMatchObject({ created: false, job: { id: b.job.id, account: 'shop-b' } });
      expect(await claimAll()).toHaveLength(3);
    });

    test(
      'getByOrder finds the order of the account asked for (no account: the order without one)',
      async () => {
        const a = await enqueue('1001', { account: 'shop-a' });
        const none = await enqueue('1001');
        expect((await s.outbox.getByOrder('1001', 'shop-a')).map((job) => job.id)).toEqual([a.id]);
        expect((await s.outbox.getByOrder('1001')).map((job) => job.id)).toEqual([none.id]);
        expect(await s.outbox.getByOrder('1001', 'shop-z')).toEqual([]);
      },
      'lookup',
    );

    test('a refund reverses the order of its account, in the campaign that account was charged in', async () => {
      for (const [account, campaign] of [
        ['shop-a', 'cmp_a'],
        ['shop-b', 'cmp_b'],
      ] as const) {
        await enqueue('1001', { account });
        const [claimed] = await claimAll(1);
        expect(claimed?.account).toBe(account);
        await s.outbox.complete(claimed as Job, { now: s.clock.now(), campaignId: campaign });
      }
      const outcome = await s.outbox.refund({ orderId: '1001', account: 'shop-b' });
      expect(outcome).toMatchObject({ outcome: 'enqueued', job: { account: 'shop-b', campaignId: 'cmp_b' } });
      const [refund] = await claimAll();
      expect(refund).toMatchObject({
        kind: 'refund',
        orderId: '1001',
        account: 'shop-b',
        campaignId: 'cmp_b',
      });
      // The other account's order was not refunded, and a refund without an account knows no such order.
      expect(await s.outbox.refund({ orderId: '1001', account: 'shop-a' })).toMatchObject({
        outcome: 'enqueued',
        job: { campaignId: 'cmp_a' },
      });
      await s.expectValidation(s.outbox.refund({ orderId: '1001' }), 'campaignId');
    });

    test(
      'a refund cancels the unsent confirmation of its own account only',
      async () => {
        const a = await enqueue('1001', { account: 'shop-a' });
        const b = await enqueue('1001', { account: 'shop-b' });
        expect(await s.outbox.refund({ orderId: '1001', account: 'shop-a' })).toMatchObject({
          outcome: 'cancelled',
          job: { id: a.id },
        });
        const [left] = await claimAll();
        expect(left).toMatchObject({ id: b.id, account: 'shop-b' });
      },
      'cancelPendingConfirm',
    );

    test("a refund does not wait for another account's confirmation of the same order id", async () => {
      await enqueue('1001', { account: 'shop-a' });
      const outcome = await s.outbox.refund({ orderId: '1001', account: 'shop-b', campaignId: 'cmp_b' });
      expect(outcome.outcome).toBe('enqueued');
      const claimed = await claimAll();
      expect(claimed.map((job) => `${job.kind}:${job.account}`).sort()).toEqual([
        'confirm:shop-a',
        'refund:shop-b',
      ]);
    });

    test('a malformed account is a JobValidationError naming the field', async () => {
      await s.expectValidation(s.outbox.confirm(s.confirmInput('ord_1', { account: '' })), 'account');
      await s.expectValidation(
        s.outbox.confirm(s.confirmInput('ord_1', { account: 42 as unknown as string })),
        'account',
      );
      await s.expectValidation(
        s.outbox.confirm(s.confirmInput('ord_1', { account: 'x'.repeat(201) })),
        'account',
      );
      await s.expectValidation(s.outbox.confirm(s.confirmInput('ord_1', { account: 'shop\n1' })), 'account');
      await s.expectValidation(
        s.outbox.refund({ orderId: 'ord_1', account: '  ', campaignId: 'cmp_1' }),
        'account',
      );
      expect(await claimAll()).toEqual([]);
    });

    test('claim never takes a job of an excluded account (null: jobs without one); they wait, uncounted', async () => {
      await enqueue('ord_a', { account: 'shop-a' });
      await enqueue('ord_b', { account: 'shop-b' });
      await enqueue('ord_none');
      const first = await s.outbox.claim({
        now: s.clock.now(),
        limit: 10,
        leaseMs: 30_000,
        excludeAccounts: ['shop-a', null],
      });
      expect(accountsOf(first)).toEqual(['shop-b']);
      const rest = await claimAll();
      expect(accountsOf(rest).sort()).toEqual([null, 'shop-a'].sort());
      expect(rest.every((job) => job.attempts === 1)).toBe(true);
    });

    test(
      "one account's backlog does not hold back another account's fresh job",
      async () => {
        for (let i = 0; i < 30; i++) await enqueue(`big_${i}`, { account: 'big' });
        s.clock.advance(1_000);
        await enqueue('small_1', { account: 'small' });
        const claimed = await claimAll(4);
        expect(claimed).toHaveLength(4);
        expect(accountsOf(claimed)).toContain('small');
      },
      'fairClaims',
    );

    test(
      'claims take turns across accounts: with more accounts than a claim takes, each is reached within a few claims',
      async () => {
        const accounts = ['a', 'b', 'c', 'd', 'e'];
        for (let i = 0; i < 5; i++)
          for (const account of accounts) await enqueue(`${account}_${i}`, { account });
        // Backlogs that have waited: no account is quiet (claimed first) once it holds few jobs.
        s.clock.advance(QUIET_WITHIN_MS + 1);
        const seen: (string | null)[] = [];
        for (let round = 0; round < 3; round++) {
          const claimed = await claimAll(2);
          expect(claimed).toHaveLength(2);
          // One claim takes at most one job of an account while others still have due jobs.
          expect(new Set(accountsOf(claimed)).size).toBe(2);
          seen.push(...accountsOf(claimed));
        }
        expect(new Set(seen)).toEqual(new Set(accounts));
      },
      'fairClaims',
    );

    test(
      "a quiet account's fresh job is taken by the next claim, ahead of the turns of accounts with backlogs",
      async () => {
        for (let i = 0; i < 3; i++)
          for (const account of ['a', 'b', 'c', 'd', 'e', 'f']) await enqueue(`${account}_${i}`, { account });
        s.clock.advance(QUIET_WITHIN_MS + 1);
        const quiet = await enqueue('zz_1', { account: 'zz' });
        const claimed = await claimAll(2);
        expect(claimed.map((job) => job.id)).toContain(quiet.id);
        // It is quiet for its first job only: the next claims take turns across the backlogs again.
        expect(accountsOf(await claimAll(2))).not.toContain('zz');
      },
      'fairClaims',
    );

    test(
      'an account whose first job has waited past the quiet window, or that holds more than a few pending jobs, takes its turn',
      async () => {
        for (let i = 0; i < 3; i++)
          for (const account of ['a', 'b', 'c', 'd', 'e', 'f']) await enqueue(`${account}_${i}`, { account });
        await enqueue('zz_old', { account: 'zz' });
        s.clock.advance(QUIET_WITHIN_MS + 1);
        for (let i = 0; i <= QUIET_MAX_PENDING; i++) await enqueue(`yy_${i}`, { account: 'yy' });
        const few = await enqueue('xx_1', { account: 'xx' });
        const claimed = await claimAll(4);
        expect(claimed).toHaveLength(4);
        // xx (one fresh job) goes first; yy's burst and zz's waited job take their turns after a, b, c.
        expect(claimed.map((job) => job.id)[0]).toBe(few.id);
        expect(accountsOf(claimed)).not.toContain('yy');
        expect(accountsOf(claimed)).not.toContain('zz');
      },
      'fairClaims',
    );

    test(
      "a quiet account's first job is found through its newest, however many young jobs came between",
      async () => {
        for (const account of ['a', 'b', 'c']) await enqueue(`${account}_old`, { account });
        s.clock.advance(QUIET_WITHIN_MS + 1);
        const first = await enqueue('zz_1', { account: 'zz' });
        // A burst (not quiet) of more young jobs than a store scans, then the quiet account's second job.
        for (let i = 0; i < QUIET_SCAN + 8; i++) await enqueue(`yy_${i}`, { account: 'yy' });
        await enqueue('zz_2', { account: 'zz' });
        const [claimed] = await claimAll(1);
        expect(claimed?.id).toBe(first.id);
      },
      'fairClaims',
    );

    test(
      'a job whose deadline is near goes first, whatever its account',
      async () => {
        for (let i = 0; i < 10; i++) await enqueue(`big_${i}`, { account: 'big' });
        // Clicked so long ago that its deadline (click + 7 days − 2 h margin) is 30 minutes away.
        const clickedAt = s.clock.now() - 7 * DAY_MS + 2 * HOUR + 30 * 60_000;
        const urgent = await enqueue('late_1', {
          account: 'other',
          click: { token: 'tok_late_AbC-9', clickedAt },
        });
        const [first] = await claimAll(1);
        expect(first?.id).toBe(urgent.id);
      },
      'fairClaims',
    );

    test(
      'listJobs filters by account (null: jobs without one)',
      async () => {
        await enqueue('ord_a', { account: 'shop-a' });
        await enqueue('ord_b', { account: 'shop-b' });
        await enqueue('ord_none');
        expect((await s.outbox.listJobs({ account: 'shop-a' })).map((job) => job.orderId)).toEqual(['ord_a']);
        expect((await s.outbox.listJobs({ account: null })).map((job) => job.orderId)).toEqual(['ord_none']);
        expect(await s.outbox.listJobs()).toHaveLength(3);
        await s.expectValidation(s.outbox.listJobs({ account: '' }), 'filter.account');
      },
      'listJobs',
    );

    test('a dead job keeps its account through replay', async () => {
      await enqueue('ord_a', { account: 'shop-a' });
      const [claimed] = await claimAll();
      await s.outbox.fail(claimed as Job, { now: s.clock.now(), state: 'dead', reason: 'HTTP 422' });
      expect(await s.outbox.replay({ all: true }, s.clock.now())).toBe(1);
      const [again] = await claimAll();
      expect(again).toMatchObject({ orderId: 'ord_a', account: 'shop-a' });
    });
  });
}
