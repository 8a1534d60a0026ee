import type { RunSummary } from '@postback/core';
import { describe, expect, it } from 'vitest';
import { DRAIN_RETRY_WAIT_MS, DRAIN_RETRY_WAITS, drainBatches } from './worker-drain.ts';

const summary = (claimed: number, retried: number): RunSummary => ({
  claimed,
  delivered: claimed - retried,
  retried,
  held: 0,
  dead: 0,
  expired: 0,
  unmatched: 0,
  shadowed: 0,
  deferred: 0,
  lost: 0,
});

/**
 * A Dispatcher handle over a clock: the first batch claims one job per delay in `firstRetries` and retries
 * each that much later; each later batch claims the retries due by then, and retries them again `againMs`
 * later when given (else delivers them).
 */
function fakeDispatcher(now: () => number, firstRetries: number[], againMs?: number) {
  const listeners: Array<(payload: unknown) => void> = [];
  let due: number[] = [];
  let runs = 0;
  let reclaimed = 0;
  const retry = (inMs: number) => {
    const nextAttemptAt = now() + inMs;
    due.push(nextAttemptAt);
    for (const listener of listeners) listener({ nextAttemptAt });
  };
  return {
    runs: () => runs,
    reclaimed: () => reclaimed,
    handle: {
      on: (_event: string, listener: (payload: unknown) => void) => void listeners.push(listener),
      paused: () => false,
      runOnce: async () => {
        runs += 1;
        if (runs === 1) {
          for (const inMs of firstRetries) retry(inMs);
          return summary(firstRetries.length, firstRetries.length);
        }
        const at = now();
        const claimed = due.filter((t) => t <= at);
        due = due.filter((t) => t > at);
        reclaimed += claimed.length;
        if (againMs !== undefined) for (const _ of claimed) retry(againMs);
        return summary(claimed.length, againMs === undefined ? 0 : claimed.length);
      },
    },
  };
}

const never = new Promise<never>(() => {});
const run = (handle: Parameters<typeof drainBatches>[0], now: () => number) =>
  drainBatches(handle, { now, interrupted: never, onBatch: () => {}, onRound: () => {} });

describe('drainBatches', () => {
  it('waits for each retry of its own due soon, the later one too', async () => {
    const d = fakeDispatcher(Date.now, [20, 80]);
    await run(d.handle, Date.now);
    expect(d.reclaimed()).toBe(2);
  });

  it('leaves a retry due later than DRAIN_RETRY_WAIT_MS to the next run', async () => {
    const d = fakeDispatcher(Date.now, [DRAIN_RETRY_WAIT_MS + 1_000]);
    const started = Date.now();
    await run(d.handle, Date.now);
    expect(d.reclaimed()).toBe(0);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('waits at most DRAIN_RETRY_WAITS times, however short the backoff', async () => {
    // Retried again 15 ms after each claim, for ever: each claim after the first needs a wait.
    const d = fakeDispatcher(Date.now, [15], 15);
    await run(d.handle, Date.now);
    expect(d.reclaimed()).toBeGreaterThan(0);
    expect(d.reclaimed()).toBeLessThanOrEqual(DRAIN_RETRY_WAITS + 1);
  });

  it('waits once on a clock that does not move', async () => {
    const frozen = () => 1_000_000;
    const d = fakeDispatcher(frozen, [30]);
    await run(d.handle, frozen);
    expect(d.runs()).toBe(3);
    expect(d.reclaimed()).toBe(0);
  });
});
