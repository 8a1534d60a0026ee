import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../policy.ts';
import { claimJob, newConfirmJob } from './jobs.ts';
import {
  capWait,
  DEFAULT_WAIT_TIMING,
  earliestProbeBy,
  expireOverdueJob,
  isOverdue,
  lastChanceAt,
  mustGoNow,
  probeBy,
  waitTimingOf,
} from './wait-rule.ts';

const NOW = Date.UTC(2026, 0, 15, 12);
const timing = { sendMs: 30_000, claimLatencyMs: 1_000 };
const DEADLINE = NOW + 100_000;
const LAST = DEADLINE - 31_000;

function pendingJob() {
  const input = { orderId: 'ord_1', valueMicros: 5_000_000, click: { token: 'tok_1', clickedAt: NOW } };
  const job = newConfirmJob(input, { now: NOW, id: 'job_1' });
  return { ...job, deadline: DEADLINE };
}

describe('lastChanceAt', () => {
  it('lies the send duration and the claim latency before the deadline', () => {
    expect(lastChanceAt({ deadline: DEADLINE }, timing)).toBe(LAST);
  });

  it('is null for a job without a deadline', () => {
    expect(lastChanceAt({ deadline: null }, timing)).toBeNull();
  });

  it('follows the Dispatcher options it is built from', () => {
    const built = waitTimingOf({ sendTimeoutMs: 30_000, pollIntervalMs: 1_000 });
    expect(built).toEqual(DEFAULT_WAIT_TIMING);
  });
});

describe('capWait', () => {
  it('keeps a wait that ends at or before the last chance', () => {
    expect(capWait({ deadline: DEADLINE }, LAST, timing, NOW)).toEqual({ at: LAST, lastChance: false });
    expect(capWait({ deadline: DEADLINE }, NOW + 5, timing, NOW)).toEqual({ at: NOW + 5, lastChance: false });
  });

  it('cuts a wait past the last chance to the last chance, where a claim can still take the job', () => {
    expect(capWait({ deadline: DEADLINE }, DEADLINE + DAY_MS, timing, NOW)).toEqual({
      at: LAST,
      lastChance: true,
    });
  });

  it('gives no wait (expire) once the last chance was spent and the wait would pass it', () => {
    expect(capWait({ deadline: DEADLINE }, LAST + 1, timing, LAST)).toBeNull();
    expect(capWait({ deadline: DEADLINE }, DEADLINE - 1, timing, LAST + 10)).toBeNull();
  });

  it('never caps a job without a deadline', () => {
    expect(capWait({ deadline: null }, NOW + 365 * DAY_MS, timing, NOW)).toEqual({
      at: NOW + 365 * DAY_MS,
      lastChance: false,
    });
  });

  it('always leaves a claim latency and a send before the deadline, or expires (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30 * DAY_MS }),
        fc.integer({ min: 0, max: 400 * DAY_MS }),
        fc.integer({ min: 0, max: 30 * DAY_MS }),
        fc.integer({ min: 0, max: 120_000 }),
        fc.integer({ min: 0, max: 60_000 }),
        (untilDeadline, wantedIn, nowIn, sendMs, claimLatencyMs) => {
          const deadline = NOW + untilDeadline;
          const now = NOW + nowIn;
          const t = { sendMs, claimLatencyMs };
          const capped = capWait({ deadline }, now + wantedIn, t, now);
          if (capped === null) {
            // Only once the last chance has come, and only for a wait that passes it.
            expect(now).toBeGreaterThanOrEqual(deadline - sendMs - claimLatencyMs);
            expect(now + wantedIn).toBeGreaterThan(deadline - sendMs - claimLatencyMs);
            return;
          }
          expect(capped.at).toBeLessThanOrEqual(now + wantedIn);
          if (capped.at > now) expect(capped.at + claimLatencyMs + sendMs).toBeLessThanOrEqual(deadline);
          expect(capped.lastChance).toBe(capped.at !== now + wantedIn);
        },
      ),
    );
  });
});

describe('probeBy', () => {
  it('is the last chance while it is ahead, and now once it has come', () => {
    expect(probeBy({ deadline: DEADLINE }, timing, NOW)).toBe(LAST);
    expect(probeBy({ deadline: DEADLINE }, timing, LAST + 5)).toBe(LAST + 5);
    expect(probeBy({ deadline: null }, timing, NOW)).toBeNull();
  });

  it('takes the earliest over the jobs a pause holds back', () => {
    const jobs = [{ deadline: null }, { deadline: DEADLINE + 50 }, { deadline: DEADLINE }];
    expect(earliestProbeBy(jobs, timing, NOW)).toBe(LAST);
    expect(earliestProbeBy([{ deadline: null }], timing, NOW)).toBeNull();
  });
});

describe('mustGoNow', () => {
  it('holds from the last chance to the deadline, and not before or after', () => {
    expect(mustGoNow({ deadline: DEADLINE }, timing, LAST - 1)).toBe(false);
    expect(mustGoNow({ deadline: DEADLINE }, timing, LAST)).toBe(true);
    expect(mustGoNow({ deadline: DEADLINE }, timing, DEADLINE)).toBe(true);
    expect(mustGoNow({ deadline: DEADLINE }, timing, DEADLINE + 1)).toBe(false);
    expect(mustGoNow({ deadline: null }, timing, NOW)).toBe(false);
  });
});

describe('isOverdue and expireOverdueJob', () => {
  it('expires a pending job whose deadline passed, naming the deadline and the last error', () => {
    const job = { ...pendingJob(), lastError: 'HTTP 429: slow down' };
    const after = DEADLINE + 1;
    expect(isOverdue(job, DEADLINE)).toBe(false);
    expect(isOverdue(job, after)).toBe(true);
    const expired = expireOverdueJob(job, after);
    expect(expired).toMatchObject({ state: 'expired', updatedAt: after, lease: null, maybeAppliedAt: null });
    expect(expired.lastError).toBe(
      `deadline ${new Date(DEADLINE).toISOString()} passed before the job could be sent; last error: HTTP 429: slow down`,
    );
  });

  it('leaves a job whose lease is live to its worker, and marks a lapsed one maybe applied', () => {
    const job = pendingJob();
    const claimed = claimJob(job, { now: DEADLINE - 10, leaseMs: 100, token: 't' });
    expect(isOverdue(claimed, DEADLINE + 50)).toBe(false);
    expect(expireOverdueJob(claimed, DEADLINE + 50)).toBe(claimed);
    const lapsed = expireOverdueJob(claimed, DEADLINE + 200);
    expect(lapsed).toMatchObject({ state: 'expired', lease: null, maybeAppliedAt: DEADLINE - 10 });
  });

  it('never expires a finished job or one without a deadline', () => {
    const job = pendingJob();
    expect(isOverdue({ ...job, state: 'delivered' }, DEADLINE + DAY_MS)).toBe(false);
    expect(isOverdue({ ...job, state: 'dead' }, DEADLINE + DAY_MS)).toBe(false);
    expect(isOverdue({ ...job, deadline: null }, NOW + 400 * DAY_MS)).toBe(false);
  });
});
