/** Integer micros: exact decimal conversion both ways, typed rejections, and property tests of the round trip. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assertMicros,
  formatMicros,
  isMicros,
  MicrosError,
  micros,
  RequestValidationError,
  toMicros,
} from './index.ts';

function micrError(run: () => unknown): MicrosError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(MicrosError);
    return err as MicrosError;
  }
  throw new Error('expected a MicrosError');
}

describe('toMicros', () => {
  it('converts decimal strings exactly, including the ones floats get wrong', () => {
    expect(toMicros('12.34')).toBe(12_340_000);
    expect(toMicros('0.1')).toBe(100_000);
    expect(toMicros('1.005')).toBe(1_005_000); // 1.005 * 1e6 is 1004999.9999999999 in floating point
    expect(toMicros('8.2')).toBe(8_200_000); // 8.2 * 1e6 is 8199999.999999999
    expect(toMicros('0.000001')).toBe(1);
    expect(toMicros('100')).toBe(100_000_000);
    expect(toMicros('007.50')).toBe(7_500_000);
    expect(toMicros('9007199254.740991')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('rejects more than six decimals, signs, exponents, blanks and other junk with a typed error naming the field', () => {
    for (const bad of [
      '1.2345678',
      '-1',
      '+1',
      '1e3',
      '',
      ' 1',
      '1 ',
      '1,5',
      '.5',
      '5.',
      'NaN',
      'Infinity',
      '0x10',
      '1_000',
    ]) {
      const err = micrError(() => toMicros(bad, 'value_micros'));
      expect(err.field).toBe('value_micros');
      expect(err).toBeInstanceOf(RequestValidationError);
    }
    expect(micrError(() => toMicros(12.34 as unknown as string)).message).toContain('decimal string');
  });

  it('rejects amounts beyond the safe integer range instead of rounding them', () => {
    expect(micrError(() => toMicros('9007199254.740992')).message).toContain('too large');
  });
});

describe('formatMicros', () => {
  it('trims to at least two decimals, or keeps six with fixed', () => {
    expect(formatMicros(12_340_000)).toBe('12.34');
    expect(formatMicros(12_340_000, { fixed: true })).toBe('12.340000');
    expect(formatMicros(12_000_000)).toBe('12.00');
    expect(formatMicros(1)).toBe('0.000001');
    expect(formatMicros(0)).toBe('0.00');
    expect(formatMicros(Number.MAX_SAFE_INTEGER)).toBe('9007199254.740991');
  });

  it('refuses floats and negatives', () => {
    expect(() => formatMicros(1.5)).toThrow(MicrosError);
    expect(() => formatMicros(-1)).toThrow(MicrosError);
  });
});

describe('assertMicros and micros', () => {
  it('accept non-negative safe integers and name the field otherwise', () => {
    expect(() => assertMicros(0, 'bid_micros')).not.toThrow();
    expect(micros(5)).toBe(5);
    for (const bad of [1.5, -1, 2 ** 53, '5', null, undefined, Number.NaN, 5n]) {
      expect(isMicros(bad)).toBe(false);
      expect(micrError(() => assertMicros(bad, 'bid_micros')).field).toBe('bid_micros');
    }
  });
});

describe('money properties', () => {
  const safe = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });

  it('formatMicros then toMicros gives back every safe amount, plain or fixed', () => {
    fc.assert(
      fc.property(safe, fc.boolean(), (m, fixed) => {
        expect(toMicros(formatMicros(m, { fixed }))).toBe(m);
      }),
      { numRuns: 2_000 },
    );
  });

  it('toMicros of any decimal string with up to six decimals equals its exact digit arithmetic, never a float error', () => {
    const decimal = fc.tuple(fc.bigInt({ min: 0n, max: 9_007_199_253n }), fc.stringMatching(/^\d{0,6}$/));
    fc.assert(
      fc.property(decimal, ([whole, frac]) => {
        const text = frac === '' ? String(whole) : `${whole}.${frac}`;
        const expected = whole * 1_000_000n + BigInt(frac.padEnd(6, '0') || '0');
        const got = toMicros(text);
        expect(Number.isSafeInteger(got)).toBe(true);
        expect(BigInt(got)).toBe(expected);
      }),
      { numRuns: 2_000 },
    );
  });

  it('toMicros then formatMicros keeps the value of the string (same digits up to trailing zeros)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.stringMatching(/^\d{1,6}$/), (whole, frac) => {
        const shown = formatMicros(toMicros(`${whole}.${frac}`));
        const norm = (s: string) => s.replace(/0+$/, '').replace(/\.$/, '');
        expect(norm(shown)).toBe(norm(`${whole}.${frac}`));
      }),
    );
  });

  it('toMicros rejects every string with more than six decimals', () => {
    fc.assert(
      fc.property(fc.nat(), fc.stringMatching(/^\d{7,12}$/), (whole, frac) => {
        expect(() => toMicros(`${whole}.${frac}`)).toThrow(MicrosError);
      }),
    );
  });
});
