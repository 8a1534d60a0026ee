/**
 * Benchmark: do the SQLite outbox's claims, stats and dead-letter pages stay fast, and does a worker's
 * memory stay flat, when the backlog grows from 1,000 to 1,000,000 pending jobs? Each file is opened in
 * its own child process (so peak RSS is that process's alone) which runs the same operations — claim +
 * complete in a loop, stats, listDead — and reports its timings and peak RSS (VmHWM). Printed: the
 * 1,000,000 / 1,000 ratios. Target: RSS ratio < 1.5; claim and stats in milliseconds, not seconds.
 *
 * The files are filled with one raw batched INSERT (a recursive CTE) after the outbox created the schema,
 * so filling a million rows takes seconds. Bounded: fixed counts, and each child is killed after 60 s.
 *
 *   node --conditions=@postback/source bench/sqlite-backlog.ts [--large 1000000] [--small 1000]
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { deadlineOf } from '@postback/core';
import { createSqliteOutbox } from '@postback/sqlite';

const { values } = parseArgs({
  options: {
    large: { type: 'string', default: '1000000' },
    small: { type: 'string', default: '1000' },
    child: { type: 'string' },
  },
});

const CLAIMS = 200;
const CLAIM_LIMIT = 4;
const STATS = 20;

interface ChildReport {
  claimMsMedian: number;
  claimMsMax: number;
  statsMsMedian: number;
  listDeadMs: number;
  peakRssMb: number;
  pending: number;
}

function peakRssMb(): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
  return Number.isFinite(kb) ? kb / 1024 : process.memoryUsage().rss / 1024 / 1024;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** The child: one worker's life against the file — claims, completions, stats, a dead-letter page. */
async function child(file: string): Promise<void> {
  const outbox = createSqliteOutbox({ filename: file });
  const now = Date.now();
  const claimTimes: number[] = [];
  for (let i = 0; i < CLAIMS; i++) {
    const start = performance.now();
    const jobs = await outbox.claim({ now, limit: CLAIM_LIMIT, leaseMs: 60_000 });
    claimTimes.push(performance.now() - start);
    // Half delivered, half dead: the dead ones give listDead a page to read.
    await Promise.all(
      jobs.map((job, k) =>
        k % 2 === 0
          ? outbox.complete(job, { now, campaignId: 'cmp_bench' })
          : outbox.fail(job, { now, state: 'dead', reason: 'HTTP 422: bench' }),
      ),
    );
  }
  const statsTimes: number[] = [];
  let pending = 0;
  for (let i = 0; i < STATS; i++) {
    const start = performance.now();
    pending = (await outbox.stats(now)).counts.pending;
    statsTimes.push(performance.now() - start);
  }
  const start = performance.now();
  await outbox.listDead({ limit: 100 });
  const listDeadMs = performance.now() - start;
  await outbox.close();
  const report: ChildReport = {
    claimMsMedian: median(claimTimes),
    claimMsMax: Math.max(...claimTimes),
    statsMsMedian: median(statsTimes),
    listDeadMs,
    peakRssMb: peakRssMb(),
    pending,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

/** Creates the schema through the outbox, then inserts `count` pending confirmations in one statement. */
async function fill(file: string, count: number): Promise<number> {
  const start = performance.now();
  await createSqliteOutbox({ filename: file }).close();
  const db = new DatabaseSync(file);
  const clickedAt = Date.now() - 60_000;
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
     INSERT INTO jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
                       click_token, value_micros, clicked_at)
     SELECT 'confirm', 'ord_' || i, 'pending', 0, ?1 + i, ?1 + i, ?1 + i, ?2, 'tok_' || i, 1000 * i, ?1 FROM n`,
  ).run(clickedAt, deadlineOf(clickedAt), count);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return performance.now() - start;
}

function runChild(file: string): Promise<ChildReport> {
  const script = fileURLToPath(import.meta.url);
  const proc = spawn(process.execPath, ['--conditions=@postback/source', script, '--child', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(JSON.parse(out) as ChildReport);
      else reject(new Error(`child for ${file} exited with ${code}`));
    });
  });
}

if (values.child !== undefined) {
  await child(values.child);
} else {
  const LARGE = Number(values.large);
  const SMALL = Number(values.small);
  const dir = mkdtempSync(join(tmpdir(), 'postback-bench-backlog-'));
  try {
    const small = join(dir, 'small.db');
    const large = join(dir, 'large.db');
    const fillSmallMs = await fill(small, SMALL);
    const fillLargeMs = await fill(large, LARGE);
    console.log(
      `filled ${SMALL.toLocaleString('en-US')} rows in ${Math.round(fillSmallMs)} ms, ${LARGE.toLocaleString('en-US')} rows in ${Math.round(fillLargeMs)} ms`,
    );
    const a = await runChild(small);
    const b = await runChild(large);
    const row = (name: string, r: ChildReport) =>
      `  ${name.padEnd(10)} claim median ${r.claimMsMedian.toFixed(2)} ms (max ${r.claimMsMax.toFixed(1)}), stats ${r.statsMsMedian.toFixed(1)} ms, ` +
      `listDead ${r.listDeadMs.toFixed(2)} ms, peak RSS ${r.peakRssMb.toFixed(1)} MB, ${r.pending.toLocaleString('en-US')} still pending`;
    console.log(
      `SQLite outbox with a backlog, ${CLAIMS} claims of ${CLAIM_LIMIT} + completions, ${STATS} stats, one listDead page`,
    );
    console.log(row(SMALL.toLocaleString('en-US'), a));
    console.log(row(LARGE.toLocaleString('en-US'), b));
    console.log('ratios (large / small)');
    console.log(`  peak RSS:     ${(b.peakRssMb / a.peakRssMb).toFixed(2)}x   (target < 1.5x)`);
    console.log(`  claim median: ${(b.claimMsMedian / a.claimMsMedian).toFixed(2)}x`);
    console.log(
      `  stats median: ${(b.statsMsMedian / a.statsMsMedian).toFixed(2)}x   (counts read a covering index: grows with rows, memory does not)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
