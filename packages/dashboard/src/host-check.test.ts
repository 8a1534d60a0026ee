import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkHost, isLoopbackAddress, parseHost } from './host-check.ts';

describe('parseHost', () => {
  it('reads names, addresses and ports, and refuses what is not a host', () => {
    expect(parseHost('LocalHost:4020')).toEqual({ hostname: 'localhost', port: 4020 });
    expect(parseHost('[::1]:80')).toEqual({ hostname: '[::1]', port: 80 });
    expect(parseHost('ops.example.com.')).toEqual({ hostname: 'ops.example.com', port: null });
    for (const bad of [
      '[',
      'a b',
      'x:99999999',
      '[::1',
      '',
      'h\u00e9h',
      'localhost:-1',
      'a/b',
      '%zz',
      'a@b',
      ':80',
      '[zz]',
    ])
      expect(parseHost(bad), bad).toBeNull();
  });

  it('never throws, and what it accepts a URL parser takes with the same host name', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.string({ unit: fc.constantFrom(...'0123456789abfx.:[]-_% '), maxLength: 24 }),
        ),
        (value) => {
          const host = parseHost(value);
          if (host !== null) expect(() => new URL(`http://${value}/`)).not.toThrow();
        },
      ),
      { numRuns: 10_000 },
    );
    fc.assert(
      fc.property(fc.domain(), fc.option(fc.integer({ min: 0, max: 65_535 })), (name, port) => {
        expect(parseHost(port === null ? name : `${name}:${port}`)).toEqual({
          hostname: name.toLowerCase(),
          port,
        });
      }),
    );
  });
});

describe('the Host rule', () => {
  it('guards loopback, or every address once allowedHosts are given', () => {
    const loopback = { allowedHosts: [], localAddress: '127.0.0.1' };
    expect(() => checkHost('evil.example', loopback)).toThrow(/rebinding/);
    expect(() => checkHost('127.0.0.1:9', loopback)).not.toThrow();
    expect(() => checkHost('evil.example', { allowedHosts: [], localAddress: '10.0.0.5' })).not.toThrow();
    expect(() =>
      checkHost('evil.example', { allowedHosts: ['ops.example'], localAddress: undefined }),
    ).toThrow();
    expect(() =>
      checkHost('ops.example:443', { allowedHosts: ['ops.example'], localAddress: undefined }),
    ).not.toThrow();
    expect(isLoopbackAddress('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopbackAddress('::')).toBe(false);
  });
});
