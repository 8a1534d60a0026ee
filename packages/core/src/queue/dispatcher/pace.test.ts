/**
 * The adaptive pace's AIMD controller, on an injected clock and load source: it starts at one send in
 * flight; a busy host halves the sends in flight down to 1 and spaces their starts up to MAX_SEND_GAP_MS;
 * an idle one takes the gap away and grows the limit back; urgent jobs are told apart; `off` never holds a
 * send back.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../job-types.ts';
import type { HostLoad } from './host-load.ts';
import { MAX_OWN_MS_PER_UNIT } from './own-work.ts';
import {
  BUSY_DELAY_MS,
  BUSY_UTILIZATION,
  createPace,
  hostBusy,
  hostIdle,
  IDLE_UTILIZATION,
  MAX_SEND_GAP_MS,
  MIN_SEND_GAP_MS,
  PACE_SAMPLE_MS,
  RECORD_WAIT_MS,
  SLOW_START_SAMPLE_MS,
} from './pace.ts';

const BUSY: HostLoad = { utilization: 0.97, delayMs: 1 };
const IDLE: HostLoad = { utilization: 0.3, delayMs: 0.5 };

function paceWith(
  concurrency: number,
  mode: 'adaptive' | 'off' = 'adaptive',
  activeMs: () => number | null = () => null,
) {
  let t = 0;
  let load = IDLE;
  let reads = 0;
  let ready = 0;
  const pace = createPace({
    mode,
    concurrency,
    now: () => 1_000_000,
    clock: () => t,
    activeMs,
    load: () => {
      reads += 1;
      return load;
    },
    onReady: () => {
      ready += 1;
    },
  });
  pace.mayStart(0); // the baseline sample
  /** One sample period later, with the host as `next` says, asking whether a send may start. */
  const sample = (next: HostLoad, sending = 0) => {
    load = next;
    t += PACE_SAMPLE_MS;
    return pace.mayStart(sending);
  };
  return {
    pace,
    sample,
    advance: (ms: number) => {
      t += ms;
    },
    reads: () => reads,
    ready: () => ready,
  };
}

describe('createPace (adaptive)', () => {
  it('reads busy from a high utilization or a long event-loop delay, idle otherwise', () => {
    expect(hostBusy({ utilization: BUSY_UTILIZATION, delayMs: 0 })).toBe(true);
    expect(hostBusy({ utilization: 0.1, delayMs: BUSY_DELAY_MS })).toBe(true);
    expect(hostBusy({ utilization: BUSY_UTILIZATION - 0.01, delayMs: BUSY_DELAY_MS - 1 })).toBe(false);
    // A runtime without either signal: never busy, always idle.
    expect(hostBusy({ utilization: null, delayMs: null })).toBe(false);
    expect(hostIdle({ utilization: null, delayMs: null })).toBe(true);
    expect(hostIdle({ utilization: IDLE_UTILIZATION - 0.01, delayMs: 1 })).toBe(true);
    expect(hostIdle({ utilization: IDLE_UTILIZATION, delayMs: 1 })).toBe(false);
    expect(hostIdle({ utilization: 0.1, delayMs: BUSY_DELAY_MS / 2 })).toBe(false);
  });

  it("reads the others' utilization: the loop's less the share its own measured work takes", () => {
    // A drain alone keeping the loop 95 % busy with 2,000 sends a sample: its own work, so it keeps growing.
    const { pace, sample } = paceWith(8);
    for (let i = 0; i < 2; i++) sample(IDLE);
    expect(pace.limit).toBe(8);
    for (let i = 0; i < 2000; i++) pace.mayStart(0);
    sample({ utilization: 0.95, delayMs: 0 });
    expect(pace.limit).toBe(8);
    // The same loop with no sends of ours: someone else keeps it busy.
    sample({ utilization: 0.95, delayMs: 0 });
    expect(pace.limit).toBe(4);
  });

  it("reads the thread's CPU time as the loop's work: other processes holding the cores are not pages", () => {
    // The loop busy all the sample by the clock (and its timers 40 ms late) while the machine's other
    // processes hold the cores; the thread's 30 ms of CPU are all its 600 sends'.
    const { pace, sample } = paceWith(8);
    for (let i = 0; i < 2; i++) sample(IDLE);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 600; i++) pace.mayStart(0);
      sample({ utilization: 1, delayMs: 40, cpuMs: 30 });
      expect([pace.limit, pace.gapMs]).toEqual([8, 0]);
    }
  });

  it('pages beside a drain at full speed read busy, however many units each sample holds', () => {
    // 400 sends a sample (4,000 jobs a second) while the example shop's pages keep the thread 95 % busy:
    // every sample's work per unit is pages and sends together, so the measure alone would call it all
    // its own (at the old cap of 0.2 ms a unit: 80 of the 95 ms) and never give way.
    const { pace, sample } = paceWith(8);
    for (let i = 0; i < 2; i++) sample(IDLE);
    expect(pace.limit).toBe(8);
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 400; i++) pace.mayStart(0);
      sample({ utilization: 0.95, delayMs: 1, cpuMs: 95 });
    }
    expect(pace.limit).toBe(1);
  });

  it('takes at most MAX_OWN_MS_PER_UNIT a unit for its own: pages beside a fresh Dispatcher still read busy', () => {
    // 40 sends a sample while pages keep the loop 95 % busy: 2.4 ms a send if all were its own.
    const { pace, sample } = paceWith(8);
    for (let i = 0; i < 40; i++) pace.mayStart(0);
    sample({ utilization: 0.95, delayMs: 1, cpuMs: 95 });
    expect(40 * MAX_OWN_MS_PER_UNIT).toBeLessThan(95 - BUSY_UTILIZATION * 95);
    expect(pace.gapMs).toBe(MIN_SEND_GAP_MS);
  });

  it("reads the loop's utilization while it had nothing under way as the others', whatever the sample's", async () => {
    let active = 0;
    /** A sample in which the loop was busy `busyMs`, all of it while the Dispatcher was quiet. */
    const quietSample = (p: ReturnType<typeof paceWith>, busyMs: number) => {
      active += busyMs;
      p.sample(BUSY);
    };
    const alone = paceWith(8, 'adaptive', () => active);
    for (let i = 0; i < 2; i++) quietSample(alone, 97); // one send at a time, then a gap
    expect(alone.pace.gapMs).toBe(2 * MIN_SEND_GAP_MS);
    // Its send keeps the loop busy 30 ms (the whole sample reads BUSY), but the loop idles after it.
    let recorded = () => {};
    alone.pace.sent(new Promise<void>((resolve) => (recorded = resolve)));
    active += 30;
    alone.advance(30);
    recorded();
    await Promise.resolve();
    quietSample(alone, 2);
    expect(alone.pace.gapMs).toBe(MIN_SEND_GAP_MS);
    // Pages keep the loop busy while it has nothing under way: busy.
    const pages = paceWith(8, 'adaptive', () => active);
    for (let i = 0; i < 3; i++) quietSample(pages, 95);
    expect(pages.pace.gapMs).toBe(MAX_SEND_GAP_MS);
  });

  it('leaves out what kept the loop busy before its first look (the app starting up)', () => {
    let t = 0;
    let active = 0;
    const pace = createPace({
      mode: 'adaptive',
      concurrency: 4,
      now: () => 1_000_000,
      clock: () => t,
      load: () => IDLE,
      activeMs: () => active,
      onReady: () => {},
    });
    t += 500;
    active += 500; // created, then the app's own start-up work
    pace.mayStart(0); // started: the baseline
    t += PACE_SAMPLE_MS;
    active += 1;
    pace.mayStart(0);
    expect([pace.limit, pace.gapMs]).toEqual([3, 0]);
  });

  it("with a gap, starts the next send a gap after the last one's outcome is recorded", async () => {
    const { pace, sample, advance, ready } = paceWith(2);
    for (let i = 0; i < 2; i++) sample(BUSY);
    expect([pace.limit, pace.gapMs]).toEqual([1, 2 * MIN_SEND_GAP_MS]);
    advance(2 * MIN_SEND_GAP_MS);
    expect(pace.mayStart(0)).toBe(true);
    let recorded = () => {};
    pace.sent(new Promise<void>((resolve) => (recorded = resolve)));
    advance(40); // longer than the gap, within the sample
    expect(40).toBeLessThan(RECORD_WAIT_MS);
    expect(pace.mayStart(0)).toBe(false); // its outcome is still being recorded
    recorded();
    await Promise.resolve();
    expect(pace.mayStart(0)).toBe(false);
    advance(2 * MIN_SEND_GAP_MS);
    expect(pace.mayStart(0)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 3 * MIN_SEND_GAP_MS));
    expect(ready()).toBeGreaterThan(0);
  });

  it('once it gave way with a gap, holds it while the host is neither busy nor idle; grows otherwise', () => {
    const between: HostLoad = { utilization: (BUSY_UTILIZATION + IDLE_UTILIZATION) / 2, delayMs: 1 };
    const given = paceWith(8);
    for (let i = 0; i < 2; i++) given.sample(BUSY); // at one send from the start: gaps of 5, then 10 ms
    expect([given.pace.limit, given.pace.gapMs]).toEqual([1, 2 * MIN_SEND_GAP_MS]);
    for (let i = 0; i < 5; i++) given.sample(between);
    expect([given.pace.limit, given.pace.gapMs]).toEqual([1, 2 * MIN_SEND_GAP_MS]);
    // A drain alone loading the loop as much: no gap, so it grows to `concurrency`.
    const drain = paceWith(8);
    for (let i = 0; i < 3; i++) drain.sample(between);
    expect([drain.pace.limit, drain.pace.gapMs]).toEqual([8, 0]);
  });

  it('starts at one send in flight and grows to `concurrency` while the host is idle (slow start)', () => {
    const { pace, sample } = paceWith(8);
    expect(pace.limit).toBe(1);
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      sample(IDLE);
      seen.push(pace.limit);
    }
    expect(seen).toEqual([5, 8, 8, 8, 8]);
    expect(pace.gapMs).toBe(0);
  });

  it('halves the sends in flight while busy down to 1, then doubles the gap between starts up to MAX_SEND_GAP_MS', () => {
    const { pace, sample } = paceWith(8);
    for (let i = 0; i < 4; i++) sample(IDLE);
    expect(pace.limit).toBe(8);
    const seen: Array<[number, number]> = [];
    for (let i = 0; i < 7; i++) {
      sample(BUSY);
      seen.push([pace.limit, pace.gapMs]);
    }
    expect(seen).toEqual([
      [4, 0],
      [2, 0],
      [1, 0],
      [1, MIN_SEND_GAP_MS],
      [1, 2 * MIN_SEND_GAP_MS],
      [1, MAX_SEND_GAP_MS],
      [1, MAX_SEND_GAP_MS],
    ]);
  });

  it('takes the gap away, then grows the limit back additively once the host is idle', () => {
    const { pace, sample } = paceWith(8);
    for (let i = 0; i < 6; i++) sample(BUSY);
    const seen: Array<[number, number]> = [];
    for (let i = 0; i < 10; i++) {
      sample(IDLE);
      seen.push([pace.limit, pace.gapMs]);
    }
    expect(seen).toEqual([
      [1, 10],
      [1, 5],
      [1, 2],
      [1, 1],
      [1, 0],
      [5, 0],
      [8, 0],
      [8, 0],
      [8, 0],
      [8, 0],
    ]);
  });

  it('holds back a send beyond the limit, and one that comes before the gap is over (then says when ready)', async () => {
    const { pace, sample, advance, ready } = paceWith(2);
    expect(pace.mayStart(0)).toBe(true);
    expect(pace.mayStart(1)).toBe(false); // slow start: one in flight
    sample(IDLE);
    expect(pace.mayStart(1)).toBe(true);
    expect(sample(BUSY, 1)).toBe(false); // limit 1, one sending
    sample(BUSY, 1); // still busy at one send: a gap
    expect(pace.gapMs).toBe(MIN_SEND_GAP_MS);
    expect(pace.mayStart(0)).toBe(true);
    advance(MIN_SEND_GAP_MS - 1);
    expect(pace.mayStart(0)).toBe(false); // 1 ms before the gap is over
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ready()).toBe(1);
    advance(1);
    expect(pace.mayStart(0)).toBe(true);
  });

  it('looks every SLOW_START_SAMPLE_MS until it first reaches `concurrency`, then every PACE_SAMPLE_MS', () => {
    const { pace, reads, advance } = paceWith(4);
    advance(SLOW_START_SAMPLE_MS);
    pace.mayStart(0);
    expect([reads(), pace.limit]).toEqual([2, 3]);
    advance(SLOW_START_SAMPLE_MS);
    pace.mayStart(0);
    expect([reads(), pace.limit]).toEqual([3, 4]);
    advance(SLOW_START_SAMPLE_MS);
    pace.mayStart(0);
    expect(reads()).toBe(3);
    advance(PACE_SAMPLE_MS - SLOW_START_SAMPLE_MS);
    pace.mayStart(0);
    expect(reads()).toBe(4);
  });

  it('looks at the host at most once a sample period', () => {
    const { pace, reads, advance } = paceWith(4);
    for (let i = 0; i < 50; i++) pace.mayStart(0);
    expect(reads()).toBe(1);
    advance(PACE_SAMPLE_MS);
    pace.mayStart(0);
    expect(reads()).toBe(2);
  });

  it('tells urgent jobs (deadline within DEFAULT_URGENT_WITHIN_MS) apart', () => {
    const { pace } = paceWith(4);
    const job = (deadline: number | null) => ({ deadline }) as Job;
    expect(pace.urgent(job(1_000_000 + 3_600_000))).toBe(true);
    expect(pace.urgent(job(1_000_000 + 3_600_001))).toBe(false);
    expect(pace.urgent(job(null))).toBe(false);
  });
});

describe('createPace (off)', () => {
  it('never holds a send back and never reads the host', () => {
    const { pace, sample, reads } = paceWith(4, 'off');
    for (let i = 0; i < 10; i++) expect(sample(BUSY, 3)).toBe(true);
    expect(pace.limit).toBe(4);
    expect(reads()).toBe(0);
  });
});
