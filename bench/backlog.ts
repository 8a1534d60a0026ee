/**
 * Benchmark: does a worker's memory grow with the backlog? Peak RSS of `postback worker` (a child
 * process, SQLite outbox, delivering to the sandbox) run for a fixed time against a file with 1,000,000
 * pending jobs versus one with 1,000, side by side in one run. Target: ratio < 1.5.
 * `bench/sqlite-backlog.ts` measures the store alone (claim, stats, listDead in a child process); this one
 * measures the whole worker — Dispatcher, client, outbox — as an operator runs it.
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
import { startSandboxWorld } from '@postback/sandbox/testing';
import { createSqliteOutbox } from '@postback/sqlite';

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

function peakRssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) : Number.NaN;
}

async function measure(jobs: number): Promise<{ peakMb: number; delivered: number; fillS: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'postback-backlog-'));
  const world = await startSandboxWorld();
  try {
    const [click] = await world.clicks(1);
    if (click === undefined) throw new Error('no click');
    const file = join(dir, 'backlog.db');
    const t0 = performance.now();
    fill(file, jobs, click.token, click.clickedAt);
    const fillS = (performance.now() - t0) / 1000;
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
    return { peakMb: peak / 1024, delivered, fillS };
  } finally {
    await world.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const small = await measure(SMALL);
const large = await measure(LARGE);
const ratio = large.peakMb / small.peakMb;
console.log(
  `backlog: worker peak RSS over ${RUN_MS / 1000} s, ${CONCURRENCY} sends in flight, sandbox latency ${LATENCY_MS} ms`,
);
console.log(
  `  ${SMALL.toLocaleString('en')} pending:     ${small.peakMb.toFixed(1)} MB (delivered ${small.delivered})`,
);
console.log(
  `  ${LARGE.toLocaleString('en')} pending: ${large.peakMb.toFixed(1)} MB (delivered ${large.delivered}; fill ${large.fillS.toFixed(1)} s)`,
);
console.log(`  ratio large/small: ${ratio.toFixed(2)} (target < 1.5) ${ratio < 1.5 ? 'OK' : 'MISSED'}`);
