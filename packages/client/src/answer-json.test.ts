/** The depth bound of answers: counted without parsing, exactly as deep as `JSON.parse` finds the value. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonDepth, parseAnswerJson } from './answer-json.ts';

/** Nesting depth of a parsed value: arrays and objects count one level each. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === 'object')
    return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

/** Any JSON value, strings full of brackets, quotes and backslashes included. */
const trickyString = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ' ', 'é') });
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.oneof(trickyString, fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(trickyString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('jsonDepth', () => {
  it('counts the nesting of any JSON text as deep as the parsed value is, brackets inside strings aside', () => {
    fc.assert(
      fc.property(jsonValue, fc.boolean(), (value, spaced) => {
        const text = JSON.stringify(value, null, spaced ? 2 : undefined);
        expect(jsonDepth(text, 1_000)).toBe(depthOf(value));
      }),
    );
  });

  it('stops one past the limit whatever the text', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 50 }), (text, limit) => {
        expect(jsonDepth(text, limit)).toBeLessThanOrEqual(limit + 1);
      }),
    );
  });
});

describe('parseAnswerJson', () => {
  it('parses a text within the bound to what JSON.parse gives, and refuses one nested deeper', () => {
    fc.assert(
      fc.property(jsonValue, fc.integer({ min: 1, max: 8 }), (value, limit) => {
        const text = JSON.stringify(value);
        const parsed = parseAnswerJson(text, limit);
        if (depthOf(value) <= limit) expect(parsed).toEqual({ ok: true, value: JSON.parse(text) });
        else expect(parsed).toEqual({ ok: false, why: 'nested too deeply' });
      }),
    );
  });

  it('refuses a million nested arrays without calling the parser', () => {
    const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;
    const started = performance.now();
    expect(parseAnswerJson(deep, 64)).toEqual({ ok: false, why: 'nested too deeply' });
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('says "not JSON" of any text the parser rejects', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        const parsed = parseAnswerJson(text, 1_000);
        if (!valid) expect(parsed).toMatchObject({ ok: false, why: 'not JSON' });
      }),
    );
  });
});
