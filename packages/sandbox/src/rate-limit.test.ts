import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { RateLimiter } from './rate-limit.ts';

/** Non-decreasing request times (ms), as the sandbox clock gives them. */
const times = fc.array(fc.integer({ min: 0, max: 700 }), { minLength: 1, maxLength: 200 }).map((gaps) => {
  let t = 0;
  return gaps.map((gap) => {
    t += gap;
    return t;
  });
});

describe('RateLimiter', () => {
  test('admits at most N requests in any sliding second, and refuses only when N are in it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), times, (limit, at) => {
        const limiter = new RateLimiter(limit, null);
        const admitted: number[] = [];
        for (const t of at) {
          const inWindow = admitted.filter((a) => a > t - 1000).length;
          const refusal = limiter.admit('k', t);
          if (refusal === null) admitted.push(t);
          expect(refusal === null, `at ${t} with ${inWindow} in the window`).toBe(inWindow < limit);
          if (refusal !== null) {
            expect(refusal.status).toBe(429);
            expect(refusal.headers['retry-after']).toBe('1');
          }
        }
      }),
    );
  });

  test('keeps a window per key', () => {
    const limiter = new RateLimiter(1, null);
    expect(limiter.admit('a', 0)).toBeNull();
    expect(limiter.admit('b', 0)).toBeNull();
    expect(limiter.admit('a', 999)?.status).toBe(429);
    expect(limiter.admit('a', 1000)).toBeNull();
  });

  test('with a fixed Retry-After, refuses the key until it has passed, counting down', () => {
    const limiter = new RateLimiter(1, 30);
    expect(limiter.admit('k', 0)).toBeNull();
    expect(limiter.admit('k', 100)?.headers['retry-after']).toBe('30');
    expect(limiter.admit('k', 10_100)?.headers['retry-after']).toBe('20');
    expect(limiter.admit('k', 30_099)?.headers['retry-after']).toBe('1');
    expect(limiter.admit('k', 30_100)).toBeNull();
    expect(limiter.admit('other', 200)).toBeNull();
  });

  test('says the limit and the wait, never the key', () => {
    const limiter = new RateLimiter(2, null);
    limiter.admit('pbsk_secret', 0);
    limiter.admit('pbsk_secret', 0);
    const refusal = limiter.admit('pbsk_secret', 0);
    expect(refusal?.detail).toBe(
      'rate limit exceeded: at most 2 requests per second per API key; retry after 1 s',
    );
  });
});
