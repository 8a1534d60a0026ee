/**
 * The quiet time of a Dispatcher (`quiet-time.ts`) on an injected clock and loop: the loop's utilization
 * while nothing of its own was under way, none under MIN_QUIET_MS of it.
 */
import { describe, expect, it } from 'vitest';
import { createQuietTime, MIN_QUIET_MS } from './quiet-time.ts';

function meter(knownActive = true) {
  let t = 0;
  let active = 0;
  const quiet = createQuietTime(
    () => (knownActive ? active : null),
    () => t,
  );
  /** `ms` pass, the loop busy `busyMs` of them. */
  const pass = (ms: number, busyMs: number) => {
    t += ms;
    active += busyMs;
  };
  return { quiet, pass };
}

describe('createQuietTime', () => {
  it('counts only the time with nothing of its own under way, nested work included', () => {
    const { quiet, pass } = meter();
    pass(20, 2); // quiet
    quiet.begin();
    quiet.begin(); // two sends
    pass(50, 50);
    quiet.end();
    pass(10, 10); // still working
    quiet.end();
    pass(30, 3); // quiet again
    expect(quiet.take()).toBeCloseTo(5 / 50);
    // Counting starts again at each take.
    pass(20, 20);
    expect(quiet.take()).toBe(1);
  });

  it('says nothing under MIN_QUIET_MS of quiet time, nor where the runtime cannot tell busy time', () => {
    const short = meter();
    short.quiet.begin();
    short.pass(100, 90);
    short.quiet.end();
    short.pass(MIN_QUIET_MS - 1, 0);
    expect(short.quiet.take()).toBeNull();
    const unknown = meter(false);
    unknown.pass(100, 0);
    expect(unknown.quiet.take()).toBeNull();
  });
});
