/**
 * Benchmark: how long durable enqueues stall the event loop. With `synchronous: 'full'` SQLite fsyncs the
 * WAL inside COMMIT, on the main thread: every other request of the process waits for the disk. With
 * `synchronous: 'full-async'` the same fsync runs on libuv's thread pool and callers still resolve only
 * after it. Same load (8 concurrent callers, a shop's checkout traffic), interleaved rounds, side by side;
 * printed: event-loop delay p50/p99 of each (median over rounds) and the ratio (target: full-async p99 well below full's).
 * Bounded: ROUNDS × JOBS enqueues per mode; temp files removed at the end.
 *
 * Run: node --conditions=@postback/source bench/sqlite-loop-delay.ts
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createSqliteOutbox } from '@postback/sqlite';

const ROUNDS = 4;
const JOBS = 1_500;
const CALLERS = 8;
const MODES = ['full', 'full-async'] as const;

const dir = mkdtempSync(join(tmpdir(), 'postback-bench-loop-'));
const clickedAt = Date.now() - 60_000;

interface ModeResult {
  p50: number[];
  p99: number[];
  jobs: number;
  ms: number;
}
const results: Record<(typeof MODES)[number], ModeResult> = {
  full: { p50: [], p99: [], jobs: 0, ms: 0 },
  'full-async': { p50: [], p99: [], jobs: 0, ms: 0 },
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of MODES) {
      const outbox = createSqliteOutbox({ filename: join(dir, `${mode}-${round}.db`), synchronous: mode });
      const monitor = monitorEventLoopDelay({ resolution: 1 });
      let next = 0;
      monitor.enable();
      const start = performance.now();
      await Promise.all(
        Array.from({ length: CALLERS }, async () => {
          while (next < JOBS) {
            const orderId = `ord_${next++}`;
            await outbox.confirm({ orderId, valueMicros: 1, click: { token: 'tok_loop', clickedAt } });
          }
        }),
      );
      const result = results[mode];
      result.ms += performance.now() - start;
      monitor.disable();
      result.jobs += JOBS;
      result.p50.push(monitor.percentile(50));
      result.p99.push(monitor.percentile(99));
      await outbox.close();
    }
  }
  const ms = (ns: number) => (ns / 1e6).toFixed(2);
  console.log(
    `event-loop delay during durable enqueues (${CALLERS} callers, ${ROUNDS} interleaved rounds of ${JOBS})`,
  );
  for (const mode of MODES) {
    const r = results[mode];
    console.log(
      `  ${mode.padEnd(10)} p50 ${ms(median(r.p50))} ms, p99 ${ms(median(r.p99))} ms, ` +
        `${Math.round((r.jobs / r.ms) * 1000)} jobs/s`,
    );
  }
  const full = results.full;
  const async = results['full-async'];
  console.log('ratios (full-async / full)');
  console.log(
    `  p99 event-loop delay: ${(median(async.p99) / median(full.p99)).toFixed(2)}x   (target < 0.5x)`,
  );
  console.log(`  enqueue rate:         ${(async.jobs / async.ms / (full.jobs / full.ms)).toFixed(2)}x`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
