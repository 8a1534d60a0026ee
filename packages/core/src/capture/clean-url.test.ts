/** `cleanUrlLocation`: the clean-URL redirect never leaves the shop's origin, whatever the target. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cleanUrlLocation } from './clean-url.ts';

const PARAMS = ['click_token'];
const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';
const SHOP = 'https://shop.example';

/** Same-origin: one leading `/`, not followed by `/` or `\`, printable ASCII only, resolving to the shop. */
function expectSameOrigin(location: string): void {
  expect(location).toMatch(/^\/(?![/\\])[\x21-\x7e]*$/);
  expect(new URL(location, SHOP).origin).toBe(SHOP);
}

describe('cleanUrlLocation', () => {
  it.each([
    [`//evil.example/?click_token=${TOKEN}`, '/evil.example/'],
    [`/\\evil.example/?click_token=${TOKEN}`, '/%5Cevil.example/'],
    [`///evil.example/x?click_token=${TOKEN}`, '/evil.example/x'],
    [`http://evil.example/x?click_token=${TOKEN}`, '/x'],
    [`https://evil.example?click_token=${TOKEN}&a=1`, '/?a=1'],
    [`http:\\\\evil.example\\x?click_token=${TOKEN}`, '/%5Cx'],
    [`/\t/evil.example/?click_token=${TOKEN}`, '/%09/evil.example/'],
    [`\\\\evil.example?click_token=${TOKEN}`, '/%5C%5Cevil.example'],
    [`?click_token=${TOKEN}`, '/'],
    [`*`, '/*'],
  ])('keeps %j on the shop’s origin as %j', (target, location) => {
    expect(cleanUrlLocation(target, PARAMS)).toBe(location);
    expectSameOrigin(location);
  });

  it('keeps the path and the other parameters exactly as they were spelled, and the fragment', () => {
    expect(cleanUrlLocation(`/shop/shoes?size=42&click_token=${TOKEN}&q=a%20b+c#top`, PARAMS)).toBe(
      '/shop/shoes?size=42&q=a%20b+c#top',
    );
    expect(cleanUrlLocation(`/p?a=1#x?click_token=${TOKEN}`, PARAMS)).toBe(`/p?a=1#x?click_token=${TOKEN}`);
    expect(cleanUrlLocation(`https://shop.example/p?click_token=${TOKEN}&ct=2`, [...PARAMS, 'ct'])).toBe(
      '/p',
    );
  });

  it('escapes what a header may not carry or a URL parser would drop (controls, spaces, non-ASCII)', () => {
    expect(cleanUrlLocation('/caf\u00e9 \r\n?q=\u2603&click_token=x', PARAMS)).toBe(
      '/caf%C3%A9%20%0D%0A?q=%E2%98%83',
    );
    expect(cleanUrlLocation('/\ud800x', PARAMS)).toBe('/%EF%BF%BDx');
  });

  it('answers a path on the shop’s origin without any token parameter, for any input', () => {
    const piece = fc.constantFrom(
      '/',
      '\\',
      '//',
      '/\\',
      '\t',
      '\n',
      ' ',
      'http:',
      'https://',
      'javascript:',
      'evil.example',
      '@',
      ':',
      '?',
      '#',
      '&',
      '=',
      '%',
      '%2F',
      '.',
      '..',
      'click_token=',
      `click_token=${TOKEN}`,
      '\u00e9',
      '\ud83d\ude00',
      '\udc00',
      '\u0000',
    );
    const input = fc.oneof(
      fc.array(piece, { maxLength: 12 }).map((p) => p.join('')),
      fc.string({ unit: 'grapheme' }),
      fc.webUrl(),
    );
    fc.assert(
      fc.property(input, (target) => {
        const location = cleanUrlLocation(target, PARAMS);
        expectSameOrigin(location);
        const url = new URL(location, SHOP);
        expect(url.searchParams.has('click_token')).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});
