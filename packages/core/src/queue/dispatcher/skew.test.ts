import { describe, expect, it } from 'vitest';
import type { ConfirmJob, Job, RefundJob } from '../job-types.ts';
import type { DispatcherEvents } from './events.ts';
import { CLOCK_SKEW_TOLERANCE_MS, createSkewCheck, deadlineWithSkew, readSkew } from './skew.ts';

const NOW = 1_800_000_000_000;
const DAY = 86_400_000;

const confirm = (over: Partial<ConfirmJob> = {}): Job =>
  ({
    id: 'j1',
    kind: 'confirm',
    orderId: 'o1',
    createdAt: NOW - 1_000,
    clickedAt: NOW - 60_000,
    deadline: NOW + 6 * DAY,
    ...over,
  }) as ConfirmJob;

describe('readSkew', () => {
  it('reads no skew from stamps in the past or within the tolerance', () => {
    expect(readSkew(confirm(), NOW).skewMs).toBe(0);
    expect(readSkew(confirm({ createdAt: NOW + CLOCK_SKEW_TOLERANCE_MS }), NOW).skewMs).toBe(0);
  });

  it('reads the latest stamp past the tolerance, and which it is', () => {
    expect(readSkew(confirm({ createdAt: NOW + 90_000 }), NOW)).toEqual({
      skewMs: 90_000,
      stamp: 'createdAt',
    });
    expect(readSkew(confirm({ createdAt: NOW + 10_000, clickedAt: NOW + 240_000 }), NOW)).toEqual({
      skewMs: 240_000,
      stamp: 'clickedAt',
    });
    const refund = { id: 'r1', kind: 'refund', createdAt: NOW + 5_000, deadline: null } as RefundJob;
    expect(readSkew(refund, NOW)).toEqual({ skewMs: 5_000, stamp: 'createdAt' });
  });
});

describe('deadlineWithSkew', () => {
  it('moves a deadline back by the skew, never later, and leaves none alone', () => {
    expect(deadlineWithSkew(NOW, 60_000)).toBe(NOW - 60_000);
    expect(deadlineWithSkew(NOW, -60_000)).toBe(NOW);
    expect(deadlineWithSkew(null, 60_000)).toBeNull();
  });
});

describe('createSkewCheck', () => {
  it('warns once per job, and keeps the deadline moved back once the stamps have passed', () => {
    let now = NOW;
    const warnings: Array<DispatcherEvents['clock-skew']> = [];
    const check = createSkewCheck({
      now: () => now,
      emit: ((name: string, payload: DispatcherEvents['clock-skew']) => {
        if (name === 'clock-skew') warnings.push(payload);
      }) as never,
    });
    const job = confirm({ clickedAt: NOW + 180_000 });
    expect(check(job)).toBe((job.deadline as number) - 180_000);
    now += 60_000;
    // Seen again, the stamp is only 120 s ahead: the deadline stays moved back by the most seen.
    expect(check(job)).toBe((job.deadline as number) - 180_000);
    now += DAY;
    expect(check(job)).toBe((job.deadline as number) - 180_000);
    expect(warnings).toEqual([
      { job, skewMs: 180_000, stamp: 'clickedAt', deadline: job.deadline! - 180_000 },
    ]);
    // Another job without skew keeps its own deadline, and warns of nothing.
    expect(check(confirm({ id: 'j2' }))).toBe(NOW + 6 * DAY);
    expect(warnings).toHaveLength(1);
  });
});
