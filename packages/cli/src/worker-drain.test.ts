import type { RunSummary } from '@postback/core';
import { describe, expect, it } from 'vitest';
import { DRAIN_RETRY_WAIT_MS, DRAIN_RETRY_WAITS, drainBatches } from './worker-drain.ts';

const summary = (claimed: number, retried = 0): RunSummary => ({
  claimed,
  delivered: claimed - retried,
  retried,
  dead: 0,
  expired: 0,
  deferred: 0,
  lost: 0,
});

/** A Dispatcher handle whose batches are scripted: each may retry jobs due again `inMs` from now. */
function scripted(now: () => number, batches: Array<{ claimed: number; retryInMs?: number[] }>) {
  const listeners: Array<(payload: unknown) => void> = [];
  let runs = 0;
  return {
    runs: () => runs,
    handle: {
      on: (_event: string, listener: (payload: unknown) => void) => void listeners.push(listener),
      paused: () => false,
      runOnce: async () => {
        const batch = batches[runs++] ?? { claimed: 0 };
        for (const inMs of batch.retryInMs ?? [])
          for (const l of listeners) l({ nextAttemptAt: now() + inMs });
        return summary(batch.claimed, batch.retryInMs?.length ?? 0);
      },
    },
  };
}

const never = new Promise<never>(() => {});
const run = (handle: Parameters<typeof drainBatches>[0], now: () => number) =>
  drainBatches(handle, { now, interrupted: never, onBatch: () => {}, onRound: () => {} });

describe('drainBatches', () => {
  it('waits for each retry of its own due soon, the later one too', async () => {
    const d = scripted(Date.now, [
      { claimed: 2, retryInMs: [20, 60] },
      { claimed: 0 },
      { claimed: 1 },
      { claimed: 0 },
      { claimed: 1 },
      { claimed: 0 },
    ]);
    await run(d.handle, Date.now);
    expect(d.runs()).toBe(6);
  });

  it('leaves a retry due later than DRAIN_RETRY_WAIT_MS to the next run', async () => {
    const d = scripted(Date.now, [{ claimed: 1, retryInMs: [DRAIN_RETRY_WAIT_MS + 1_000] }]);
    const started = Date.now();
    await run(d.handle, Date.now);
    expect(d.runs()).toBe(2);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('waits at most DRAIN_RETRY_WAITS times, however short the backoff', async () => {
    const batches = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? { claimed: 1, retryInMs: [1] } : { claimed: 0 },
    );
    const d = scripted(Date.now, batches);
    await run(d.handle, Date.now);
    expect(d.runs()).toBe(2 * (DRAIN_RETRY_WAITS + 1));
  });

  it('waits once on a clock that does not move', async () => {
    const frozen = () => 1_000_000;
    const d = scripted(frozen, [{ claimed: 1, retryInMs: [30] }]);
    await run(d.handle, frozen);
    expect(d.runs()).toBe(3);
  });
});
