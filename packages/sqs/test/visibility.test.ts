/** Property tests of the visibility arithmetic: never beyond SQS's 12 hours, never past the deadline. */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import {
  leaseVisibilitySeconds,
  retryVisibilitySeconds,
  SQS_MAX_VISIBILITY_SECONDS,
} from '../src/visibility.ts';

const now = 1_800_000_000_000;

test('a retry comes back no later than its nextAttemptAt, its deadline, or the end of SQS’s 12 hours', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 40 * 86_400_000 }),
      fc.option(fc.integer({ min: -86_400_000, max: 40 * 86_400_000 }), { nil: null }),
      fc.integer({ min: 0, max: 43_200_000 }),
      (delay, deadlineOffset, heldFor) => {
        const seconds = retryVisibilitySeconds({
          now,
          nextAttemptAt: now + delay,
          deadline: deadlineOffset === null ? null : now + deadlineOffset,
          receivedAt: now - heldFor,
        });
        expect(Number.isInteger(seconds)).toBe(true);
        expect(seconds).toBeGreaterThanOrEqual(0);
        // SQS rejects a visibility beyond 12 hours from the receive: stay inside it.
        expect(now + seconds * 1000).toBeLessThanOrEqual(now - heldFor + SQS_MAX_VISIBILITY_SECONDS * 1000);
        expect(seconds * 1000).toBeLessThan(delay + 1000);
        if (deadlineOffset !== null) expect(seconds * 1000).toBeLessThan(Math.max(0, deadlineOffset) + 1000);
      },
    ),
  );
});

test('a 30-hour backoff on a message received just now is cut to just under 12 hours', () => {
  expect(
    retryVisibilitySeconds({ now, nextAttemptAt: now + 30 * 3_600_000, deadline: null, receivedAt: now }),
  ).toBe(SQS_MAX_VISIBILITY_SECONDS - 1);
});

test('a retry due after the deadline comes back at the deadline, so the job can be expired in time', () => {
  expect(
    retryVisibilitySeconds({ now, nextAttemptAt: now + 3_600_000, deadline: now + 60_000, receivedAt: now }),
  ).toBe(60);
});

test('a lease is at least one second and rounds up to whole seconds', () => {
  expect(leaseVisibilitySeconds(1, now, now)).toBe(1);
  expect(leaseVisibilitySeconds(30_001, now, now)).toBe(31);
  expect(leaseVisibilitySeconds(20 * 3_600_000, now, now - 11 * 3_600_000)).toBe(3_599);
});
