/** The cause `status` gives a pause: recorded, from its status, or from our client's leading status only. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { causeOfPause } from './pause-cause.ts';

const STATUS_CAUSE: Array<[number, string]> = [
  [401, 'auth'],
  [403, 'auth'],
  [429, 'rate-limit'],
  [404, 'misconfigured'],
  [409, 'systematic-refusal'],
  [422, 'systematic-refusal'],
];

describe('causeOfPause', () => {
  it('reads a global pause by the status our client put first, whatever words the service added after it', () => {
    fc.assert(
      fc.property(fc.constantFrom(...STATUS_CAUSE), fc.string(), ([status, cause], detail) => {
        expect(causeOfPause({ reason: `Ad service answered ${status}: ${detail}` })).toBe(cause);
      }),
    );
  });

  it('never finds a cause in words the service wrote, even words that look like our prefix', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...STATUS_CAUSE), (before, [status]) => {
        const reason = `${before}Ad service answered ${status}: x`;
        fc.pre(!reason.startsWith('Ad service answered '));
        expect(causeOfPause({ reason })).toBe('unknown');
      }),
    );
  });

  it('prefers a recorded cause, then the status an account pause keeps (null: no key known)', () => {
    expect(causeOfPause({ cause: 'rate-limited', status: 401, reason: 'x' })).toBe('rate-limit');
    expect(causeOfPause({ cause: 'systematic-refusal', reason: 'Ad service answered 429: x' })).toBe(
      'systematic-refusal',
    );
    expect(causeOfPause({ status: 429, reason: 'Ad service answered 401: x' })).toBe('rate-limit');
    expect(causeOfPause({ status: null, reason: 'no API key for account shop-1' })).toBe('auth');
    expect(causeOfPause({ cause: 'something-new', reason: 'Ad service answered 403: x' })).toBe('auth');
    expect(causeOfPause({ reason: null })).toBe('unknown');
  });
});
