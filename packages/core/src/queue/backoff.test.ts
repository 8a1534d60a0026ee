import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.ts';

describe('backoffDelay', () => {
  it('doubles the ceiling with each attempt until maxMs', () => {
    const top = { baseMs: 1_000, maxMs: 10_000, random: () => 0.999_999 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, top))).toEqual([
      999, 1_999, 3_999, 7_999, 9_999, 9_999,
    ]);
  });

  it('spreads delays over the whole interval (full jitter) and can be zero', () => {
    expect(backoffDelay(3, { baseMs: 1_000, maxMs: 60_000, random: () => 0 })).toBe(0);
    expect(backoffDelay(3, { baseMs: 1_000, maxMs: 60_000, random: () => 0.5 })).toBe(2_000);
  });

  it('always stays within [0, maxMs] whatever the attempt and random value (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -5, max: 100_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 86_400_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, baseMs, maxMs, r) => {
          const delay = backoffDelay(attempt, { baseMs, maxMs, random: () => r });
          expect(Number.isSafeInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(maxMs);
        },
      ),
    );
  });
});
