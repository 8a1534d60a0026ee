/**
 * Differential property test: random operation sequences run against the SQLite outbox and against the
 * memory outbox of `@postback/core` (the reference implementation of the contract), step by step. Every
 * result and, after every step, every job of every order and the stats must be the same — up to store-
 * assigned ids and random lease tokens, which are compared by identity (order, kind) and presence.
 *
 * Claims take every due job (limit ≥ the most jobs two orders can have) and are compared as sets: which
 * due job goes first under a smaller limit is not part of the contract (memory hands them out in creation
 * order, SQLite oldest `nextAttemptAt` first, the order its index gives without sorting a backlog).
 */
import { createMemoryOutbox, DAY_MS, type Job, type Outbox } from '@postback/core';
import { createFakeClock } from '@postback/core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSqliteOutbox } from './outbox.ts';

const ORDERS = ['ord_a', 'ord_b'];
/** Every job two orders can have: a confirm and a refund each. */
const ALL = ORDERS.length * 2;
const byIdentity = (a: Job, b: Job) => `${a.orderId}/${a.kind}`.localeCompare(`${b.orderId}/${b.kind}`);
const order = fc.constantFrom(...ORDERS);

const operation = fc.oneof(
  fc.record({
    op: fc.constant('confirm' as const),
    orderId: order,
    ageMs: fc.integer({ min: 0, max: 8 * DAY_MS }),
  }),
  fc.record({ op: fc.constant('refund' as const), orderId: order, withCampaign: fc.boolean() }),
  fc.record({ op: fc.constant('claim' as const) }),
  fc.record({
    op: fc.constant('settle' as const),
    pick: fc.nat(),
    how: fc.constantFrom('complete', 'retry', 'uncounted', 'dead', 'expired', 'release', 'extend'),
  }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 120_000 }) }),
  fc.record({ op: fc.constant('replay' as const) }),
  fc.record({ op: fc.constant('purge' as const) }),
);

/** A job with store-specific values replaced: the id by what identifies it, the lease token by presence. */
function normalize(job: Job): unknown {
  return {
    ...job,
    id: `${job.orderId}/${job.kind}`,
    lease: job.lease === null ? null : { expiresAt: job.lease.expiresAt },
  };
}

function normalizeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalizeValue);
  if (value !== null && typeof value === 'object') {
    if ('kind' in value && 'orderId' in value) return normalize(value as Job);
    if ('job' in value) return { ...value, job: normalize((value as { job: Job }).job) };
  }
  return value;
}

/** What a call did: its value (normalized) or the class and message of its error. */
async function outcome(call: Promise<unknown>): Promise<unknown> {
  try {
    return { ok: normalizeValue(await call) };
  } catch (error) {
    return { error: (error as Error).name, message: (error as Error).message };
  }
}

describe('SQLite outbox against the memory outbox (reference)', () => {
  it('answers every operation of any sequence exactly as the reference does (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 40, size: 'max' }), async (ops) => {
        const clock = createFakeClock();
        const policy = { returnWindowMs: 14 * DAY_MS };
        const reference = createMemoryOutbox({ now: clock.now, policy });
        const sqlite = createSqliteOutbox({ filename: ':memory:', now: clock.now, policy });
        const stores: Array<{ outbox: Outbox; held: Job[] }> = [
          { outbox: reference, held: [] },
          { outbox: sqlite, held: [] },
        ];
        try {
          for (const step of ops) {
            const results: unknown[] = [];
            for (const store of stores) {
              const { outbox, held } = store;
              const now = clock.now();
              switch (step.op) {
                case 'confirm':
                  results.push(
                    await outcome(
                      outbox.confirm({
                        orderId: step.orderId,
                        valueMicros: 1_000_000,
                        click: { token: `tok_${step.orderId}`, clickedAt: now - step.ageMs },
                      }),
                    ),
                  );
                  break;
                case 'refund':
                  results.push(
                    await outcome(
                      outbox.refund({
                        orderId: step.orderId,
                        ...(step.withCampaign ? { campaignId: 'cmp_1' } : {}),
                      }),
                    ),
                  );
                  break;
                case 'claim': {
                  const claimed = (await outbox.claim({ now, limit: ALL, leaseMs: 30_000 })).sort(byIdentity);
                  held.push(...claimed);
                  results.push(normalizeValue(claimed));
                  break;
                }
                case 'settle': {
                  if (held.length === 0) break;
                  const job = held.splice(step.pick % held.length, 1)[0] as Job;
                  const result =
                    step.how === 'complete'
                      ? outbox.complete(job, { now, campaignId: 'cmp_9' })
                      : step.how === 'retry' || step.how === 'uncounted'
                        ? outbox.retry(job, {
                            now,
                            nextAttemptAt: now + 5_000,
                            error: 'HTTP 503',
                            countAttempt: step.how === 'retry',
                          })
                        : step.how === 'release'
                          ? outbox.release([job], now)
                          : step.how === 'extend'
                            ? outbox.extendLease(job, { now, leaseMs: 30_000 })
                            : outbox.fail(job, { now, state: step.how, reason: 'HTTP 422' });
                  results.push(await outcome(result));
                  break;
                }
                case 'advance':
                  break;
                case 'replay':
                  results.push(await outcome(outbox.replay({ all: true }, now)));
                  break;
                case 'purge':
                  results.push(await outcome(outbox.purgeDead()));
                  break;
              }
              const jobs = await Promise.all(ORDERS.map((orderId) => outbox.getByOrder(orderId)));
              const stats = await outbox.stats(now);
              const dead = await outbox.listDead();
              results.push(
                normalizeValue(jobs.flat()),
                {
                  ...stats,
                  nearestDeadline: stats.nearestDeadline && { ...stats.nearestDeadline, id: null },
                },
                normalizeValue(dead),
              );
            }
            if (step.op === 'advance') clock.advance(step.ms);
            const half = results.length / 2;
            expect(results.slice(half)).toEqual(results.slice(0, half));
          }
        } finally {
          await reference.close();
          await sqlite.close();
        }
      }),
      { numRuns: 200 },
    );
  }, 60_000);
});
