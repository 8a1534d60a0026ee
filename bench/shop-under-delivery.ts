/**
 * Benchmark: what delivering a backlog costs the pages of the shop it runs in. The example Express shop
 * runs in a child process with an in-process Dispatcher and its SQLite outbox (`shop-process.ts`); the
 * sandbox runs in another child process, as the ad service runs elsewhere in production; autocannon loads
 * the pages from this process.
 *
 * The page load (a landing with a click token, `/?click_token=…`, the capture path: cookie signed and set;
 * and the plain page `/`, in turn on each connection) runs without a break through a segment of
 * `--windows` windows of `--window` seconds, idle and busy in ABBA order (idle busy, busy idle, …): in a
 * busy window a Dispatcher drains the backlog enqueued before the segment, in an idle one no Dispatcher
 * runs. The machine is shared and its load moves from second to second, so each figure is taken per pair
 * of adjacent windows (the responses of the first `SETTLE_MS` of a window are left out: their requests
 * began in the window before), then the median over every pair of every round:
 *   page throughput busy / idle   target >= 0.90
 *   p99 page latency busy / idle  target <= 1.3  (each response's own time, to the µs: autocannon's
 *                                                 histogram keeps whole milliseconds)
 *   jobs/s delivered in the busy windows
 * and, each round, the drain of `--jobs` jobs with no page load (full speed), timed to the last delivery.
 * A setup is what the shop's backend is built with (`SETUPS` in `shop-process.ts`): add one to compare it
 * side by side; each round runs the setups in ABBA order too.
 *
 *   node --conditions=@postback/source bench/shop-under-delivery.ts [--rounds 4] [--windows 8]
 *     [--window 2] [--jobs 10000] [--connections 10] [--setups a,b] [--quick]
/** The pages' side of one window: responses counted after the settle time, and their latencies. */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { withWorld } from './run-world.ts';
import { startChildSandboxWorld } from './sandbox-process.ts';
import { SETUPS, type ShopChild, type Spent, startShopChild } from './shop-process.ts';

const SECRET = 'bench-secret-0123456789-abcdefghijklmnop';
/** Responses this long after a window began are counted in it; earlier ones began in the window before. */
const SETTLE_MS = 250;
/**
 * No round starts after this much time per round and setup asked for (the defaults: 200 s, within the
 * 300 s `run-all.ts` allows a benchmark), however slow the machine.
 */
const ROUND_LIMIT_MS = 50_000;

/** autocannon with a mix of pages, each response's own time (fractional ms), stopped on demand. */
const autocannon = createRequire(import.meta.url)('autocannon') as (options: {
  url: string;
  connections: number;
  duration: number;
  requests: Array<{ method: 'GET'; path: string }>;
}) => Promise<{ non2xx: number; errors: number }> & {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  stop(): void;
};

interface Window {
  busy: boolean;
  from: number;
  to: number;
  latencies: number[];
  /** The shop's side, as the child reported it when the window ended. */
  shop?: Spent & { left: number };
}

/** One adjacent idle/busy pair of windows. */
interface Pair {
  rpsRatio: number;
  p99Ratio: number;
  busyJobsPerSecond: number;
  /** The busy window ended with its backlog gone (partly idle: raise `--jobs`). */
  ranOut: boolean;
}

/** The 99th percentile of `values` (nearest rank). */
function p99(values: number[]): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] as number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** `median (min–max)` of `values`, with `digits` decimals. */
function spread(values: number[], digits: number): string {
  const [min, max] = [Math.min(...values), Math.max(...values)];
  return `${median(values).toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One segment: the pages loaded without a break through `windows` idle and busy windows (ABBA) while the
 * shop delivers, in the busy ones, a backlog of `backlog` jobs enqueued before; its adjacent pairs.
 */
async function segment(
  shop: ShopChild,
  pages: Array<{ method: 'GET'; path: string }>,
  run: {
    setup: string;
    prefix: string;
    backlog: number;
    windows: number;
    windowMs: number;
    connections: number;
  },
): Promise<Pair[]> {
  await shop.ask(`open ${run.setup} ${run.backlog} ${run.prefix}`);
  const windows: Window[] = [];
  let current: Window | null = null;
  const load = autocannon({
    url: shop.url,
    connections: run.connections,
    duration: (run.windows * run.windowMs) / 1000 + 60,
    requests: pages,
  });
  load.on('response', (_client, _status, _bytes, ms) => {
    const at = performance.now();
    if (current !== null && at >= current.from) current.latencies.push(ms);
  });
  await sleep(SETTLE_MS); // connections open, JIT warm for this segment
  for (let i = 0; i < run.windows; i++) {
    const busy = i % 4 === 1 || i % 4 === 2; // idle busy busy idle …
    const shop_ = await shop.ask<Spent & { left: number }>(`deliver ${busy ? 'on' : 'off'}`);
    if (current !== null) {
      current.to = performance.now();
      current.shop = shop_;
    }
    current = { busy, from: performance.now() + SETTLE_MS, to: 0, latencies: [] };
    windows.push(current);
    await sleep(run.windowMs);
  }
  const last = await shop.ask<Spent & { left: number }>('deliver off');
  (current as Window).to = performance.now();
  (current as Window).shop = last;
  current = null;
  load.stop();
  const result = await load;
  await shop.ask('close');
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`pages: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  }
  const pairs: Pair[] = [];
  for (let i = 0; i + 1 < windows.length; i += 2) {
    const [a, b] = [windows[i] as Window, windows[i + 1] as Window];
    const [idle, busy] = a.busy ? [b, a] : [a, b];
    const rps = (w: Window) => w.latencies.length / ((w.to - w.from) / 1000);
    const shopSide = busy.shop as Spent & { left: number };
    pairs.push({
      rpsRatio: rps(busy) / rps(idle),
      p99Ratio: p99(busy.latencies) / p99(idle.latencies),
      busyJobsPerSecond: shopSide.delivered / (shopSide.ms / 1000),
      ranOut: shopSide.left === 0,
    });
  }
  return pairs;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string' },
      windows: { type: 'string' },
      window: { type: 'string' },
      jobs: { type: 'string' },
      connections: { type: 'string' },
      /** Comma-separated names of `SETUPS` to compare (all by default). */
      setups: { type: 'string' },
      /** A tiny configuration for a smoke run. */
      quick: { type: 'boolean', default: false },
    },
  });
  const quick = values.quick;
  const rounds = Number(values.rounds ?? (quick ? 2 : 4));
  const windows = Number(values.windows ?? (quick ? 4 : 8));
  const windowMs = Number(values.window ?? (quick ? 1 : 2)) * 1000;
  const jobs = Number(values.jobs ?? (quick ? 300 : 10_000));
  const connections = Number(values.connections ?? 10);
  const setups = values.setups?.split(',') ?? Object.keys(SETUPS);
  const unknown = setups.filter((name) => SETUPS[name] === undefined);
  if (unknown.length > 0) throw new Error(`unknown setup(s) ${unknown}; known: ${Object.keys(SETUPS)}`);
  /** Enough for every busy window at 3,000 jobs/s, so that no busy window runs out of work. */
  const backlog = Math.ceil(((windows / 2) * (windowMs + 500) * 3_000) / 1000);

  await withWorld(startChildSandboxWorld, async (world, tokens) => {
    const shop = await startShopChild({
      PORT: '0',
      HOST: '127.0.0.1',
      POSTBACK_API_URL: world.url,
      POSTBACK_API_KEY: world.conversionsKey,
      POSTBACK_SECRET: SECRET,
      POSTBACK_WORKER: 'on',
      BENCH_CLICK_TOKENS: tokens.join(','),
    });
    try {
      const pages: Array<{ method: 'GET'; path: string }> = [
        { method: 'GET', path: `/?click_token=${tokens[0]}` },
        { method: 'GET', path: '/' },
      ];
      console.log(
        `shop under delivery: Express example shop in a child process, sandbox in another; ${connections} connections ` +
          `on /?click_token=… and / in turn; per round and setup ${windows} windows of ${windowMs / 1000} s ` +
          `(idle/busy ABBA, backlog ${backlog} jobs) and a drain of ${jobs} jobs; ${rounds} rounds, Node ${process.version}`,
      );
      let segments = 0;
      const options = (setup: string, count: number) => ({
        setup,
        prefix: `s${++segments}`,
        backlog: count,
        connections,
      });
      // Warm-up, untimed: JIT, the sandbox's first accounts of conversions, an outbox thread's start.
      for (const setup of setups)
        await segment(shop, pages, { ...options(setup, 2_000), windows: 2, windowMs: 1_000 });
      const pairs: Record<string, Pair[]> = Object.fromEntries(setups.map((setup) => [setup, []]));
      const drains: Record<string, Spent[]> = Object.fromEntries(setups.map((setup) => [setup, []]));
      const began = Date.now();
      for (
        let round = 0;
        round < rounds && Date.now() - began < ROUND_LIMIT_MS * rounds * setups.length;
        round++
      ) {
        for (const setup of round % 2 === 0 ? setups : [...setups].reverse()) {
          pairs[setup]?.push(
            ...(await segment(shop, pages, { ...options(setup, backlog), windows, windowMs })),
          );
          await shop.ask(`open ${setup} ${jobs} s${++segments}`);
          drains[setup]?.push(await shop.ask<Spent>('drain'));
          await shop.ask('close');
        }
      }
      for (const setup of setups) report(setup, pairs[setup] ?? [], drains[setup] ?? [], jobs);
    } finally {
      shop.close();
    }
  });
}

function report(setup: string, pairs: Pair[], drains: Spent[], jobs: number): void {
  const verdict = (ok: boolean) => (ok ? 'OK' : 'MISSED');
  const list = (values: number[], digits: number) => values.map((v) => v.toFixed(digits)).join(' ');
  const rps = pairs.map((p) => p.rpsRatio);
  const p99s = pairs.map((p) => p.p99Ratio);
  const jobsPerSecond = pairs.map((p) => p.busyJobsPerSecond);
  const drainS = drains.map((d) => d.ms / 1000);
  const loopCpu = drains.map((d) => d.loopCpuUs / d.delivered);
  const allCpu = drains.map((d) => d.processCpuUs / d.delivered);
  console.log(`  ${setup}: ${SETUPS[setup]?.label}; ${pairs.length} idle/busy pairs, median (min–max)`);
  console.log(
    `    page throughput busy / idle  ${spread(rps, 2)}  (target >= 0.90) ${verdict(median(rps) >= 0.9)}`,
  );
  console.log(
    `    page p99 busy / idle         ${spread(p99s, 2)}  (target <= 1.3) ${verdict(median(p99s) <= 1.3)}`,
  );
  console.log(`    jobs/s delivered while busy  ${spread(jobsPerSecond, 0)}`);
  console.log(`    drain of ${jobs} jobs, shop idle  ${spread(drainS, 2)} s`);
  console.log(
    `    delivery CPU per job (drains): loop ${spread(loopCpu, 0)} µs, all threads ${spread(allCpu, 0)} µs`,
  );
  console.log(`    pairs' throughput ratios: ${list(rps, 2)}`);
  console.log(`    pairs' p99 ratios:        ${list(p99s, 2)}`);
  console.log(`    drains (s):               ${list(drainS, 2)}`);
  const ranOut = pairs.filter((p) => p.ranOut).length;
  if (ranOut > 0)
    console.log(`    NOTE: ${ranOut} busy windows ran out of backlog (partly idle): raise the backlog`);
}

await main();
