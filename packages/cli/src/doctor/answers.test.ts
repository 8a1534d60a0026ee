/** The clock check's arithmetic: a `Date` has whole seconds, and the answer was made during the round trip. */
import { describe, expect, it } from 'vitest';
import { clockSkew } from './answers.ts';

describe('clockSkew', () => {
  it('takes the answer with the shortest round trip and counts from the middle of its second', () => {
    const skew = clockSkew([
      { sentAt: 10_000, receivedAt: 14_000, status: 401, date: 7_210_000 },
      { sentAt: 20_000, receivedAt: 20_040, status: 200, date: 7_220_000 },
      { sentAt: 30_000, receivedAt: 30_002, status: 200, date: null },
    ]);
    expect(skew).toEqual({ skewMs: 7_220_000 + 500 - 20_020, uncertaintyMs: 520 });
  });

  it('is null when no answer carried a Date', () => {
    expect(clockSkew([{ sentAt: 1, receivedAt: 2, status: 401, date: null }])).toBeNull();
    expect(clockSkew([])).toBeNull();
  });
});
