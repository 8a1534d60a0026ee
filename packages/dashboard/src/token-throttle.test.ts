import { describe, expect, it } from 'vitest';
import { clientKey, createTokenThrottle } from './token-throttle.ts';

describe('the token throttle', () => {
  it('keys IPv4 by address, IPv6 by its /64, and a mapped IPv4 as the IPv4', () => {
    expect(clientKey('203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002::9%eth0')).toBe('2001:db8:1:2::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey(undefined)).toBe('');
  });

  it('keeps a bounded table: when every slot is in use, new addresses share one overflow record', () => {
    let now = 0;
    const throttle = createTokenThrottle({
      maxFailures: 3,
      lockoutMs: 1_000,
      now: () => now,
      maxClients: 100,
    });
    for (let i = 0; i < 1_000; i++) throttle.failed(`10.0.${i >> 8}.${i & 255}`);
    expect(throttle.size).toBeLessThanOrEqual(101);
    // The 900 addresses beyond the table failed into the overflow record: it is locked, and so is any
    // address without a record of its own while the table is full.
    expect(throttle.lockedFor('192.0.2.1')).toBeGreaterThan(0);
    expect(throttle.lockedFor('10.0.0.1')).toBe(0); // its own record: one failure
    // An hour later the idle records are dropped, and a new address gets its own record again.
    now += 3_600_001 + 64_000;
    throttle.failed('192.0.2.1');
    expect(throttle.lockedFor('192.0.2.1')).toBe(0);
    expect(throttle.size).toBeLessThanOrEqual(101);
  });

  it('doubles each lock-out in a row, up to 64 times, and forgets an address after the right token', () => {
    let now = 0;
    const throttle = createTokenThrottle({ maxFailures: 2, lockoutMs: 1_000, now: () => now });
    const lockOut = () => {
      throttle.failed('a');
      throttle.failed('a');
      const ms = throttle.lockedFor('a');
      now += ms;
      return ms;
    };
    expect([lockOut(), lockOut(), lockOut()]).toEqual([1_000, 2_000, 4_000]);
    for (let i = 0; i < 10; i++) lockOut();
    expect(lockOut()).toBe(64_000);
    throttle.succeeded('a');
    expect(lockOut()).toBe(1_000);
  });
});
