/** The dashboard's target rule: never a throw other than a ClientError; the page's own targets pass as sent. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClientError } from './answers.ts';
import { MAX_PATH_LENGTH, readTarget } from './request-target.ts';

/** The status `readTarget` refuses `target` with, or the target read. */
function outcome(target: string): number | { path: string; search: string } {
  try {
    return readTarget(target);
  } catch (error) {
    if (error instanceof ClientError) return error.status;
    throw error;
  }
}

const name = fc.stringMatching(/^[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,15}$/);
const base = fc.array(name, { maxLength: 3 }).map((names) => names.map((n) => `/${n}`).join(''));
/** A job id, escaped as the page escapes it (`encodeURIComponent`). */
const jobId = fc
  .string({ minLength: 1, maxLength: 64, unit: 'grapheme' })
  .filter((id) => id.isWellFormed() && !/\p{Cc}/u.test(id) && id !== '.' && id !== '..')
  .map(encodeURIComponent);
const page = fc.oneof(
  fc.constant('/'),
  fc.constantFrom('/assets/app.js', '/assets/style.css', '/api/overview', '/api/jobs', '/api/replay'),
  jobId.map((id) => `/api/jobs/${id}`),
);
/** A query as the page builds one (`URLSearchParams`). */
const search = fc
  .dictionary(
    fc.constantFrom('state', 'reason', 'orderId', 'account', 'group', 'limit'),
    fc.string({ unit: 'grapheme' }),
  )
  .map((q) => new URLSearchParams(q).toString())
  .map((q) => (q === '' ? '' : `?${q}`));

describe('readTarget', () => {
  it('takes every target the page asks for, under any base path, as sent', () => {
    fc.assert(
      fc.property(base, page, search, (b, p, s) => {
        expect(outcome(`${b}${p}${s}`)).toEqual({ path: `${b}${p}`, search: s });
      }),
    );
  });

  it('throws nothing but a ClientError (a 4xx), whatever the string', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme-ascii' })), (s) => {
        const result = outcome(s);
        if (typeof result === 'number') expect(result >= 400 && result < 500).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });

  it('refuses what it would otherwise redirect to a page: empty and dot segments, bad and control escapes', () => {
    for (const target of [
      '//[',
      '//a:b',
      '//:99999/',
      '/ops//x',
      '/ops/../../etc/passwd',
      '/ops/./x',
      '/ops/%2e%2E/x',
      '/ops/.%2e',
      '/ops%ZZ',
      '/ops%',
      '/ops/%E0%A4%A',
      '/ops/%ED%A0%80',
      '/ops%00',
      '/ops/%7F',
      '/ops/%C2%85',
      '/ops/?q=%ZZ',
      '/ops/?q=[1]',
      'http://[/x',
      '*',
      'ops',
    ]) {
      expect(outcome(target), target).toBe(400);
    }
  });

  it(`answers 414 to a path over ${MAX_PATH_LENGTH} characters, not to a long query`, () => {
    expect(outcome(`/ops/${'a'.repeat(MAX_PATH_LENGTH)}`)).toBe(414);
    expect(outcome(`/ops/api/jobs?reason=${'a'.repeat(MAX_PATH_LENGTH)}`)).toMatchObject({
      path: '/ops/api/jobs',
    });
  });

  it('keeps dots inside a segment and a trailing slash', () => {
    expect(outcome('/ops/assets/app.js')).toEqual({ path: '/ops/assets/app.js', search: '' });
    expect(outcome('/ops/...x/')).toEqual({ path: '/ops/...x/', search: '' });
    expect(outcome('http://localhost:4020/ops/?a=1')).toEqual({ path: '/ops/', search: '?a=1' });
  });
});
