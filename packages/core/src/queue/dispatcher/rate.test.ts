/**
 * The request rate (token buckets of one token) on an injected clock: known limits space sends evenly,
 * in total and per account; a 429 teaches its scope a rate from the second before it, which then grows
 * while no 429 comes.
 */
import { describe, expect, it } from 'vitest';
import { createRequestRate, type RateContext } from './rate.ts';

function rateWith(ctx: Omit<RateContext, 'clock' | 'wait'>) {
  let t = 0;
  const starts: Array<[string | null, number]> = [];
  const rate = createRequestRate({
    ...ctx,
    clock: () => t,
    wait: async (ms) => {
      t += ms;
    },
  });
  /** Sends of `account`, one after the other: when each went. */
  const send = async (account: string | null, count: number) => {
    for (let i = 0; i < count; i++) {
      await rate.take(account);
      starts.push([account, t]);
    }
  };
  return {
    rate,
    send,
    starts,
    advance: (ms: number) => {
      t += ms;
    },
    now: () => t,
  };
}

describe('createRequestRate', () => {
  it('lets every send go at once without limits or 429s', async () => {
    const { send, starts } = rateWith({ max: undefined, perAccountKeys: false });
    await send(null, 5);
    expect(starts.map(([, at]) => at)).toEqual([0, 0, 0, 0, 0]);
  });

  it('spaces sends evenly under maxRequestsPerSecond.total: never more in any second', async () => {
    const { send, starts } = rateWith({ max: { total: 4 }, perAccountKeys: false });
    await send('a', 3);
    await send('b', 3);
    expect(starts.map(([, at]) => at)).toEqual([0, 250, 500, 750, 1_000, 1_250]);
  });

  it('keeps each account below maxRequestsPerSecond.perAccount, accounts apart', async () => {
    const { send, starts } = rateWith({ max: { perAccount: 2 }, perAccountKeys: true });
    await send('a', 3);
    // b's first send does not wait for a's turns.
    await send('b', 2);
    expect(starts).toEqual([
      ['a', 0],
      ['a', 500],
      ['a', 1_000],
      ['b', 1_000],
      ['b', 1_500],
    ]);
  });

  it('after a 429, keeps the scope to 90 % of what was let through in the second before, then grows 5 % a second it was used', async () => {
    const { rate, send, starts, advance, now } = rateWith({ max: undefined, perAccountKeys: false });
    for (let i = 0; i < 20; i++) {
      if (i > 0) advance(50);
      await send(null, 1);
      rate.answered(null, 200);
    }
    // Answers older than a second, and requests that got no answer, do not count.
    advance(60);
    rate.answered(null, null);
    rate.answered(null, 429);
    expect(rate.learned(null)).toBe(16); // 18 let through in the last ten tenths of a second (t ≥ 100 ms)
    // The other 429s of the burst teach nothing more.
    rate.answered(null, 429);
    expect(rate.learned(null)).toBe(16);
    starts.length = 0;
    await send(null, 3);
    const gaps = starts.slice(1).map(([, at], i) => at - (starts[i]?.[1] as number));
    expect(gaps.every((gap) => Math.abs(gap - 1_000 / 16) < 1e-6)).toBe(true);
    // A second in which the rate was not used (no answers) does not let it grow.
    advance(1_000);
    await send(null, 1);
    expect(rate.learned(null)).toBe(16);
    // A second of answers at the rate, none 429: it grows 5 % (16.8, not the 17 of "at least 1"), once.
    for (let i = 0; i < 20; i++) {
      await send(null, 1);
      rate.answered(null, 200);
    }
    expect(rate.learned(null)).toBeCloseTo(16.8, 5);
    // A 429 again while keeping to it: that rate was too much.
    advance(1_000);
    rate.answered(null, 429);
    expect(rate.learned(null)).toBeLessThan(16.8);
    expect(now()).toBeGreaterThan(0);
  });

  it('learns per account with per-account keys, for all sends without', async () => {
    const per = rateWith({ max: undefined, perAccountKeys: true });
    for (let i = 0; i < 10; i++) per.rate.answered('a', 200);
    per.rate.answered('a', 429);
    expect(per.rate.learned('a')).toBe(9);
    expect(per.rate.learned('b')).toBeNull();
    const all = rateWith({ max: undefined, perAccountKeys: false });
    for (let i = 0; i < 10; i++) all.rate.answered('a', 200);
    all.rate.answered('a', 429);
    expect(all.rate.learned('b')).toBe(9);
  });
});
