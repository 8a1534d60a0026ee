/**
 * Runs every benchmark one after another, each in its own Node process (so one's heap and open handles
 * never colour the next), and prints each one's own ratio lines. `npm run bench` runs this.
 *
 *   node --conditions=@postback/source bench/run-all.ts [name ...]   # e.g. `enqueue delivery`
 *
 * Each benchmark is bounded in count and time by itself; together they take several minutes on 2 cores.
 * Redis (127.0.0.1:6379) and PostgreSQL (127.0.0.1:5432) must be up for the BullMQ and pg-boss baselines.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Every benchmark file, in the order of the issues that set their targets. */
const BENCHMARKS = [
  'enqueue', // group commit vs per-job tx (>= 10x), vs raw batch (>= 0.5), vs BullMQ (ahead)
  'delivery', // Dispatcher vs bare loop (>= 0.8), vs BullMQ worker (ahead)
  'backlog', // worker peak RSS and the outbox's claim, 1,000,000 vs 1,000 pending (< 1.5x), stats time
  'capture', // middleware CPU per request in Express and Koa (no token, cookie >= 0.97; landing <= 10 µs over bare)
  'capture-instructions', // the same landing cost in CPU instructions (callgrind), immune to machine noise
  'postgres', // enqueue and claim/complete vs pg-boss, 4 workers vs 1 (>= 1.6x)
  'sqs', // SQS worker vs bare loop (>= 0.8), receive → send p99 (< 100 ms), drain of 2 jobs (< 2 s)
  'shop-under-delivery', // shop pages while its Dispatcher drains a backlog vs idle (>= 0.90 req/s, <= 1.3 p99), idle drain
  'rate-limit', // a key limited to N requests/s: 429s per delivered job (ours <= 0.05) and drain time vs a Retry-After loop
  'metrics-overhead', // delivery with Prometheus metrics and tracing on vs off (>= 0.95)
  'account-fairness', // a trickle of 19 accounts behind one account's 100,000-job backlog (p99 <= 2 claim rounds)
  'many-accounts', // Postgres claim CPU per job 10,000 / 20 accounts (<= 1.5x), a quiet account's trickle (p99 <= 2 rounds)
];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !BENCHMARKS.includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : BENCHMARKS) {
  console.log(`\n=== bench/${name}.ts`);
  const run = spawnSync(process.execPath, ['--conditions=@postback/source', join(here, `${name}.ts`)], {
    stdio: 'inherit',
    timeout: 300_000,
  });
  if (run.status !== 0) {
    failed += 1;
    console.error(`bench/${name}.ts exited with ${run.status ?? run.signal}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
