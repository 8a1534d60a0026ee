/**
 * The hand-written parser of s2s confirmation bodies (the hot path) must answer exactly as the client's
 * `conversionConfirmSchema`: same acceptance, same parsed values, same 400 detail — checked on generated
 * JSON bodies, including the edge cases (empty and 2,048/2,049-character strings, floats, unsafe
 * integers, -0, unknown keys).
 */
import { conversionConfirmSchema } from '@postback/client';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { HttpProblem } from '../src/problem.ts';
import { parseConfirmBody } from '../src/v1/confirm-body.ts';
import { parseWith } from '../src/validate.ts';

const value = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom('', 'x'.repeat(2048), 'x'.repeat(2049)),
  fc.integer(),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(-0, 0, 1.5, -1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, 1e300),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
);

const body = fc.record(
  {
    click_token: value,
    order_id: value,
    value_micros: value,
    extra: value,
    [`x${'y'}`]: value,
  },
  { requiredKeys: [] },
);

const validBody = fc.record({
  click_token: fc.string({ minLength: 1, maxLength: 2048 }),
  order_id: fc.string({ minLength: 1, maxLength: 64 }),
  value_micros: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
});

function outcome(parse: () => unknown): unknown {
  try {
    return { ok: parse() };
  } catch (e) {
    if (!(e instanceof HttpProblem)) throw e;
    return { status: e.status, detail: e.detail };
  }
}

test('answers every generated body exactly as the client schema does', () => {
  fc.assert(
    fc.property(fc.oneof(body, validBody), (input) => {
      // Bodies arrive through JSON.parse, so compare on what JSON can carry.
      const json = JSON.parse(JSON.stringify(input)) as Record<string, unknown>;
      expect(outcome(() => parseConfirmBody(json))).toEqual(
        outcome(() => parseWith(conversionConfirmSchema, json)),
      );
    }),
    { numRuns: 2_000 },
  );
});
