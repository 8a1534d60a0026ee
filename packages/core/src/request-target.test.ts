/** The request-target and `Host` readers: never a throw, the path of every well-formed target, null otherwise. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHostValue, parseRequestTarget } from './request-target.ts';

/** The path, or null for a refused target. */
const targetPath = (target: string) => parseRequestTarget(target)?.path ?? null;

const PCHARS = "abcXYZ019-._~!$&'()*+,;=:@".split('');
const hex = fc.constantFrom(...'0123456789abcdefABCDEF'.split(''));
const percentEscape = fc.tuple(hex, hex).map(([a, b]) => `%${a}${b}`);
const pchar = fc.oneof(fc.constantFrom(...PCHARS), percentEscape);
const segment = fc.array(pchar, { maxLength: 8 }).map((cs) => cs.join(''));
const path = fc.array(segment, { minLength: 1, maxLength: 5 }).map((ss) => `/${ss.join('/')}`);
const query = fc
  .array(fc.oneof(pchar, fc.constantFrom('/', '?')), { maxLength: 12 })
  .map((cs) => cs.join(''));
const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
const host = fc.oneof(
  fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join('.')),
  fc.ipV4(),
  fc.ipV6().map((ip) => `[${ip}]`),
);
const hostValue = fc
  .tuple(host, fc.option(fc.integer({ min: 0, max: 65_535 })))
  .map(([h, port]) => (port === null ? h : `${h}:${port}`));

describe('parseRequestTarget', () => {
  it('never throws, whatever the string', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme-ascii' })), (s) => {
        const path = targetPath(s);
        expect(path === null || path.startsWith('/')).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });

  it('gives the path and the query, as sent, of every origin-form target', () => {
    fc.assert(
      fc.property(path, fc.option(query), (p, q) => {
        const search = q === null ? '' : `?${q}`;
        expect(parseRequestTarget(`${p}${search}`)).toEqual({ path: p, search });
      }),
    );
  });

  it('gives the path of every http(s) absolute-form target, "/" when it has none', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('http', 'https', 'HTTP'),
        hostValue,
        fc.option(path),
        fc.option(query),
        (scheme, h, p, q) => {
          const search = q === null ? '' : `?${q}`;
          expect(parseRequestTarget(`${scheme}://${h}${p ?? ''}${search}`)).toEqual({
            path: p ?? '/',
            search,
          });
        },
      ),
    );
  });

  it('refuses a bad escape anywhere in the target', () => {
    fc.assert(
      fc.property(path, fc.constantFrom('%', '%Z', '%ZZ', '%0', '%G1'), fc.boolean(), (p, bad, inQuery) => {
        expect(targetPath(inQuery ? `${p}?x=${bad}` : `${p}${bad}`)).toBeNull();
      }),
    );
  });

  it('refuses what URL parsers throw on and what is not a path', () => {
    for (const target of [
      '//[',
      'http://[/x',
      'http://x:99999/metrics',
      'http://user@x/metrics',
      'ftp://x/metrics',
      '*',
      'example.com:443',
      'metrics',
      '',
      '/a b',
      '/a#frag',
      '/a[0]',
      '/a?b=[1]',
      '/\\\\evil',
      '/é',
    ]) {
      expect(targetPath(target), target).toBeNull();
    }
    // Well-formed, merely unknown paths: the router answers 404.
    expect(targetPath('//a:b')).toBe('//a:b');
    expect(targetPath('//:99999/metrics')).toBe('//:99999/metrics');
    expect(targetPath('/metrics%00')).toBe('/metrics%00');
  });
});

describe('isHostValue', () => {
  it('accepts every name, IPv4 and bracketed IPv6 host with an optional port', () => {
    fc.assert(
      fc.property(hostValue, (h) => {
        expect(isHostValue(h)).toBe(true);
      }),
    );
  });

  it('never throws, and refuses what a Host cannot be', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => void isHostValue(s)),
      { numRuns: 1_000 },
    );
    for (const bad of [
      '',
      '[',
      'a b',
      'x:99999999',
      'x:65536',
      'user@x',
      '::1',
      '[::1',
      'x:1:2',
      'h'.repeat(254),
    ]) {
      expect(isHostValue(bad), bad).toBe(false);
    }
  });
});
