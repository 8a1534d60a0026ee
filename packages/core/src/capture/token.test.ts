/** Finding, checking and stripping the click token in landing URLs. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64Url, encodeBase64Url } from './base64url.ts';
import {
  checkClickToken,
  findLandingToken,
  findTokens,
  hasTokenCharacters,
  reportedValue,
  stripParams,
  TOKEN_CHARACTERS,
} from './token.ts';

const RULES = { tokenMinLength: 16, tokenMaxLength: 256 };
const tokenArb = fc.stringMatching(/^[A-Za-z0-9._~-]{16,256}$/);

describe('click token', () => {
  it('accepts every token the sandbox issues ([A-Za-z0-9_-]{24,48})', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9_-]{24,48}$/),
        (token) => checkClickToken(token, RULES) === null,
      ),
    );
  });

  it('checks characters exactly as TOKEN_CHARACTERS says, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        expect(hasTokenCharacters(text)).toBe(TOKEN_CHARACTERS.test(text));
      }),
      { numRuns: 2000 },
    );
    expect(hasTokenCharacters('tok_A-z.0~9')).toBe(true);
    expect(hasTokenCharacters('tok+a')).toBe(false);
  });

  it('refuses tokens that are too short, too long, or hold characters outside the unreserved set', () => {
    expect(checkClickToken('undefined', RULES)).toBe('too-short');
    expect(checkClickToken('a'.repeat(257), RULES)).toBe('too-long');
    expect(checkClickToken('{click_token}_macro_not_expanded', RULES)).toBe('characters');
    expect(checkClickToken('abc def ghi jkl mno pqr', RULES)).toBe('characters');
  });

  it('finds a token however its value is percent-encoded', () => {
    fc.assert(
      fc.property(tokenArb, fc.boolean(), (token, encodeAll) => {
        const value = encodeAll
          ? [...token].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')
          : token;
        expect(findTokens(`/land?utm=x&click_token=${value}#frag`, ['click_token'])).toEqual([
          { param: 'click_token', value: token },
        ]);
      }),
    );
  });

  it('looks in the listed parameters in order and ignores the path and fragment', () => {
    expect(findTokens('/click_token=nope?b=2&a=1#click_token=frag', ['a', 'b'])).toEqual([
      { param: 'a', value: '1' },
      { param: 'b', value: '2' },
    ]);
    expect(findTokens('/no-query', ['a'])).toEqual([]);
  });

  it('takes a parameter by its name as written, and decodes its values as URLSearchParams does', () => {
    const piece = fc.oneof(
      fc.stringMatching(/^[a-z_%+=0-9A-F]{0,12}$/),
      fc.constantFrom('click_token=', 'click%5Ftoken=', 'click+token=', 'ct=%41+b', 'ct'),
    );
    const queryArb = fc.array(piece, { maxLength: 8 }).map((parts) => parts.join('&'));
    // Names the options accept: unreserved characters, never escaped in a URL.
    const names = fc.constantFrom('click_token', 'a', 'ct', 'a.b');
    fc.assert(
      fc.property(queryArb, fc.array(names, { minLength: 1, maxLength: 3 }), (query, params) => {
        const pairs = query.split('&').filter((pair) => pair !== '');
        const expected = params.flatMap((param) =>
          pairs
            .filter((pair) => pair === param || pair.startsWith(`${param}=`))
            .map((pair) => ({ param, value: new URLSearchParams(pair).values().next().value ?? '' })),
        );
        expect(findTokens(`/p?${query}#x=1`, params)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
    // An escaped name is another name; at most `limit` values are listed.
    expect(findTokens('/p?click%5Ftoken=tok_0123456789abcdef', ['click_token'])).toEqual([]);
    expect(findTokens('/p?ct=1&ct=2&ct=3', ['ct'], 2)).toEqual([
      { param: 'ct', value: '1' },
      { param: 'ct', value: '2' },
    ]);
  });

  it('refuses every token that is not well-formed Unicode (non-ASCII is outside the character set)', () => {
    const lone = fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff');
    fc.assert(
      fc.property(tokenArb, lone, fc.nat(), (token, surrogate, at) => {
        const i = at % (token.length + 1);
        const bad = token.slice(0, i) + surrogate + token.slice(i);
        expect(checkClickToken(bad, RULES)).toBe('characters');
      }),
    );
  });

  it('reports values cut without splitting a pair, lone surrogates replaced', () => {
    const emoji = '\u{1F600}';
    expect(reportedValue(`x${emoji.repeat(200)}`, 256)).toBe(`x${emoji.repeat(127)}`);
    expect(reportedValue(emoji.repeat(200), 256)).toBe(emoji.repeat(128));
    expect(reportedValue('a\ud800b\udc00', 256)).toBe('a\ufffdb\ufffd');
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 400 }),
        fc.integer({ min: 1, max: 300 }),
        (text, max) => {
          const reported = reportedValue(text, max);
          expect(reported.isWellFormed()).toBe(true);
          expect(reported.length).toBeLessThanOrEqual(max);
        },
      ),
    );
  });

  const quick = (url: string) => findLandingToken(url, 'click_token', url.indexOf('click_token='), RULES);
  it('finds the landing token in one pass only when the general path would pick the same, reporting nothing before it', () => {
    const piece = fc.oneof(
      fc.stringMatching(/^[a-z_%+=0-9A-F#?]{0,12}$/),
      fc.constantFrom('click_token', 'click_token=', 'xclick_token=', 'click%5Ftoken=', 'click+token='),
      tokenArb.map((token) => `click_token=${token}`),
    );
    const urlArb = fc
      .tuple(
        fc.constantFrom('/p', '/click_token=x', 'https://shop.test/a'),
        fc.array(piece, { maxLength: 6 }),
      )
      .map(([path, parts]) => `${path}?${parts.join('&')}`);
    let taken = 0;
    fc.assert(
      fc.property(urlArb, (url) => {
        const found = quick(url);
        if (found === undefined) return;
        taken++;
        // The general path: the first value of the parameter is this token, and it is valid.
        const [first] = findTokens(url, ['click_token']);
        expect(first?.value).toBe(found);
        expect(checkClickToken(found, RULES)).toBeNull();
      }),
      { numRuns: 3000 },
    );
    expect(taken).toBeGreaterThan(100);
    expect(quick('/land?utm=x&click_token=tok_0123456789abcdef&b=1#f')).toBe('tok_0123456789abcdef');
    // Left to the general path: escapes before it, a bare earlier pair, a value needing decoding or refused.
    for (const url of [
      '/land?a=%41&click_token=tok_0123456789abcdef',
      '/land?click_token&click_token=tok_0123456789abcdef',
      '/land?x=aclick_token=tok_0123456789abcdef',
      '/land?click_token=tok_0123456789abcde%66',
      '/land?click_token=short',
      '/land?#click_token=tok_0123456789abcdef',
    ])
      expect(quick(url)).toBeUndefined();
  });

  it('never throws on malformed query strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (url) =>
        Array.isArray(findTokens(url, ['click_token'])),
      ),
    );
    const [found] = findTokens('/?click_token=%E0%A4%A_and_more_text', ['click_token']);
    expect(found?.param).toBe('click_token');
    expect(checkClickToken(found?.value ?? '', RULES)).toBe('characters');
  });

  it('strips only the token parameters and keeps every other byte of the URL', () => {
    expect(stripParams('/land?a=%20x+y&click_token=abc&b=2#top', ['click_token'])).toBe(
      '/land?a=%20x+y&b=2#top',
    );
    expect(stripParams('https://shop.test/land?click_token=abc', ['click_token'])).toBe(
      'https://shop.test/land',
    );
    expect(stripParams('/land?click%5Ftoken=abc&ct=1&ct=2', ['click_token', 'ct'])).toBe('/land');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.stringMatching(/^[a-z]{1,5}$/), fc.stringMatching(/^[a-z0-9%+]{0,8}$/))),
        tokenArb,
        (pairs, token) => {
          const others = pairs.filter(([name]) => name !== 'click_token').map(([n, v]) => `${n}=${v}`);
          const url = `/p?${[...others, `click_token=${token}`].join('&')}`;
          expect(stripParams(url, ['click_token'])).toBe(others.length > 0 ? `/p?${others.join('&')}` : '/p');
        },
      ),
    );
  });
});

describe('base64url', () => {
  it('round-trips any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
        expect(decodeBase64Url(encodeBase64Url(bytes))).toEqual(bytes);
      }),
    );
  });

  it("equals Node's base64url for any bytes and range, inputs longer than one encoding chunk included", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 7000 }), fc.nat(), (bytes, cut) => {
        const start = bytes.length === 0 ? 0 : cut % bytes.length;
        expect(encodeBase64Url(bytes, start)).toBe(Buffer.from(bytes.subarray(start)).toString('base64url'));
      }),
      { numRuns: 200 },
    );
  });

  it('refuses text that is not the canonical encoding of some bytes', () => {
    expect(decodeBase64Url('AB')).toBeNull(); // non-zero trailing bits: 'AA' is the canonical form
    expect(decodeBase64Url('AA=')).toBeNull();
    expect(decodeBase64Url('A')).toBeNull();
    expect(decodeBase64Url('AA+/')).toBeNull();
    expect(decodeBase64Url('AA')).toEqual(new Uint8Array([0]));
  });
});
