/**
 * Property tests of the fault configuration parser behind POST /_sandbox/faults: every in-range setting
 * is kept as given, every out-of-range one is a 400 naming its field.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { MAX_RETRY_AFTER_S, NO_FAULTS, parseFaultConfig } from './faults.ts';
import { HttpProblem } from './problem.ts';

const RATES = ['error_rate', 'reset_rate', 'reset_after_rate'] as const;

describe('parseFaultConfig', () => {
  test('keeps every in-range setting and fills the rest with no faults', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            error_rate: fc.double({ min: 0, max: 1, noNaN: true }),
            reset_rate: fc.double({ min: 0, max: 1, noNaN: true }),
            reset_after_rate: fc.double({ min: 0, max: 1, noNaN: true }),
            error_status: fc.integer({ min: 400, max: 599 }),
            latency_ms: fc.integer({ min: 0, max: 60_000 }),
            retry_after_s: fc.integer({ min: 0, max: MAX_RETRY_AFTER_S }),
            fail_next: fc.integer({ min: 0, max: 1_000_000 }),
            rate_limit_per_s: fc.integer({ min: 1, max: 100_000 }),
          },
          { requiredKeys: [] },
        ),
        (body) => {
          expect(parseFaultConfig(body)).toEqual({ ...NO_FAULTS, ...body });
        },
      ),
    );
  });

  test('refuses a rate limit that is not an integer from 1 to 100000 with a 400 naming the field', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ max: 0 }),
          fc.integer({ min: 100_001 }),
          fc.double({ noInteger: true }),
          fc.string(),
          fc.constant(null),
        ),
        (value) => {
          expect(() => parseFaultConfig({ rate_limit_per_s: value })).toThrow(
            expect.objectContaining({ status: 400, detail: expect.stringMatching(/^rate_limit_per_s: /) }),
          );
        },
      ),
    );
  });

  test('refuses a Retry-After that is not an integer from 0 to 999999999 s with a 400 naming the field', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ max: -1 }),
          fc.integer({ min: MAX_RETRY_AFTER_S + 1 }),
          fc.double({ noInteger: true }),
          fc.string(),
        ),
        (value) => {
          expect(() => parseFaultConfig({ retry_after_s: value })).toThrow(
            expect.objectContaining({ status: 400, detail: expect.stringMatching(/^retry_after_s: /) }),
          );
        },
      ),
    );
  });

  test('refuses a rate outside 0..1 with a 400 naming the field', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RATES),
        fc.oneof(
          fc.double({ min: 1, max: 1e9, minExcluded: true, noNaN: true }),
          // Below zero; not `max: 0, maxExcluded`, which still yields -0 (a valid rate: -0 === 0).
          fc.double({ max: -Number.MIN_VALUE, noNaN: true }),
          fc.constant(Number.NaN),
          fc.string(),
        ),
        (field, value) => {
          let problem: unknown;
          try {
            parseFaultConfig({ [field]: value });
          } catch (e) {
            problem = e;
          }
          expect(problem).toBeInstanceOf(HttpProblem);
          expect(problem).toMatchObject({
            status: 400,
            detail: expect.stringMatching(new RegExp(`^${field}: `)),
          });
        },
      ),
    );
  });
});
