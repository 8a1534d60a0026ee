/**
 * Benchmark: does a worker slow down or grow with the backlog? Against a file with 1,000,000 pending jobs
 * versus one with 1,000, side by side in one run:
 *  - peak RSS of `postback worker` (a child process, SQLite outbox, delivering to the sandbox) run for a
 *    fixed time, as an operator runs it — target: ratio < 1.5;
 *  - before it, the SQLite outbox's own timings on the same file, in this process: a claim of 16 jobs (what
 *    the Dispatcher does per batch; released at once) and `stats` (what `postback status` and the
 *    dashboard read) — targets: a claim as fast on the large file (ratio < 1.5), stats in ms, not seconds.
 *
 * The files are filled with one raw batched INSERT (a recursive CTE) after `@postback/sqlite` created the
 * schema, so the fill takes seconds, not minutes. The worker's peak RSS is read from `/proc/<pid>/status`
 * (VmHWM) just before it is stopped with SIGTERM. The sandbox answers slowly enough that the small backlog
 * lasts the whole run: both workers deliver the same number of jobs, and only the backlog differs.
 *
 *   node --conditions=@postback/source bench/backlog.ts [--large 1000000] [--small 1000] [--seconds 8]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { deadlineOf } from '@postback/core';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { createSqliteOutbox } from '@postback/sqlite';
import { median } from './run-world.ts';

const BIN = fileURLToPath(new URL('../packages/cli/bin/postback.js', import.meta.url));

const { values } = parseArgs({
  options: {
    large: { type: 'string', default: '1000000' },
    small: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '8' },
  },
});
const LARGE = Number(values.large);
const SMALL = Number(values.small);
const RUN_MS = Number(values.seconds) * 1000;
/** Sends in flight (the worker's `--concurrency`). */
const CONCURRENCY = 50;
/**
 * Latency of every sandbox answer: long enough that the small backlog lasts the whole run (with a quarter
 * to spare), so both workers are busy all the time and deliver at the same pace. Otherwise the small one
 * would be idle after a fraction of a second while the large one delivers for the whole run, and the
 * ratio would compare a busy process with an idle one rather than two backlogs.
 */
const LATENCY_MS = Math.ceil((1.25 * RUN_MS * CONCURRENCY) / SMALL);

/** Creates the schema through the outbox, then inserts `count` pending confirmations in one statement. */
function fill(file: string, count: number, token: string, clickedAt: number): void {
  createSqliteOutbox({ filename: file }).close();
  const db = new DatabaseSync(file);
  db.exec('PRAGMA synchronous = OFF');
  const deadline = deadlineOf(clickedAt);
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
                       click_token, value_micros, clicked_at)
     SELECT 'confirm', 'bk-' || i, 'pending', 0, ?, ?, ?, ?, ?, 1000, ? FROM n`,
  ).run(count, clickedAt, clickedAt, clickedAt, deadline, token, clickedAt);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
}

/** Claims timed on each file (each released at once), and stats reads, alternating between the files. */
const CLAIMS = 50;
const STATS = 10;

/**
 * The outbox's claim (16 jobs, then released) and stats, timed on each file, the files in turn so that a
 * burst of load elsewhere hits both: medians in ms. The timing outbox writes on the calling thread at
 * `synchronous: 'normal'`, so that a claim's time is its reads and its `UPDATE`, not a message hop or an
 * fsync (neither depends on the backlog).
 */
async function storeTimings(files: string[]): Promise<Array<{ claimMs: number; statsMs: number }>> {
  const outboxes = files.map((filename) =>
    createSqliteOutbox({ filename, thread: false, synchronous: 'normal' }),
  );
  try {
    const claims = files.map(() => [] as number[]);
    const stats = files.map(() => [] as number[]);
    for (let i = 0; i < CLAIMS; i++) {
      for (const [k, outbox] of outboxes.entries()) {
        const now = Date.now();
        const start = performance.now();
        const jobs = await outbox.claim({ now, limit: 16, leaseMs: 60_000 });
        claims[k]?.push(performance.now() - start);
        await outbox.release(jobs, now);
      }
    }
    for (let i = 0; i < STATS; i++) {
      for (const [k, outbox] of outboxes.entries()) {
        const start = performance.now();
        await outbox.stats(Date.now());
        stats[k]?.push(performance.now() - start);
      }
    }
    return files.map((_, k) => ({ claimMs: median(claims[k] ?? []), statsMs: median(stats[k] ?? []) }));
  } finally {
    for (const outbox of outboxes) await outbox.close();
  }
}

function peakRssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) : Number.NaN;
}

/** A sandbox world and a file of `jobs` pending confirmations of one of its clicks. */
interface Backlog {
  world: SandboxWorld;
  file: string;
  fillS: number;
}

async function prepare(dir: string, jobs: number): Promise<Backlog> {
  const world = await startSandboxWorld();
  const [click] = await world.clicks(1);
  if (click === undefined) throw new Error('no click');
  const file = join(dir, `backlog-${jobs}.db`);
  const t0 = performance.now();
  fill(file, jobs, click.token, click.clickedAt);
  return { world, file, fillS: (performance.now() - t0) / 1000 };
}

/** Runs `postback worker` on the backlog for RUN_MS: its peak RSS and what it delivered. */
async function runWorker({ world, file }: Backlog): Promise<{ peakMb: number; delivered: number }> {
  // Sends in flight for the whole run, at the same pace in both runs (see LATENCY_MS).
  await world.setFaults({ latency_ms: LATENCY_MS });
  const child = spawn(
    process.execPath,
    [
      '--conditions=@postback/source',
      BIN,
      'worker',
      '--db',
      file,
      '--base-url',
      world.url,
      '--concurrency',
      String(CONCURRENCY),
      '--log',
      'json',
    ],
    {
      env: { PATH: process.env.PATH ?? '', POSTBACK_API_KEY: world.conversionsKey },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve) => setTimeout(resolve, RUN_MS));
  const peak = peakRssKb(child.pid as number);
  child.kill('SIGTERM');
  await exited;
  const delivered = (await world.conversions()).conversions.length;
  return { peakMb: peak / 1024, delivered };
}

const dir = mkdtempSync(join(tmpdir(), 'postback-backlog-'));
const backlogs: Backlog[] = [];
try {
  backlogs.push(await prepare(dir, SMALL), await prepare(dir, LARGE));
  const [smallBacklog, largeBacklog] = backlogs as [Backlog, Backlog];
  const [smallStore, largeStore] = (await storeTimings([smallBacklog.file, largeBacklog.file])) as [
    { claimMs: number; statsMs: number },
    { claimMs: number; statsMs: number },
  ];
  const small = { ...smallBacklog, ...smallStore, ...(await runWorker(smallBacklog)) };
  const large = { ...largeBacklog, ...largeStore, ...(await runWorker(largeBacklog)) };
  const ratio = large.peakMb / small.peakMb;
  const claimRatio = large.claimMs / small.claimMs;
  const verdict = (ok: boolean) => (ok ? 'OK' : 'MISSED');
  console.log(
    `backlog: worker peak RSS over ${RUN_MS / 1000} s, ${CONCURRENCY} sends in flight, sandbox latency ${LATENCY_MS} ms; ` +
      `outbox claim of 16 (median of ${CLAIMS}) and stats (median of ${STATS}) on the same files, in turn`,
  );
  for (const [count, m] of [
    [SMALL, small],
    [LARGE, large],
  ] as const) {
    console.log(
      `  ${count.toLocaleString('en').padStart(9)} pending: ${m.peakMb.toFixed(1)} MB (delivered ${m.delivered}), ` +
        `claim ${m.claimMs.toFixed(2)} ms, stats ${m.statsMs.toFixed(1)} ms (fill ${m.fillS.toFixed(1)} s)`,
    );
  }
  console.log(`  peak RSS large/small: ${ratio.toFixed(2)} (target < 1.5) ${verdict(ratio < 1.5)}`);
  console.log(`  claim large/small:    ${claimRatio.toFixed(2)} (target < 1.5) ${verdict(claimRatio < 1.5)}`);
  console.log(
    `  stats on ${LARGE.toLocaleString('en')} jobs: ${large.statsMs.toFixed(1)} ms (target < 1000 ms: a count over an index) ${verdict(large.statsMs < 1000)}`,
  );
} finally {
  for (const { world } of backlogs) await world.close();
  rmSync(dir, { recursive: true, force: true });
}
