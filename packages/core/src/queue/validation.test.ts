import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_CLOCK_SKEW_MS, MAX_CLICK_TOKEN_LENGTH } from '../click.ts';
import { PostbackError } from '../errors.ts';
import {
  JobValidationError,
  MAX_ACCOUNT_LENGTH,
  MAX_ORDER_ID_LENGTH,
  parseClickTime,
  validateConfirmInput,
  validateOrderId,
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

describe('identity strings are well-formed Unicode', () => {
  // Text of any code points (astral ones as surrogate pairs) without control characters, not blank.
  const text = (maxLength: number) =>
    fc
      .string({ unit: 'binary', minLength: 1, maxLength })
      .filter((s) => s.length <= maxLength && s.trim() !== '' && !/\p{Cc}/u.test(s));
  // A string holding a lone surrogate: what cutting a name inside an emoji leaves.
  const withLoneSurrogate = fc
    .tuple(text(40), fc.integer({ min: 0xd800, max: 0xdfff }), text(40), fc.boolean())
    .map(([a, unit, b, atEnd]) =>
      atEnd ? `${a}${b}${String.fromCharCode(unit)}` : `${a}${String.fromCharCode(unit)}${b}`,
    );

  it('refuses any order id, account or click token holding a lone surrogate, naming the field (property)', () => {
    fc.assert(
      fc.property(withLoneSurrogate, (bad) => {
        expect(bad.isWellFormed()).toBe(false);
        const confirm = (patch: object) => () => validateConfirmInput({ ...good(), ...patch }, { now: NOW });
        expect(fieldOf(confirm({ orderId: bad }))).toBe('orderId');
        expect(fieldOf(confirm({ account: bad }))).toBe('account');
        expect(fieldOf(confirm({ click: { token: bad, clickedAt: NOW } }))).toBe('click.token');
        expect(fieldOf(() => validateRefundInput({ orderId: bad }))).toBe('orderId');
        expect(fieldOf(() => validateRefundInput({ orderId: 'o', account: bad }))).toBe('account');
        expect(() => validateOrderId(bad)).toThrow(/well-formed Unicode/);
      }),
    );
  });

  it('accepts any well-formed order id and account within the other rules, kept exactly (property)', () => {
    fc.assert(
      fc.property(text(MAX_ORDER_ID_LENGTH), text(MAX_ACCOUNT_LENGTH), (orderId, account) => {
        const input = { ...good(), orderId, account };
        expect(validateConfirmInput(input, { now: NOW })).toEqual(input);
        expect(validateRefundInput({ orderId, account })).toEqual({ orderId, account });
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

describe('parseClickTime', () => {
  const fieldAndMessage = (value: unknown, field?: string): [string, string] => {
    try {
      parseClickTime(value, field);
    } catch (err) {
      expect(err).toBeInstanceOf(JobValidationError);
      return [(err as JobValidationError).field, (err as Error).message];
    }
    throw new Error(`expected ${String(value)} to be refused`);
  };

  it('reads an ISO 8601 time with a zone, or epoch milliseconds', () => {
    expect(parseClickTime('2026-01-02T03:04:05Z')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(parseClickTime('2026-01-02T04:04:05.123+01:00')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5, 123));
    expect(parseClickTime('2026-01-02T03:04-00:30')).toBe(Date.UTC(2026, 0, 2, 3, 34));
    expect(parseClickTime('2026-01-02T03:04:05.123987654Z')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5, 123));
    expect(parseClickTime('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    expect(parseClickTime('2000-02-29T00:00:00Z')).toBe(Date.UTC(2000, 1, 29));
    expect(parseClickTime(NOW)).toBe(NOW);
  });

  it.each([
    ['2026-02-30T00:00:00Z', /February 2026 has 28 days/],
    ['2025-02-29T00:00:00Z', /February 2025 has 28 days/],
    ['1900-02-29T00:00:00Z', /February 1900 has 28 days/],
    ['2026-04-31T00:00:00Z', /April 2026 has 30 days/],
    ['2026-01-00T00:00:00Z', /January 2026 has 31 days/],
    ['2026-13-01T00:00:00Z', /month 13/],
    ['2026-00-01T00:00:00Z', /month 00/],
    ['2026-01-01T24:00:00Z', /hour 24/],
    ['2026-01-01T23:60:00Z', /minute 60/],
    ['2026-12-31T23:59:60Z', /second 60/],
    ['2026-01-01T00:00:00+24:00', /offset/],
    ['2026-01-01T00:00:00+01:60', /offset/],
    ['2026-01-01T00:00:00', /with a zone/],
    ['2026-01-01', /with a zone/],
    ['yesterday', /with a zone/],
    ['1969-12-31T23:59:59Z', /before 1970/],
    ['1970-01-01T00:30:00+01:00', /before 1970/],
    [-1, /non-negative integer/],
    [1.5, /non-negative integer/],
    [null, /ISO 8601/],
  ])('refuses %j with a JobValidationError naming the field', (value, message) => {
    const [field, text] = fieldAndMessage(value, 'clicked_at');
    expect(field).toBe('clicked_at');
    expect(text).toMatch(message);
    expect(text).toMatch(/^Invalid clicked_at: /);
  });

  it('names click.clickedAt by default', () => {
    expect(fieldAndMessage('2026-02-30T00:00:00Z')[0]).toBe('click.clickedAt');
  });

  const MAX = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

  it('round-trips every valid time, in UTC and at any zone offset', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX }),
        fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        (ms, offsetMinutes) => {
          expect(parseClickTime(new Date(ms).toISOString())).toBe(ms);
          // The same instant written as local time at the offset.
          const local = new Date(ms + offsetMinutes * 60_000);
          if (local.getUTCFullYear() < 1970 || local.getUTCFullYear() > 9999) return;
          const sign = offsetMinutes < 0 ? '-' : '+';
          const abs = Math.abs(offsetMinutes);
          const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
          const text = `${local.toISOString().slice(0, -1)}${zone}`;
          expect(parseClickTime(text)).toBe(ms);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses a day of the month beyond the month’s length, naming the field', () => {
    const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
    fc.assert(
      fc.property(
        fc.integer({ min: 1970, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 67 }),
        (year, month, beyond) => {
          const day = daysIn(year, month) + 1 + beyond;
          const text = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}T00:00:00Z`;
          if (day > 99) return;
          expect(fieldAndMessage(text, 'clicked_at')[0]).toBe('clicked_at');
        },
      ),
      { numRuns: 1000 },
    );
  });
});
