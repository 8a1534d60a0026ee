/**
 * Conformance tests of what operators read: attempt history (bounded, surviving replay), job listings
 * with filters, deadlines at risk, retention (`prune`) and worker heart-beats.
 */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import { ATTEMPT_HISTORY_LIMIT, type AttemptRecord, type Job } from '../../queue/job-types.ts';
import type { WorkerBeat } from '../../queue/outbox-types.ts';
import { HOUR, type Suite } from './suite.ts';

const attempt = (startedAt: number, overrides: Partial<AttemptRecord> = {}): AttemptRecord => ({
  startedAt,
  durationMs: 120,
  outcome: 'transient',
  status: 503,
  detail: '503: Service Unavailable',
  ...overrides,
});

export function describeOperatorView(s: Suite): void {
  const { enqueue, claimOne, test } = s;
  const now = () => s.clock.now();

  /** Claims the one due job and retries it with `a`; returns the claimed job. */
  const retryWith = async (a: AttemptRecord, error = a.detail ?? 'x'): Promise<Job> => {
    const job = await claimOne();
    const ok = await s.outbox.retry(job, { now: now(), nextAttemptAt: now(), error, attempt: a });
    expect(ok).toBe(true);
    return job;
  };

  describe('attempt history', () => {
    test(
      'keeps every recorded attempt in order, with status, outcome, detail and duration',
      async () => {
        const job = await enqueue('ord_h1');
        await retryWith(attempt(now()));
        s.clock.advance(1_000);
        const second = await claimOne();
        const dead = attempt(now(), {
          outcome: 'permanent',
          status: 404,
          detail: '404: click_token not found',
        });
        expect(await s.outbox.fail(second, { now: now(), state: 'dead', reason: 'x', attempt: dead })).toBe(
          true,
        );
        const history = await s.outbox.history(job.id);
        expect(history).toEqual([attempt(now() - 1_000), dead]);
      },
      'attemptHistory',
    );

    test(
      'survives replay: the reason a job first died is still there after it fails again',
      async () => {
        const job = await enqueue('ord_h2');
        const claimed = await claimOne();
        const first = attempt(now(), {
          outcome: 'permanent',
          status: 404,
          detail: '404: click_token not found',
        });
        await s.outbox.fail(claimed, {
          now: now(),
          state: 'dead',
          reason: first.detail ?? '',
          attempt: first,
        });
        expect(await s.outbox.replay({ ids: [job.id] }, now())).toBe(1);
        s.clock.advance(1_000);
        const again = await claimOne();
        const second = attempt(now(), { detail: '503: fault injected' });
        await s.outbox.retry(again, { now: now(), nextAttemptAt: now(), error: 'x', attempt: second });
        const history = await s.outbox.history(job.id);
        expect(history.map((a) => a.detail)).toEqual(['404: click_token not found', '503: fault injected']);
      },
      'attemptHistory',
      'lookup',
    );

    test(
      `keeps the last ${ATTEMPT_HISTORY_LIMIT} attempts, dropping the oldest`,
      async () => {
        const job = await enqueue('ord_h3');
        for (let i = 0; i < ATTEMPT_HISTORY_LIMIT + 3; i += 1) {
          s.clock.advance(1_000);
          await retryWith(attempt(now(), { detail: `try ${i}` }));
        }
        const history = await s.outbox.history(job.id);
        expect(history).toHaveLength(ATTEMPT_HISTORY_LIMIT);
        expect(history[0]?.detail).toBe('try 3');
        expect(history.at(-1)?.detail).toBe(`try ${ATTEMPT_HISTORY_LIMIT + 2}`);
      },
      'attemptHistory',
    );

    test(
      'a delivered attempt is kept, a transition without an attempt adds none, a stale lease adds none',
      async () => {
        const job = await enqueue('ord_h4');
        const claimed = await claimOne();
        // Given back untried (a pause): no attempt.
        await s.outbox.retry(claimed, {
          now: now(),
          nextAttemptAt: now(),
          error: 'paused',
          countAttempt: false,
        });
        // A stale lease: refused, and nothing recorded.
        const stale = await s.outbox.retry(claimed, {
          now: now(),
          nextAttemptAt: now(),
          error: 'x',
          attempt: attempt(now()),
        });
        expect(stale).toBe(false);
        const again = await claimOne();
        const ok = attempt(now(), { outcome: 'delivered', status: 201, detail: null });
        expect(await s.outbox.complete(again, { now: now(), campaignId: 'cmp_1', attempt: ok })).toBe(true);
        expect(await s.outbox.history(job.id)).toEqual([ok]);
      },
      'attemptHistory',
    );

    test('an unknown job has an empty history', async () => {
      expect(await s.outbox.history('no-such-job')).toEqual([]);
    });
  });

  describe('listJobs', () => {
    test(
      'lists jobs of every state, most urgent deadline first, with filters and paging',
      async () => {
        const start = now();
        await enqueue('ord_l_far', { click: { token: 'tok_far', clickedAt: start - 1 * DAY_MS } });
        await enqueue('ord_l_near', { click: { token: 'tok_near', clickedAt: start - 6 * DAY_MS } });
        await enqueue('ord_l_mid', { click: { token: 'tok_mid', clickedAt: start - 3 * DAY_MS } });
        const all = await s.outbox.listJobs();
        expect(all.map((j) => j.orderId)).toEqual(['ord_l_near', 'ord_l_mid', 'ord_l_far']);
        const page = await s.outbox.listJobs({ limit: 1, offset: 1 });
        expect(page.map((j) => j.orderId)).toEqual(['ord_l_mid']);
        // Deadline within 2 days: only the click 6 days old (deadline in 1 day minus the margin).
        const soon = await s.outbox.listJobs({ deadlineBefore: start + 2 * DAY_MS });
        expect(soon.map((j) => j.orderId)).toEqual(['ord_l_near']);
        expect((await s.outbox.listJobs({ orderId: 'ord_l_mid' })).map((j) => j.orderId)).toEqual([
          'ord_l_mid',
        ]);
        expect(await s.outbox.listJobs({ kind: 'refund' })).toEqual([]);
      },
      'listJobs',
    );

    test(
      'filters by state, by reason (a regular expression) and by the last attempt status',
      async () => {
        await enqueue('ord_r1');
        await retryWith(
          attempt(now(), { status: 503, detail: '503: fault injected' }),
          '503: fault injected',
        );
        s.clock.advance(1_000);
        await enqueue('ord_r2');
        const [r2] = (await s.claimAll()).filter((j) => j.orderId === 'ord_r2');
        const gone = attempt(now(), {
          outcome: 'permanent',
          status: 404,
          detail: '404: click_token not found',
        });
        await s.outbox.fail(r2 as Job, {
          now: now(),
          state: 'dead',
          reason: gone.detail ?? '',
          attempt: gone,
        });
        await enqueue('ord_r3');

        const dead = await s.outbox.listJobs({ states: ['dead'] });
        expect(dead.map((j) => j.orderId)).toEqual(['ord_r2']);
        const byReason = await s.outbox.listJobs({ reason: /click_token/i });
        expect(byReason.map((j) => j.orderId)).toEqual(['ord_r2']);
        const byStatus = await s.outbox.listJobs({ status: 503 });
        expect(byStatus.map((j) => j.orderId)).toEqual(['ord_r1']);
        const openOnes = await s.outbox.listJobs({ states: ['pending', 'inflight'] });
        expect(openOnes.map((j) => j.orderId).sort()).toEqual(['ord_r1', 'ord_r3']);
      },
      'listJobs',
      'attemptHistory',
    );

    test(
      'filters by last change (older than)',
      async () => {
        const old = await enqueue('ord_o1');
        s.clock.advance(2 * HOUR);
        await enqueue('ord_o2');
        const older = await s.outbox.listJobs({ updatedBefore: now() - HOUR });
        expect(older.map((j) => j.id)).toEqual([old.id]);
      },
      'listJobs',
    );

    test('a malformed filter is a JobValidationError naming the field', async () => {
      await s.expectValidation(s.outbox.listJobs({ limit: 0 }), 'filter.limit');
      await s.expectValidation(
        s.outbox.listJobs({ states: ['pending', 'lost' as never] }),
        'filter.states[1]',
      );
      await s.expectValidation(s.outbox.listJobs({ status: 42 }), 'filter.status');
      await s.expectValidation(s.outbox.listJobs({ offset: -1 }), 'filter.offset');
    });
  });

  describe('deadlines at risk', () => {
    test(
      'counts open jobs whose deadline is within the window, and buckets them by time left',
      async () => {
        const start = now();
        // Deadlines (7 days minus the 2 h margin after the click): in ~10 h, ~22 h, ~4 days.
        await enqueue('ord_k1', { click: { token: 'tok_k1', clickedAt: start - 7 * DAY_MS + 12 * HOUR } });
        await enqueue('ord_k2', { click: { token: 'tok_k2', clickedAt: start - 7 * DAY_MS + 24 * HOUR } });
        await enqueue('ord_k3', { click: { token: 'tok_k3', clickedAt: start - 3 * DAY_MS } });
        const stats = await s.outbox.stats(start, {
          atRiskWithinMs: 12 * HOUR,
          deadlineBucketsMs: [HOUR, 12 * HOUR, DAY_MS, 7 * DAY_MS],
        });
        expect(stats.atRisk).toEqual({ count: 1, withinMs: 12 * HOUR });
        expect(stats.deadlineBuckets).toEqual([
          { withinMs: HOUR, count: 0 },
          { withinMs: 12 * HOUR, count: 1 },
          { withinMs: DAY_MS, count: 2 },
          { withinMs: 7 * DAY_MS, count: 3 },
        ]);
        // The default window is 24 hours.
        expect((await s.outbox.stats(start)).atRisk).toEqual({ count: 2, withinMs: DAY_MS });
      },
      'exactStats',
    );

    test('malformed stats options are a JobValidationError naming the field', async () => {
      await s.expectValidation(s.outbox.stats(now(), { atRiskWithinMs: -1 }), 'stats.atRiskWithinMs');
      await s.expectValidation(
        s.outbox.stats(now(), { deadlineBucketsMs: [DAY_MS, HOUR] }),
        'stats.deadlineBucketsMs[1]',
      );
    });
  });

  describe('prune', () => {
    const rules = { olderThanMs: DAY_MS, returnWindowMs: 14 * DAY_MS };

    test(
      'deletes old final jobs, never open or dead ones, and keeps a delivered confirmation until its return window closes',
      async () => {
        const delivered = await s.deliver('ord_p_delivered');
        await s.killConfirm('ord_p_dead');
        const cancelled = await enqueue('ord_p_cancelled');
        await s.outbox.refund({ orderId: 'ord_p_cancelled' });
        const pending = await enqueue('ord_p_pending', {
          click: { token: 'tok_pp', clickedAt: now() - HOUR },
        });

        // Past the cancelled job's deadline and its age: it goes; the delivered one is inside its return window.
        s.clock.advance(8 * DAY_MS);
        expect(await s.outbox.prune({ now: now(), ...rules })).toBe(1);
        expect(await s.outbox.get(cancelled.id)).toBeNull();
        expect(await s.outbox.get(delivered.id)).not.toBeNull();

        // Past the return window: the delivered confirmation goes too; dead and pending jobs stay.
        s.clock.advance(7 * DAY_MS);
        expect(await s.outbox.prune({ now: now(), ...rules })).toBe(1);
        expect(await s.outbox.get(delivered.id)).toBeNull();
        const left = await s.outbox.listJobs();
        expect(left.map((j) => j.orderId).sort()).toEqual(['ord_p_dead', 'ord_p_pending']);
        expect(left.find((j) => j.id === pending.id)?.state).toBe('pending');
      },
      'prune',
      'lookup',
      'listJobs',
      'cancelPendingConfirm',
    );

    test(
      'a delivered refund and its confirmation are pruned together once the return window has closed',
      async () => {
        const confirm = await s.deliver('ord_p_twice');
        s.clock.advance(HOUR);
        await s.outbox.refund({ orderId: 'ord_p_twice' });
        const refund = await claimOne();
        await s.outbox.complete(refund, { now: now() });
        s.clock.advance(13 * DAY_MS);
        // Inside the return window: both stay, so a second refund is still a duplicate.
        expect(await s.outbox.prune({ now: now(), ...rules })).toBe(0);
        expect((await s.outbox.refund({ orderId: 'ord_p_twice' })).outcome).toBe('duplicate');
        s.clock.advance(2 * DAY_MS);
        expect(await s.outbox.prune({ now: now(), ...rules })).toBe(2);
        expect(await s.outbox.getByOrder('ord_p_twice')).toEqual([]);
        // Forgotten: a refund now needs its campaign named, as for any order this outbox never saw.
        await s.expectValidation(s.outbox.refund({ orderId: 'ord_p_twice' }), 'campaignId');
        expect(confirm.orderId).toBe('ord_p_twice');
      },
      'prune',
      'lookup',
    );

    test('malformed prune options are a JobValidationError naming the field', async () => {
      await s.expectValidation(
        s.outbox.prune({ now: now(), olderThanMs: -1, returnWindowMs: 0 }),
        'prune.olderThanMs',
      );
    });
  });

  describe('worker heart-beats', () => {
    const beat = (workerId: string, at: number, overrides: Partial<WorkerBeat> = {}): WorkerBeat => ({
      workerId,
      at,
      state: 'running',
      pausedUntil: null,
      pauseReason: null,
      version: '0.1.0',
      host: 'shop-1',
      pid: 4242,
      pausedAccounts: [],
      ...overrides,
    });

    test(
      'keeps the latest beat of each worker; lists those seen recently, newest first',
      async () => {
        await s.outbox.beat(beat('w1', now() - 10 * 60_000));
        await s.outbox.beat(beat('w2', now() - 30_000));
        const paused = beat('w1', now(), {
          state: 'paused',
          pausedUntil: now() + 60_000,
          pauseReason: '401: bad key',
        });
        await s.outbox.beat(paused);
        await s.outbox.beat(beat('w3', now() - DAY_MS));
        const seen = await s.outbox.workers({ now: now(), sinceMs: HOUR });
        expect(seen).toEqual([paused, beat('w2', now() - 30_000)]);
      },
      'heartbeats',
    );
  });
}
