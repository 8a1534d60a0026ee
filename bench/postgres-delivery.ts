/**
 * Part 3 of the Postgres benchmark (`postgres.ts`): delivery through the Dispatcher to a local sandbox of
 * the ad service, 4 worker processes vs 1 on one queue, with the CPU each job cost. Each run first
 * delivers `POSTBACK_BENCH_DELIVERY_WARMUP` jobs untimed (a worker runs for days: its start, JIT and first
 * `PREPARE`s are not a per-job cost), then measures the rate and the CPU over the next
 * `POSTBACK_BENCH_DELIVERY_JOBS` (the workers' CPU read by SIGUSR2 before and after).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { DEFAULT_BATCH_SIZE } from '@postback/core';
import { startSandboxWorld } from '@postback/sandbox/testing';
import { backendCpu, fmt, inTx, ourOutbox, tag, URL_, withAppName } from './postgres-world.ts';

const WORKER_SCRIPT = fileURLToPath(new URL('../packages/postgres/test/fixtures/worker.ts', import.meta.url));
// POSTBACK_BENCH_DELIVERY_JOBS: longer runs, to see the cost of fresh worker processes (JIT warm-up) amortised.
const DELIVERY_JOBS = Number(process.env.POSTBACK_BENCH_DELIVERY_JOBS ?? 2000);
const WARMUP_JOBS = Number(process.env.POSTBACK_BENCH_DELIVERY_WARMUP ?? 400);
/** Sends in flight per worker process, and the service's simulated network latency. */
const WORKER_CONCURRENCY = 8;
const SERVICE_LATENCY_MS = 25;

/** CPU per job in µs: worker processes, their Postgres backends, this process (the sandbox, the polling). */
interface DeliveryCpu {
  workers: number;
  server: number;
  bench: number;
}

export async function benchDelivery(): Promise<void> {
  const world = await startSandboxWorld();
  const children: ChildProcess[] = [];
  try {
    // A real service is tens of milliseconds away: without latency the in-process sandbox, not the
    // queue, would be what is measured on a 2-core machine.
    await world.setFaults({ latency_ms: SERVICE_LATENCY_MS });
    const seconds: Record<string, number[]> = { one: [], four: [] };
    const cpu: Record<string, DeliveryCpu[]> = { one: [], four: [] };
    for (const [round, workers] of [1, 4, 1, 4].entries()) {
      const ours = await ourOutbox(`deliv${round}`);
      const clicks = await world.clicks(WARMUP_JOBS + DELIVERY_JOBS);
      const appName = `pbbench_${tag}_deliv${round}`;
      /** Each worker's CPU readings (µs, `cpu-now` answers to SIGUSR2). */
      const workerCpu: Array<{ readings: number[] }> = [];
      const procs = Array.from({ length: workers }, () => {
        const child = spawn(
          process.execPath,
          [
            '--conditions=@postback/source',
            WORKER_SCRIPT,
            withAppName(URL_, appName),
            ours.schema,
            world.url,
          ],
          {
            env: {
              PATH: process.env.PATH ?? '',
              POSTBACK_API_KEY: world.conversionsKey,
              WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
              // Claims of the Dispatcher's default size, as `postback worker` makes them.
              WORKER_BATCH: String(DEFAULT_BATCH_SIZE),
            },
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        children.push(child);
        const used = { readings: [] as number[] };
        workerCpu.push(used);
        child.stdout?.setEncoding('utf8').on('data', (s: string) => {
          for (const now of s.matchAll(/cpu-now (\d+)/g)) used.readings.push(Number(now[1]));
        });
        return child;
      });
      await Promise.all(
        procs.map(
          (child) =>
            new Promise<void>((resolve) =>
              child.stdout?.on('data', (s: string) => s.includes('ready') && resolve()),
            ),
        ),
      );
      // Workers are idle and listening; one shop transaction enqueues each batch and wakes them at commit.
      const deliver = async (from: number, count: number) => {
        await inTx(ours.pool, async (tx) => {
          for (const [i, click] of clicks.slice(from, from + count).entries())
            await ours.outbox.confirm(tx, { orderId: `dl_${round}_${from + i}`, valueMicros: 1_000, click });
        });
        const limit = Date.now() + 30_000 + count * 50;
        while ((await ours.outbox.stats(Date.now())).counts.delivered < from + count && Date.now() < limit)
          await new Promise((r) => setTimeout(r, 20));
        const delivered = (await ours.outbox.stats(Date.now())).counts.delivered;
        if (delivered < from + count)
          throw new Error(`delivery run ${round} stalled at ${delivered}/${from + count}`);
      };
      /** Each worker's CPU so far (µs), read by SIGUSR2. */
      const readWorkers = async () => {
        const before = workerCpu.map((w) => w.readings.length);
        for (const child of procs) child.kill('SIGUSR2');
        const until = Date.now() + 5_000;
        while (workerCpu.some((w, i) => w.readings.length === before[i]) && Date.now() < until)
          await new Promise((r) => setTimeout(r, 5));
        return workerCpu.map((w) => w.readings.at(-1) ?? 0);
      };
      await deliver(0, WARMUP_JOBS);
      const workers0 = await readWorkers();
      const server0 = await backendCpu(appName);
      const bench0 = process.cpuUsage();
      const t0 = performance.now();
      await deliver(WARMUP_JOBS, DELIVERY_JOBS);
      const elapsed = (performance.now() - t0) / 1000;
      const bench = process.cpuUsage(bench0);
      const server1 = await backendCpu(appName);
      const workers1 = await readWorkers();
      (workers === 1 ? seconds.one! : seconds.four!).push(elapsed);
      await Promise.all(
        procs.map(
          (child) =>
            new Promise<void>((resolve) => {
              child.once('exit', () => resolve());
              child.kill('SIGTERM');
            }),
        ),
      );
      let server = 0;
      for (const [pid, used] of server1) server += used - (server0.get(pid) ?? 0);
      (workers === 1 ? cpu.one! : cpu.four!).push({
        workers: workers1.reduce((sum, cpu, i) => sum + cpu - (workers0[i] ?? 0), 0) / DELIVERY_JOBS,
        server: server / DELIVERY_JOBS,
        bench: (bench.user + bench.system) / DELIVERY_JOBS,
      });
      await ours.outbox.close();
      await ours.pool.end();
    }
    const rate = (list: number[]) => (DELIVERY_JOBS * list.length) / list.reduce((a, b) => a + b, 0);
    const one = rate(seconds.one!);
    const four = rate(seconds.four!);
    const cores = availableParallelism();
    const perJob = (list: DeliveryCpu[]) => {
      const mean = (f: (c: DeliveryCpu) => number) => list.reduce((sum, c) => sum + f(c), 0) / list.length;
      const [w, s, b] = [mean((c) => c.workers), mean((c) => c.server), mean((c) => c.bench)];
      return `CPU per job ${Math.round(w + s + b)} µs (workers ${Math.round(w)}, their Postgres backends ${Math.round(s)}, sandbox + bench ${Math.round(b)}): at most ${fmt((cores * 1e6) / (w + s + b))} on ${cores} idle cores`;
    };
    console.log(
      `delivery through the Dispatcher to the sandbox (${SERVICE_LATENCY_MS} ms latency, ${WORKER_CONCURRENCY} sends in flight per worker, claims of ${DEFAULT_BATCH_SIZE}), ${DELIVERY_JOBS} jobs per run after ${WARMUP_JOBS} untimed, load average ${loadavg()[0]!.toFixed(1)}:`,
    );
    console.log(
      `  1 worker process    ${fmt(one)}   (latency bound ${fmt((WORKER_CONCURRENCY * 1000) / SERVICE_LATENCY_MS)}); ${perJob(cpu.one!)}`,
    );
    console.log(
      `  4 worker processes  ${fmt(four)}   ratio 4/1 ${(four / one).toFixed(2)}x (latency bound ${fmt((4 * WORKER_CONCURRENCY * 1000) / SERVICE_LATENCY_MS)}); ${perJob(cpu.four!)}`,
    );
  } finally {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await world.close();
  }
}
