import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { httpDate } from './date.ts';

const IMF_FIXDATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

describe('httpDate', () => {
  test('writes the RFC 7231 example', () => {
    expect(httpDate(Date.UTC(1994, 10, 6, 8, 49, 37, 999))).toBe('Sun, 06 Nov 1994 08:49:37 GMT');
  });

  test('is an IMF-fixdate that reads back as the same second, whatever the order of calls', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 253_402_300_799_999 }), { minLength: 1 }), (times) => {
        for (const ms of times) {
          const text = httpDate(ms);
          expect(text).toMatch(IMF_FIXDATE);
          expect(Date.parse(text)).toBe(Math.floor(ms / 1000) * 1000);
        }
      }),
    );
  });
});
