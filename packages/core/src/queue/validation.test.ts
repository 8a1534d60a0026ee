import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PostbackError } from '../errors.ts';
import {
  DEFAULT_MAX_CLOCK_SKEW_MS,
  JobValidationError,
  MAX_CLICK_TOKEN_LENGTH,
  MAX_ORDER_ID_LENGTH,
  validateConfirmInput,
  validateRefundInput,
} from './validation.ts';

const NOW = Date.UTC(2026, 0, 15, 12);
const good = () => ({
  orderId: 'ord_1',
  valueMicros: 12_340_000,
  click: { token: 'tok_abc-123', clickedAt: NOW - 60_000 },
});

function fieldOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(JobValidationError);
    return (err as JobValidationError).field;
  }
  throw new Error('expected a JobValidationError');
}

describe('validateConfirmInput', () => {
  it('returns a clean copy holding only the known fields', () => {
    const input = { ...good(), extra: 'ignored', click: { ...good().click, extra: 1 } };
    expect(validateConfirmInput(input, { now: NOW })).toEqual(good());
  });

  it('throws a JobValidationError that is a PostbackError with code job_validation', () => {
    try {
      validateConfirmInput({ ...good(), orderId: '' }, { now: NOW });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(PostbackError);
      expect(err).toMatchObject({ name: 'JobValidationError', code: 'job_validation', field: 'orderId' });
      expect((err as Error).message).toContain('orderId');
    }
  });

  it.each([
    ['orderId', { orderId: '' }],
    ['orderId', { orderId: '   ' }],
    ['orderId', { orderId: 42 }],
    ['orderId', { orderId: 'a'.repeat(MAX_ORDER_ID_LENGTH + 1) }],
    ['orderId', { orderId: 'ord\n1' }],
    ['orderId', { orderId: 'ord\u00851' }],
    ['valueMicros', { valueMicros: 1.5 }],
    ['valueMicros', { valueMicros: -1 }],
    ['valueMicros', { valueMicros: '12.34' }],
    ['valueMicros', { valueMicros: Number.MAX_SAFE_INTEGER + 1 }],
    ['valueMicros', { valueMicros: Number.NaN }],
    ['click', { click: null }],
    ['click', { click: 'tok' }],
    ['click.token', { click: { token: '', clickedAt: NOW } }],
    ['click.token', { click: { token: 'has space', clickedAt: NOW } }],
    ['click.token', { click: { token: '<script>', clickedAt: NOW } }],
    ['click.token', { click: { token: 'é', clickedAt: NOW } }],
    ['click.token', { click: { token: 'a'.repeat(MAX_CLICK_TOKEN_LENGTH + 1), clickedAt: NOW } }],
    ['click.clickedAt', { click: { token: 'tok', clickedAt: Number.POSITIVE_INFINITY } }],
    ['click.clickedAt', { click: { token: 'tok', clickedAt: '2026-01-01' } }],
    ['click.clickedAt', { click: { token: 'tok', clickedAt: -5 } }],
    ['click.clickedAt', { click: { token: 'tok', clickedAt: NOW + DEFAULT_MAX_CLOCK_SKEW_MS + 1 } }],
  ])('names %s when it is malformed (%j)', (field, patch) => {
    expect(fieldOf(() => validateConfirmInput({ ...good(), ...patch }, { now: NOW }))).toBe(field);
  });

  it('accepts a click stamped slightly in the future (clock skew) but not beyond the allowed skew', () => {
    const at = (clickedAt: number) => ({ ...good(), click: { token: 'tok', clickedAt } });
    expect(() => validateConfirmInput(at(NOW + DEFAULT_MAX_CLOCK_SKEW_MS), { now: NOW })).not.toThrow();
    expect(fieldOf(() => validateConfirmInput(at(NOW + 1_001), { now: NOW, maxClockSkewMs: 1_000 }))).toBe(
      'click.clickedAt',
    );
  });

  it('rejects a non-object input naming the input itself', () => {
    expect(fieldOf(() => validateConfirmInput(null, { now: NOW }))).toBe('input');
  });

  it('accepts every well-formed input unchanged (property)', () => {
    fc.assert(
      fc.property(
        fc
          .string({ minLength: 1, maxLength: MAX_ORDER_ID_LENGTH })
          // biome-ignore lint/suspicious/noControlCharactersInRegex: excluding control characters is the point
          .filter((s) => s.trim() !== '' && !/[\u0000-\u001f\u007f-\u009f]/.test(s)),
        fc.maxSafeNat(),
        fc.stringMatching(/^[A-Za-z0-9._~+/=-]{1,512}$/),
        fc.integer({ min: 0, max: NOW }),
        (orderId, valueMicros, token, clickedAt) => {
          const input = { orderId, valueMicros, click: { token, clickedAt } };
          expect(validateConfirmInput(input, { now: NOW })).toEqual(input);
        },
      ),
    );
  });

  it('rejects every value that is not a non-negative safe integer of micros (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double().filter((n) => !Number.isSafeInteger(n) || n < 0),
          fc.integer({ max: -1 }),
          fc.string(),
          fc.constant(null),
          fc.bigInt(),
        ),
        (valueMicros) => {
          expect(fieldOf(() => validateConfirmInput({ ...good(), valueMicros }, { now: NOW }))).toBe(
            'valueMicros',
          );
        },
      ),
    );
  });

  it('never puts a control character through in a token (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 31 }), fc.string(), (a, code, b) => {
        const token = `${a}${String.fromCharCode(code)}${b}`;
        expect(
          fieldOf(() => validateConfirmInput({ ...good(), click: { token, clickedAt: NOW } }, { now: NOW })),
        ).toBe('click.token');
      }),
    );
  });
});

describe('validateRefundInput', () => {
  it('keeps campaignId optional and checks it when given', () => {
    expect(validateRefundInput({ orderId: 'ord_1' })).toEqual({ orderId: 'ord_1' });
    expect(validateRefundInput({ orderId: 'ord_1', campaignId: 'cmp_42' })).toEqual({
      orderId: 'ord_1',
      campaignId: 'cmp_42',
    });
  });

  it.each([
    ['orderId', { campaignId: 'cmp_1' }],
    ['campaignId', { orderId: 'o', campaignId: '42' }],
    ['campaignId', { orderId: 'o', campaignId: 'cmp_' }],
    ['campaignId', { orderId: 'o', campaignId: 'cmp_a b' }],
    ['campaignId', { orderId: 'o', campaignId: 7 }],
  ])('names %s when it is malformed (%j)', (field, input) => {
    expect(fieldOf(() => validateRefundInput(input))).toBe(field);
  });
});
