/** Conformance tests: dead jobs are listed, replayed (or expired, or cancelled) and purged. */
import { describe, expect } from 'vitest';
import type { Job } from '../../queue/job-types.ts';
import { HOUR, type Suite } from './suite.ts';

export function describeDeadJobs(s: Suite): void {
  const { enqueue, claimAll, claimOne, killConfirm, stateOf, has, test } = s;
  describe('dead jobs', () => {
    test('replay puts a dead job back to pending, due now, with attempts reset', async () => {
      const job = await enqueue('ord_1');
      for (let i = 0; i < 3; i++) {
        const claimed = await claimOne();
        await s.outbox.retry(claimed, {
          now: s.clock.now(),
          nextAttemptAt: s.clock.now(),
          error: 'HTTP 500',
        });
      }
      const claimed = await claimOne();
      await s.outbox.fail(claimed, { now: s.clock.now(), state: 'dead', reason: 'HTTP 400' });
      s.clock.advance(HOUR);
      expect(await s.outbox.replay({ ids: [job.id] }, s.clock.now())).toBe(1);
      const [again] = await claimAll();
      expect(again).toMatchObject({ id: job.id, attempts: 1 });
    });

    test('replay of all dead jobs leaves other jobs untouched', async () => {
      await killConfirm('ord_1');
      await killConfirm('ord_2');
      await enqueue('ord_3');
      const inflight = await claimOne();
      expect(await s.outbox.replay({ all: true }, s.clock.now())).toBe(2);
      const claimed = await claimAll();
      expect(claimed.map((j) => j.orderId).sort()).toEqual(['ord_1', 'ord_2']);
      expect(await s.outbox.complete(inflight, { now: s.clock.now(), campaignId: 'cmp_1' })).toBe(true);
    });

    test('replay expires a dead job whose deadline has passed instead of sending it', async () => {
      const job = await killConfirm('ord_1');
      s.clock.set((job.deadline as number) + 1);
      expect(await s.outbox.replay({ ids: [job.id] }, s.clock.now())).toBe(0);
      expect(await claimAll()).toEqual([]);
      if (has('listDead')) expect(await s.outbox.listDead()).toEqual([]);
      if (has('lookup')) expect(await stateOf(job.id)).toBe('expired');
    });

    test('replay ignores ids of jobs that are not dead', async () => {
      const pending = await enqueue('ord_1');
      expect(await s.outbox.replay({ ids: [pending.id, 'no-such-id'] }, s.clock.now())).toBe(0);
      const [claimed] = await claimAll();
      expect(claimed?.attempts).toBe(1);
    });

    test('purgeDead deletes dead jobs only, all or by id, and returns the count', async () => {
      const a = await killConfirm('ord_1');
      await killConfirm('ord_2');
      const pending = await enqueue('ord_3');
      expect(await s.outbox.purgeDead({ ids: [a.id, pending.id] })).toBe(1);
      expect(await s.outbox.purgeDead()).toBe(1);
      expect(await s.outbox.purgeDead()).toBe(0);
      expect(await s.outbox.replay({ all: true }, s.clock.now())).toBe(0);
      expect((await claimAll()).map((j) => j.id)).toEqual([pending.id]);
    });

    test(
      'listDead pages through dead jobs oldest first, each exactly once, with their reasons',
      async () => {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          ids.push((await killConfirm(`ord_${i}`, `reason ${i}`)).id);
          s.clock.advance(1_000);
        }
        const seen: Job[] = [];
        let after: string | undefined;
        for (let page = 0; page < 10; page++) {
          const jobs = await s.outbox.listDead({ limit: 2, ...(after === undefined ? {} : { after }) });
          if (jobs.length === 0) break;
          expect(jobs.length).toBeLessThanOrEqual(2);
          seen.push(...jobs);
          after = jobs[jobs.length - 1]?.id;
        }
        expect(seen.map((j) => j.id)).toEqual(ids);
        expect(seen.map((j) => j.lastError)).toEqual([
          'reason 0',
          'reason 1',
          'reason 2',
          'reason 3',
          'reason 4',
        ]);
        expect(seen.every((j) => j.state === 'dead')).toBe(true);
      },
      'listDead',
    );
  });
}
