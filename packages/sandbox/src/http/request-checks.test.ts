/** The sandbox's own `Host` reader: every name, IPv4 and bracketed IPv6 host with a port, nothing else. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHost } from './request-checks.ts';

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9_-]{0,10}[a-z0-9])?$/);
const host = fc.oneof(
  fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join('.')),
  fc.ipV4(),
  fc.ipV6().map((ip) => `[${ip}]`),
);

describe('isHost', () => {
  it('accepts every name, IPv4 and bracketed IPv6 host, with a port of at most 65535 or none', () => {
    fc.assert(
      fc.property(host, fc.option(fc.integer({ min: 0, max: 65_535 })), (h, port) => {
        expect(isHost(port === null ? h : `${h}:${port}`)).toBe(true);
      }),
    );
  });

  it('never throws, and refuses what a Host cannot be', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => void isHost(s)),
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
      'x:',
      'h'.repeat(254),
    ]) {
      expect(isHost(bad), bad).toBe(false);
    }
  });
});
