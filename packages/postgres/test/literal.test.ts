/**
 * The literal codec used for single-round-trip scripts: whatever string goes in, Postgres reads back the
 * same string (property test against the real server), and nothing unsafe is ever inlined.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { inline, literal } from '../src/literal.ts';
import { testPool } from './pg-test-db.ts';

const pool = testPool(2);
afterAll(() => pool.end());

describe('literal', () => {
  it('round-trips any string without NUL through Postgres exactly', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\u0000')),
        async (s) => {
          const { rows } = await pool.query(`SELECT ${literal(s)}::text AS v`);
          expect(rows[0].v).toBe(s);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('round-trips quotes, backslashes and statement terminators under both string settings', async () => {
    const nasty = ["'; DROP TABLE x; --", '\\', "\\'", "E'\\x41'", '$1', 'a\\\\b'];
    for (const setting of ['on', 'off']) {
      const client = await pool.connect();
      try {
        await client.query(`SET standard_conforming_strings = ${setting}`);
        for (const s of nasty)
          expect((await client.query(`SELECT ${literal(s)}::text AS v`)).rows[0].v).toBe(s);
      } finally {
        await client.query('RESET standard_conforming_strings');
        client.release();
      }
    }
  });

  it('inlines safe integers, null and booleans, and refuses anything else', () => {
    expect(inline('SELECT $1, $2, $3, $10', [42, null, true, 4, 5, 6, 7, 8, 9, -7])).toBe(
      'SELECT 42, NULL, TRUE, -7',
    );
    expect(() => literal(1.5)).toThrow(RangeError);
    expect(() => literal(2 ** 60)).toThrow(RangeError);
    expect(() => literal({})).toThrow(TypeError);
    expect(() => literal('a\u0000b')).toThrow(RangeError);
    expect(() => inline('SELECT $2', [1])).toThrow(/no value for \$2/);
  });
});
