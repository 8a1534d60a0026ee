/**
 * Conformance tests: malformed confirms and refunds are refused with a `JobValidationError` and store
 * nothing; malformed worker and operator calls are refused by core's call checks and change nothing.
 */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import type { Job } from '../../queue/job-types.ts';
import type { ConfirmInput } from '../../queue/outbox-types.ts';
import { LEASE_MS, type Suite } from './suite.ts';

export function describeValidation(s: Suite): void {
  const { confirmInput, claimAll, claimOne, expectValidation, has, test } = s;
  describe('validation', () => {
    test('rejects a malformed confirm with a JobValidationError naming the field, and stores nothing', async () => {
      const cases: Array<[string, Partial<ConfirmInput> | Record<string, unknown>]> = [
        ['orderId', { orderId: '' }],
        ['orderId', { orderId: 'x'.repeat(256) }],
        ['orderId', { orderId: 'ord\u0000' }],
        ['valueMicros', { valueMicros: 12.5 }],
        ['valueMicros', { valueMicros: -1 }],
        ['valueMicros', { valueMicros: '12.34' }],
        ['click.token', { click: { token: 'has space', clickedAt: s.clock.now() } }],
        ['click.token', { click: { token: '', clickedAt: s.clock.now() } }],
        ['click.clickedAt', { click: { token: 'tok_ok', clickedAt: Number.NaN } }],
        ['click.clickedAt', { click: { token: 'tok_ok', clickedAt: s.clock.now() + DAY_MS } }],
      ];
      for (const [field, patch] of cases) {
        await expectValidation(
          s.outbox.confirm({ ...confirmInput('ord_bad'), ...patch } as ConfirmInput),
          field,
        );
      }
      expect(await claimAll()).toEqual([]);
      if (has('lookup')) expect(await s.outbox.getByOrder('ord_bad')).toEqual([]);
      if (has('exactStats')) expect((await s.outbox.stats(s.clock.now())).counts.pending).toBe(0);
    });

    test('rejects a malformed refund with a JobValidationError naming the field, and stores nothing', async () => {
      await expectValidation(s.outbox.refund({ orderId: '' }), 'orderId');
      await expectValidation(s.outbox.refund({ orderId: 'ord_r', campaignId: 'campaign-7' }), 'campaignId');
      s.clock.advance(DAY_MS);
      expect(await claimAll()).toEqual([]);
      if (has('lookup')) expect(await s.outbox.getByOrder('ord_r')).toEqual([]);
    });

    test('refuses an account or order id that is not well-formed Unicode, naming the field, and stores nothing', async () => {
      // A lone surrogate is what cutting a name inside an emoji leaves. Written as UTF-8 it becomes U+FFFD,
      // so two shops (or two orders) would become one: refused before anything is stored.
      await expectValidation(s.outbox.confirm(confirmInput('ord_1', { account: 'shop-\ud83d' })), 'account');
      await expectValidation(s.outbox.confirm(confirmInput('ord_1', { account: 'shop-\ud83e' })), 'account');
      await expectValidation(s.outbox.confirm(confirmInput('ord-\udc00')), 'orderId');
      const refund = { orderId: 'ord_2', campaignId: 'cmp_1' };
      await expectValidation(s.outbox.refund({ ...refund, account: 'shop-\ud83d' }), 'account');
      await expectValidation(s.outbox.refund({ ...refund, orderId: 'ord-\ud800' }), 'orderId');
      s.clock.advance(DAY_MS);
      expect(await claimAll()).toEqual([]);
      if (has('lookup')) {
        expect(await s.outbox.getByOrder('ord_1', 'shop-\ufffd')).toEqual([]);
        await expectValidation(s.outbox.getByOrder('ord_1', 'shop-\ud83d'), 'account');
        await expectValidation(s.outbox.getByOrder('ord-\udc00'), 'orderId');
      }
      if (has('listJobs')) {
        await expectValidation(s.outbox.listJobs({ account: 'shop-\ud83d' }), 'filter.account');
        await expectValidation(s.outbox.listJobs({ orderId: 'ord-\udc00' }), 'filter.orderId');
      }
    });

    test('keeps well-formed names beyond ASCII exactly: two shops that differ in one letter are two orders', async () => {
      // Letters of the Basic Multilingual Plane: fauxqs refuses astral characters in a message (AWS takes them).
      const orderId = 'ord-\u00e9t\u00e9-\u6771\u4eac';
      const first = await s.enqueue(orderId, { account: 'shop-\u00e4' });
      const second = await s.enqueue(orderId, { account: 'shop-\u00f6' });
      const claimed = await claimAll();
      expect(claimed.map((job) => job.account).sort()).toEqual(['shop-\u00e4', 'shop-\u00f6']);
      expect(claimed.every((job) => job.orderId === orderId)).toBe(true);
      if (has('lookup')) {
        expect(first.id).not.toBe(second.id);
        expect(await s.outbox.getByOrder(orderId, 'shop-\u00e4')).toHaveLength(1);
      }
    });

    test('refuses a refund without campaignId when it holds no confirmation for the order', async () => {
      await expectValidation(s.outbox.refund({ orderId: 'ord_unknown' }), 'campaignId');
      expect(await claimAll()).toEqual([]);
    });

    test('refuses malformed worker and operator calls, naming the field, and changes nothing', async () => {
      await s.enqueue('ord_1');
      const claimed = await claimOne();
      const now = s.clock.now();
      const o = s.outbox;
      const claim = { now, limit: 1, leaseMs: LEASE_MS };
      const retry = { now, nextAttemptAt: now, error: 'HTTP 503' };
      const fail = { now, state: 'dead' as const, reason: 'HTTP 422' };
      const attempt = { startedAt: now, durationMs: 5, outcome: 'permanent', status: 42, detail: null };
      const beat = {
        workerId: '',
        at: now,
        state: 'running',
        pausedUntil: null,
        pauseReason: null,
        version: '1',
        host: null,
        pid: 1,
        pausedAccounts: [],
      };
      const bad = (value: unknown) => value as never;
      const calls: Array<[RegExp, () => Promise<unknown>]> = [
        [/limit/, () => o.claim({ ...claim, limit: 0 })],
        [/leaseMs/, () => o.claim({ ...claim, leaseMs: -1 })],
        [/urgentWithinMs/, () => o.claim({ ...claim, urgentWithinMs: -1 })],
        [/excludeAccounts/, () => o.claim({ ...claim, excludeAccounts: bad('shop') })],
        [/job/, () => o.complete(bad({ id: claimed.id }), { now })],
        [/now/, () => o.complete(claimed, { now: -1 })],
        [/campaignId/, () => o.complete(claimed, { now, campaignId: bad(7) })],
        [/nextAttemptAt/, () => o.retry(claimed, { ...retry, nextAttemptAt: Number.NaN })],
        [/maybeApplied/, () => o.retry(claimed, { ...retry, maybeApplied: bad('yes') })],
        [/countAttempt/, () => o.retry(claimed, { ...retry, countAttempt: bad(0) })],
        [/state/, () => o.fail(claimed, { ...fail, state: bad('gone') })],
        [/attempt\.status/, () => o.fail(claimed, { ...fail, attempt })],
        [/jobs/, () => o.release(bad('all'), now)],
        [/leaseMs/, () => o.extendLease(claimed, { now, leaseMs: 0 })],
        [/ids/, () => o.replay(bad({ ids: 'all' }), now)],
        [/ids/, () => o.purgeDead(bad({ ids: [1] }))],
        [/now/, () => o.stats(-1)],
        [/sinceMs/, () => o.workers({ now, sinceMs: -1 })],
        [/workerId/, () => o.beat(beat)],
        [/pausedAccounts/, () => o.beat({ ...beat, workerId: 'w1', pausedAccounts: bad('none') })],
      ];
      if (has('listDead')) calls.push([/limit/, () => o.listDead({ limit: 0 })]);
      for (const [field, call] of calls) {
        const err = await call().then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, `expected a TypeError or RangeError naming ${field}`).toSatisfy(
          (e) => e instanceof TypeError || e instanceof RangeError,
        );
        expect((err as Error).message).toMatch(field);
      }
      if (has('lookup')) expect(await o.get(claimed.id)).toEqual(claimed);
      expect(await o.complete(claimed as Job, { now, campaignId: 'cmp_1' })).toBe(true);
    });
  });
}
