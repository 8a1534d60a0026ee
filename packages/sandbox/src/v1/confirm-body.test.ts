/**
 * The hand-written parser of s2s confirmation bodies (the hot path) must accept exactly the bodies the
 * ad service's API describes (`click_token` and `order_id` strings, `value_micros` an integer of micros,
 * nothing else) and name the first bad field in its 400 — checked on generated JSON bodies against a
 * plain reading of the spec written here (not the client's schema), including the edge cases (empty and
 * 2,048/2,049-character strings, floats, unsafe integers, -0, unknown keys).
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { HttpProblem } from '../problem.ts';
import { parseConfirmBody } from './confirm-body.ts';

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
    return { status: e.status, field: e.detail.slice(0, e.detail.indexOf(':')) };
  }
}

/** The spec's confirmation payload, read plainly: the first field that is wrong, in payload order. */
function reference(json: Record<string, unknown>): unknown {
  const text = (v: unknown) => typeof v === 'string' && v.length >= 1 && v.length <= 2048;
  if (!text(json.click_token)) return { status: 400, field: 'click_token' };
  if (!text(json.order_id)) return { status: 400, field: 'order_id' };
  const micros = json.value_micros;
  if (typeof micros !== 'number' || !Number.isSafeInteger(micros) || micros < 0)
    return { status: 400, field: 'value_micros' };
  const unknown = Object.keys(json).find((k) => !['click_token', 'order_id', 'value_micros'].includes(k));
  if (unknown !== undefined) return { status: 400, field: unknown };
  return { ok: { click_token: json.click_token, order_id: json.order_id, value_micros: micros } };
}

test('accepts exactly the bodies of the spec and names the first bad field', () => {
  fc.assert(
    fc.property(fc.oneof(body, validBody), (input) => {
      // Bodies arrive through JSON.parse, so compare on what JSON can carry.
      const json = JSON.parse(JSON.stringify(input)) as Record<string, unknown>;
      expect(outcome(() => parseConfirmBody(json))).toEqual(reference(json));
    }),
    { numRuns: 2_000 },
  );
});
