/**
 * Random operation sequences against the memory outbox (fast-check), checking after every step the
 * invariants the whole system relies on: one confirm and one refund per order, final states stay final,
 * a refund is never handed out before its confirmation was delivered (or may have been applied), a
 * job's first maybe-applied time never changes, a confirm that may have been applied is never answered
 * "cancelled" or "not-charged", and stats agree with the jobs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../policy.ts';
import { createFakeClock } from '../testing/fake-clock.ts';
import type { Job, JobState } from './job-types.ts';
import { isFinalState } from './jobs.ts';
import { createMemoryOutbox } from './memory-outbox.ts';
import { JobValidationError } from './validation.ts';

const ORDERS = ['ord_a', 'ord_b', 'ord_c'];
const order = fc.constantFrom(...ORDERS);

const operation = fc.oneof(
  fc.record({
    op: fc.constant('confirm' as const),
    orderId: order,
    ageMs: fc.integer({ min: 0, max: 8 * DAY_MS }),
  }),
  fc.record({ op: fc.constant('refund' as const), orderId: order, withCampaign: fc.boolean() }),
  fc.record({ op: fc.constant('claim' as const), limit: fc.integer({ min: 1, max: 4 }) }),
  fc.record({
    op: fc.constant('settle' as const),
    pick: fc.nat(),
    how: fc.constantFrom(
      'complete',
      'retry',
      'uncounted',
      'dead',
      'expired',
      'release',
      'extend',
      'lost',
      'deadLost',
      'expiredLost',
    ),
  }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 120_000 }) }),
  fc.record({ op: fc.constant('replay' as const) }),
);

describe('memory outbox under random operations', () => {
  it('keeps every queue invariant whatever the sequence (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 60 }), async (ops) => {
        const clock = createFakeClock();
        const outbox = createMemoryOutbox({ now: clock.now });
        const held: Job[] = []; // jobs as claimed by "workers", possibly stale
        const finalSeen = new Map<string, JobState>();
        const appliedSeen = new Map<string, number>();
        for (const step of ops) {
          switch (step.op) {
            case 'confirm':
              await outbox.confirm({
                orderId: step.orderId,
                valueMicros: 1_000_000,
                click: { token: `tok_${step.orderId}`, clickedAt: clock.now() - step.ageMs },
              });
              break;
            case 'refund': {
              const before = (await outbox.getByOrder(step.orderId)).find((j) => j.kind === 'confirm');
              const result = await outbox
                .refund({ orderId: step.orderId, ...(step.withCampaign ? { campaignId: 'cmp_1' } : {}) })
                .catch((err) => expect(err).toBeInstanceOf(JobValidationError));
              // A confirmation that may have been applied is reversed, never written off.
              if (result !== undefined && before?.maybeAppliedAt != null && before.state !== 'cancelled')
                expect(['enqueued', 'duplicate', 'updated']).toContain(result.outcome);
              break;
            }
            case 'claim': {
              const claimed = await outbox.claim({ now: clock.now(), limit: step.limit, leaseMs: 30_000 });
              for (const job of claimed) {
                expect(job.state).toBe('inflight');
                if (job.kind === 'refund') {
                  const confirm = (await outbox.getByOrder(job.orderId)).find((j) => j.kind === 'confirm');
                  // A refund is never handed out before its confirmation was delivered, or may have been.
                  if (confirm !== undefined && confirm.maybeAppliedAt === null)
                    expect(confirm.state).toBe('delivered');
                  if (confirm !== undefined) expect(['pending', 'inflight']).not.toContain(confirm.state);
                  expect(job.deadline).not.toBeNull();
                }
              }
              held.push(...claimed);
              break;
            }
            case 'settle': {
              if (held.length === 0) break;
              const [job] = held.splice(step.pick % held.length, 1) as [Job];
              const now = clock.now();
              if (step.how === 'complete') await outbox.complete(job, { now, campaignId: 'cmp_2' });
              if (step.how === 'retry')
                await outbox.retry(job, { now, nextAttemptAt: now + 5_000, error: 'HTTP 503' });
              if (step.how === 'uncounted') {
                await outbox.retry(job, { now, nextAttemptAt: now, error: '401', countAttempt: false });
              }
              if (step.how === 'dead') await outbox.fail(job, { now, state: 'dead', reason: 'HTTP 422' });
              if (step.how === 'expired') await outbox.fail(job, { now, state: 'expired', reason: 'late' });
              if (step.how === 'release') await outbox.release([job], now);
              if (step.how === 'extend') await outbox.extendLease(job, { now, leaseMs: 30_000 });
              if (step.how === 'lost') {
                const result = { now, nextAttemptAt: now + 5_000, error: 'timeout', maybeApplied: true };
                await outbox.retry(job, result);
              }
              if (step.how === 'deadLost')
                await outbox.fail(job, { now, state: 'dead', reason: 'lost', maybeApplied: true });
              if (step.how === 'expiredLost')
                await outbox.fail(job, { now, state: 'expired', reason: 'lost', maybeApplied: true });
              break;
            }
            case 'advance':
              clock.advance(step.ms);
              break;
            case 'replay':
              await outbox.replay({ all: true }, clock.now());
              break;
          }

          // Invariants after every step.
          const jobs = (await Promise.all(ORDERS.map((o) => outbox.getByOrder(o)))).flat();
          for (const orderId of ORDERS) {
            const mine = jobs.filter((j) => j.orderId === orderId);
            expect(mine.filter((j) => j.kind === 'confirm').length).toBeLessThanOrEqual(1);
            expect(mine.filter((j) => j.kind === 'refund').length).toBeLessThanOrEqual(1);
          }
          for (const job of jobs) {
            expect(job.attempts).toBeGreaterThanOrEqual(0);
            expect(job.state === 'inflight').toBe(job.lease !== null);
            if (job.kind === 'confirm') expect(job.deadline).not.toBeNull();
            const before = finalSeen.get(job.id);
            if (before !== undefined) expect(job.state).toBe(before); // final states stay final
            if (isFinalState(job.state)) finalSeen.set(job.id, job.state);
            const applied = appliedSeen.get(job.id);
            if (applied !== undefined) expect(job.maybeAppliedAt).toBe(applied); // the first time is kept
            if (job.maybeAppliedAt !== null) appliedSeen.set(job.id, job.maybeAppliedAt);
          }
          const { counts } = await outbox.stats(clock.now());
          for (const state of Object.keys(counts) as JobState[]) {
            expect(counts[state]).toBe(jobs.filter((j) => j.state === state).length);
          }
        }
        await outbox.close();
      }),
      { numRuns: 150 },
    );
  });
});
