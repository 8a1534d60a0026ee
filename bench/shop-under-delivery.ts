/**
 * Benchmark: what delivering a backlog costs the pages of the shop it runs in. The example Express shop
 * (its capture middleware and landing page, configured from an env-like object by the shop kit's
 * `readShopConfig`) runs in a child process with its in-process Dispatcher, its SQLite outbox and its
 * client, as `openShopBackend` sets them up (Dispatcher defaults). The sandbox runs in another child
 * process, as the ad service runs elsewhere in production; autocannon loads the pages from this process.
 *
 * One run loads the pages for `--seconds`: a landing with a click token (`/?click_token=…`, the capture
 * path: cookie signed and set) and the plain page (`/`), in turn on each connection. A busy run does so
 * while the Dispatcher drains a backlog of `--jobs` confirmations enqueued just before it; an idle run is
 * the same shop with an empty outbox (its Dispatcher polling). Each outbox is fresh, so every run starts
 * alike. The machine is shared and drifts, so idle and busy run in pairs back to back (AB, then BA, …,
 * `--rounds` pairs), and each ratio is the median of the pairs' ratios:
 *   page throughput busy / idle   target >= 0.85
 *   p99 page latency busy / idle  target <= 1.5  (each response's own time, to the µs: autocannon's
 *                                                 histogram keeps whole milliseconds)
 * both with the outbox's writer thread on (the default) and off (`thread: false`: SQLite writes on the
 * shop's event loop). It also prints how many jobs each busy run delivered, and says so when a backlog
 * drained before its run ended (then the run was partly idle: raise `--jobs`).
 *
 *   node --conditions=@postback/source bench/shop-under-delivery.ts [--jobs 10000] [--seconds 5]
 *     [--rounds 4] [--connections 10] [--quick]
 *
 * Child mode (`--serve-shop`, used by this file): the shop on an ephemeral loopback port; it prints the port,
 * then answers one line per command on stdin (`fill <on|off> <jobs> <prefix>`, `start`, `end`); it exits
 * when stdin closes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createClient } from '@postback/client';
import { createDispatcher, type Dispatcher } from '@postback/core';
import { readShopConfig, renderLandingPage } from '@postback/example-shop-kit';
import { postback } from '@postback/express';
import { createSqliteOutbox, type SqliteOutbox } from '@postback/sqlite';
import express from 'express';
import type { LoadResult } from './capture-apps.ts';
import { withinLimit, withWorld } from './run-world.ts';
import { startChildSandboxWorld } from './sandbox-process.ts';

const SECRET = 'bench-secret-0123456789-abcdefghijklmnop';
/** Upper bound on the requests of one run, whatever the machine's speed. */
const MAX_REQUESTS_PER_RUN = 2_000_000;
/** Longest one command of the shop child (filling a backlog, stopping a Dispatcher) may take. */
const COMMAND_LIMIT_MS = 60_000;
/** The measured rounds stop after this, whatever `--rounds` says. */
const MEASURE_LIMIT_MS = 150_000;

/**
 * autocannon with a mix of pages and each response's own time (it emits `response` with the latency in
 * fractional ms); `capture-apps.ts`'s typed slice has neither.
 */
const loadPages = createRequire(import.meta.url)('autocannon') as (options: {
  url: string;
  connections: number;
  duration: number;
  maxOverallRequests: number;
  requests: Array<{ method: 'GET'; path: string }>;
}) => Promise<LoadResult> & {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
};

// ---------------------------------------------------------------------------------------------------------
// Child mode: the shop.

/** One run's backend: a fresh outbox and, once started, the Dispatcher draining it. */
interface RunBackend {
  outbox: SqliteOutbox;
  file: string;
  jobs: number;
  dispatcher: Dispatcher | null;
  startedAt: number;
  delivered: number;
  dead: number;
  paused: number;
  /** ms from `start` until the whole backlog was delivered, if it was. */
  drainedMs: number | null;
}

async function serveShop(): Promise<void> {
  const config = readShopConfig(process.env);
  const tokens = (process.env.BENCH_CLICK_TOKENS ?? '').split(',');
  const dir = mkdtempSync(join(tmpdir(), 'postback-shop-bench-'));
  const client = createClient({ baseUrl: config.apiUrl, apiKey: config.apiKey });

  // The example shop's page route (examples/express-shop/src/shop.ts), capture on every page.
  const app = express();
  app.disable('x-powered-by');
  app.use(postback({ secrets: [config.secret], param: config.clickParam, secure: config.secureCookie }));
  app.get('/', async (req, res) => {
    const click = await req.postback.click();
    res.type('html').send(renderLandingPage({ shop: 'Express', clicked: click !== null }));
  });
  const server = app.listen(config.port, config.host);
  await new Promise((resolve) => server.once('listening', resolve));

  let run: RunBackend | null = null;
  const commands: Record<string, (args: string[]) => Promise<string>> = {
    async fill([thread, jobs, prefix]) {
      const file = join(dir, `${prefix}.db`);
      const outbox = createSqliteOutbox({ filename: file, thread: thread === 'on' });
      const count = Number(jobs);
      const clickedAt = Date.now();
      await Promise.all(
        Array.from({ length: count }, (_, i) =>
          outbox.confirm({
            orderId: `${prefix}-${i}`,
            valueMicros: 1_000,
            click: { token: tokens[i % tokens.length] as string, clickedAt },
          }),
        ),
      );
      run = {
        outbox,
        file,
        jobs: count,
        dispatcher: null,
        startedAt: 0,
        delivered: 0,
        dead: 0,
        paused: 0,
        drainedMs: null,
      };
      return 'ok';
    },
    async start() {
      const current = run as RunBackend;
      const dispatcher = createDispatcher({ outbox: current.outbox, client });
      dispatcher.on('delivered', () => {
        current.delivered += 1;
        if (current.delivered === current.jobs) current.drainedMs = performance.now() - current.startedAt;
      });
      dispatcher.on('dead', () => {
        current.dead += 1;
      });
      dispatcher.on('paused', () => {
        current.paused += 1;
      });
      current.dispatcher = dispatcher;
      current.startedAt = performance.now();
      dispatcher.start();
      return 'ok';
    },
    async end() {
      const current = run as RunBackend;
      const { delivered, dead, paused, drainedMs } = current;
      await current.dispatcher?.stop({ timeoutMs: 5_000 });
      await current.outbox.close();
      rmSync(current.file, { force: true });
      rmSync(`${current.file}-wal`, { force: true });
      rmSync(`${current.file}-shm`, { force: true });
      run = null;
      return JSON.stringify({ delivered, dead, paused, drainedMs });
    },
  };

  let queue = Promise.resolve();
  createInterface({ input: process.stdin })
    .on('line', (line) => {
      const [name = '', ...args] = line.trim().split(' ');
      queue = queue
        .then(async () => {
          const command = commands[name];
          if (command === undefined) throw new Error(`unknown command: ${name}`);
          process.stdout.write(`${await command(args)}\n`);
        })
        .catch((error: unknown) => {
          console.error(error);
          process.exit(1);
        });
    })
    .on('close', () => {
      server.closeAllConnections();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
}

// ---------------------------------------------------------------------------------------------------------
// Main mode: the load and the report.

interface ShopChild {
  url: string;
  /** Sends one command and resolves with the child's one-line answer. */
  ask(command: string): Promise<string>;
  close(): void;
}

function startShopChild(env: Record<string, string>): Promise<ShopChild> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...process.execArgv, new URL(import.meta.url).pathname, '--serve-shop'],
    { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } },
  );
  const waiting: Array<(line: string) => void> = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) =>
    waiting.shift()?.(line),
  );
  const nextLine = () => new Promise<string>((resolve) => waiting.push(resolve));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the shop child exited with code ${code}`))),
  );
  exited.catch(() => {});
  const ask = (command: string) => {
    const answer = nextLine();
    child.stdin?.write(`${command}\n`);
    return withinLimit(Promise.race([answer, exited]), `shop child: ${command}`, COMMAND_LIMIT_MS);
  };
  return withinLimit(Promise.race([nextLine(), exited]), 'shop child start', COMMAND_LIMIT_MS).then(
    (port) => ({ url: `http://127.0.0.1:${port}`, ask, close: () => child.stdin?.end() }),
  );
}

interface Load {
  rps: number;
  p99Ms: number;
}

interface Delivery {
  delivered: number;
  dead: number;
  paused: number;
  drainedMs: number | null;
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

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      jobs: { type: 'string' },
      seconds: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      /** A tiny configuration for a smoke run. */
      quick: { type: 'boolean', default: false },
    },
  });
  const quick = values.quick;
  const jobs = Number(values.jobs ?? (quick ? 300 : 10_000));
  const seconds = Number(values.seconds ?? (quick ? 1 : 5));
  const rounds = Number(values.rounds ?? (quick ? 2 : 4));
  const connections = Number(values.connections ?? 10);

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
      let runs = 0;
      /** One run: a fresh outbox with `backlog` jobs, its Dispatcher started, the pages loaded. */
      const measure = async (thread: 'on' | 'off', backlog: number, runSeconds: number) => {
        runs += 1;
        await shop.ask(`fill ${thread} ${backlog} r${runs}-${thread}`);
        await shop.ask('start');
        const latencies: number[] = [];
        const started = performance.now();
        const load = loadPages({
          url: shop.url,
          connections,
          duration: runSeconds,
          maxOverallRequests: MAX_REQUESTS_PER_RUN,
          requests: pages,
        });
        load.on('response', (_client, _status, _bytes, ms) => void latencies.push(ms));
        const result = await load;
        const elapsed = (performance.now() - started) / 1000;
        const delivery = JSON.parse(await shop.ask('end')) as Delivery;
        if (result.non2xx > 0 || result.errors > 0) {
          throw new Error(`pages: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
        }
        if (delivery.dead > 0 || delivery.paused > 0) {
          throw new Error(`delivery: ${delivery.dead} jobs dead, ${delivery.paused} pauses`);
        }
        return { load: { rps: result.requests.total / elapsed, p99Ms: p99(latencies) }, delivery };
      };

      console.log(
        `shop under delivery: Express example shop in a child process, sandbox in another; ${connections} connections ` +
          `on /?click_token=… and / in turn, ${seconds}s per run, backlog ${jobs} jobs per busy run, ` +
          `${rounds} idle/busy pairs per writer-thread setting (AB/BA, median), Node ${process.version}`,
      );
      // Warm-up, untimed: JIT, the sandbox's first accounts of conversions, the outbox thread's start.
      for (const thread of ['on', 'off'] as const) {
        await measure(thread, 0, 1);
        await measure(thread, Math.min(jobs, 1_000), 1);
      }
      type Pair = { idle: Load; busy: Load; delivery: Delivery };
      const pairs: Record<'on' | 'off', Pair[]> = { on: [], off: [] };
      const began = Date.now();
      for (let round = 0; round < rounds && Date.now() - began < MEASURE_LIMIT_MS; round++) {
        for (const thread of round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
          if (round % 2 === 0) {
            const idle = await measure(thread, 0, seconds);
            const busy = await measure(thread, jobs, seconds);
            pairs[thread].push({ idle: idle.load, busy: busy.load, delivery: busy.delivery });
          } else {
            const busy = await measure(thread, jobs, seconds);
            const idle = await measure(thread, 0, seconds);
            pairs[thread].push({ idle: idle.load, busy: busy.load, delivery: busy.delivery });
          }
        }
      }

      for (const thread of ['on', 'off'] as const) {
        const list = pairs[thread];
        const rpsRatio = median(list.map((p) => p.busy.rps / p.idle.rps));
        const p99Ratio = median(list.map((p) => p.busy.p99Ms / p.idle.p99Ms));
        const verdict = (ok: boolean) => (ok ? 'OK' : 'MISSED');
        console.log(`  writer thread ${thread}${thread === 'on' ? ' (default)' : ''}, ${list.length} pairs:`);
        console.log(
          `    page throughput  idle ${median(list.map((p) => p.idle.rps))
            .toFixed(0)
            .padStart(6)} req/s, ` +
            `busy ${median(list.map((p) => p.busy.rps))
              .toFixed(0)
              .padStart(6)} req/s, ratio ${rpsRatio.toFixed(2)} ` +
            `(target >= 0.85) ${verdict(rpsRatio >= 0.85)}`,
        );
        console.log(
          `    page p99         idle ${median(list.map((p) => p.idle.p99Ms))
            .toFixed(2)
            .padStart(6)} ms,    ` +
            `busy ${median(list.map((p) => p.busy.p99Ms))
              .toFixed(2)
              .padStart(6)} ms,    ratio ${p99Ratio.toFixed(2)} ` +
            `(target <= 1.5) ${verdict(p99Ratio <= 1.5)}`,
        );
        const delivered = list.map((p) => p.delivery.delivered);
        console.log(
          `    delivered during busy runs: ${delivered.join(', ')} of ${jobs} ` +
            `(median ${(median(delivered) / seconds).toFixed(0)} jobs/s; pairs' ratios ` +
            `${list.map((p) => (p.busy.rps / p.idle.rps).toFixed(2)).join(', ')})`,
        );
        const drained = list.flatMap((p) => (p.delivery.drainedMs === null ? [] : [p.delivery.drainedMs]));
        if (drained.length > 0) {
          console.log(
            `    NOTE: the backlog drained before the run ended in ${drained.length} of ${list.length} busy runs ` +
              `(after ${drained.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s): those runs were partly idle; raise --jobs`,
          );
        }
      }
    } finally {
      shop.close();
    }
  });
}

if (process.argv.includes('--serve-shop')) await serveShop();
else await main();
