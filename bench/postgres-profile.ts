/**
 * Where a Postgres worker's CPU goes (issue 32 item 1, the profile): Postgres delivery workers
 * (`packages/postgres/test/fixtures/worker.ts`, the same process `postgres.ts` part 3 measures) run under
 * `node --cpu-prof` and drain a backlog (10,000 jobs by default) to an in-process sandbox with 25 ms of
 * latency, through a counting proxy of the Postgres wire protocol (`pg-wire-counter.ts`: round trips,
 * statements by kind with their rows, NOTIFY wake-ups; `pg_stat_statements` needs a server restart).
 * Printed per run: the CPU per job (workers, their backends from /proc), the top self-time functions and
 * the time by area (pg, core, the outbox, Node) from the profiles, the statements, round trips and
 * wake-ups per job, and the jobs table's tuple counters (`pg_stat_user_tables`). No target: a diagnosis.
 *
 *   node --conditions=@postback/source bench/postgres-profile.ts [--jobs 10000] [--workers 1,4] [--top 25]
 *     [--concurrency 8]   # sends in flight per worker, and jobs per claim
 *     [--keep-profiles]   # the .cpuprofile files stay in the printed directory (open them in Chrome DevTools)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startSandboxWorld } from '@postback/sandbox/testing';
import { startWireCounter } from './pg-wire-counter.ts';
import { admin, backendCpu, dropSchemas, inTx, ourOutbox, tag, URL_, withAppName } from './postgres-world.ts';

const WORKER_SCRIPT = fileURLToPath(new URL('../packages/postgres/test/fixtures/worker.ts', import.meta.url));
/** As in `postgres-delivery.ts`: the service's simulated latency. */
const SERVICE_LATENCY_MS = 25;

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '10000' },
    workers: { type: 'string', default: '1,4' },
    top: { type: 'string', default: '25' },
    /** Sends in flight per worker (and jobs per claim): 8 as in `postgres-delivery.ts`. */
    concurrency: { type: 'string', default: '8' },
    'keep-profiles': { type: 'boolean', default: false },
  },
});
const JOBS = Number(values.jobs);
const TOP = Number(values.top);
const WORKER_CONCURRENCY = Number(values.concurrency);
const RUNS = values.workers.split(',').map(Number);

/** A V8 CPU profile (`.cpuprofile`), the parts read here. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

/** Where a function lives, for the time by area. */
function areaOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native/V8)';
  if (/node_modules\/(pg|pg-protocol|pg-pool|pg-types|pgpass)\//.test(url)) return 'pg driver';
  if (url.includes('node_modules/undici') || url.includes('node:internal/deps/undici'))
    return 'undici (HTTP client)';
  for (const pkg of ['core', 'postgres', 'client'])
    if (url.includes(`/packages/${pkg}/`)) return `@postback/${pkg}`;
  if (url.startsWith('node:')) return 'Node internals';
  return 'other';
}

/** Self time (µs) by function and by area, samples before `skipMs` (start-up) left out. */
function summarizeProfile(profile: CpuProfile, skipMs: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let t = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    t += profile.timeDeltas[i] ?? 0;
    const self = profile.timeDeltas[i + 1] ?? 0;
    if (t < skipMs * 1000) continue;
    const node = byId.get(profile.samples[i]!);
    if (node === undefined) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    const where =
      url === '' ? '' : ` ${url.replace(/^.*\/(node_modules|packages)\//, '$1/')}:${lineNumber + 1}`;
    byFunction.set(`${name}${where}`, (byFunction.get(`${name}${where}`) ?? 0) + self);
    byArea.set(areaOf(url, name), (byArea.get(areaOf(url, name)) ?? 0) + self);
  }
  return { byFunction, byArea };
}

const merge = (into: Map<string, number>, from: Map<string, number>) => {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
};

async function tableCounters(schema: string) {
  const { rows } = await admin.query(
    `SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot, idx_scan::int AS idx, seq_scan::int AS seq
     FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'jobs'`,
    [schema],
  );
  return rows[0] as { upd: number; hot: number; idx: number; seq: number };
}

async function profileRun(workers: number, world: Awaited<ReturnType<typeof startSandboxWorld>>) {
  const ours = await ourOutbox(`prof${workers}`);
  const appName = `pbbench_${tag}_prof${workers}`;
  const dir = mkdtempSync(join(tmpdir(), 'pb-pgprof-'));
  const proxy = await startWireCounter({ host: '127.0.0.1', port: Number(new URL(URL_).port || 5432) });
  const proxied = new URL(URL_);
  proxied.host = `127.0.0.1:${proxy.port}`;
  const clicks = await world.clicks(JOBS);
  const cpu: Array<{ pid: number; ready: number; exit: number; startedAt: number; readyAt: number }> = [];
  const children = Array.from({ length: workers }, () => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=@postback/source',
        '--cpu-prof',
        `--cpu-prof-dir=${dir}`,
        WORKER_SCRIPT,
        withAppName(proxied.toString(), appName),
        ours.schema,
        world.url,
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          POSTBACK_API_KEY: world.conversionsKey,
          WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const used = { pid: child.pid ?? 0, ready: 0, exit: 0, startedAt: performance.now(), readyAt: 0 };
    cpu.push(used);
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      const ready = /ready cpu (\d+)/.exec(s);
      if (ready) {
        used.ready = Number(ready[1]);
        used.readyAt = performance.now();
      }
      const exit = /^cpu (\d+)/m.exec(s);
      if (exit) used.exit = Number(exit[1]);
    });
    return child;
  });
  try {
    const limit = Date.now() + 30_000;
    while (cpu.some((c) => c.readyAt === 0) && Date.now() < limit)
      await new Promise((r) => setTimeout(r, 50));
    if (cpu.some((c) => c.readyAt === 0)) throw new Error('a worker did not start within 30 s');
    const table0 = await tableCounters(ours.schema);
    const server0 = await backendCpu(appName);
    proxy.reset();
    // One shop transaction enqueues the backlog; the idle workers wake at its commit (NOTIFY).
    await inTx(ours.pool, async (tx) => {
      for (const [i, click] of clicks.entries())
        await ours.outbox.confirm(tx, { orderId: `pr${workers}_${tag}_${i}`, valueMicros: 1_000, click });
    });
    const t0 = performance.now();
    const drainLimit = Date.now() + 60_000 + JOBS * 50;
    let delivered = 0;
    while (delivered < JOBS && Date.now() < drainLimit) {
      await new Promise((r) => setTimeout(r, 100));
      delivered = (await ours.outbox.stats(Date.now())).counts.delivered;
    }
    const seconds = (performance.now() - t0) / 1000;
    const server1 = await backendCpu(appName);
    const wire = {
      roundTrips: proxy.counts.roundTrips,
      notifications: proxy.counts.notifications,
      statements: new Map(proxy.counts.statements),
    };
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    const table1 = await tableCounters(ours.schema);
    // A drain cut by its time limit still says where the time went: figures are per delivered job.
    if (delivered < JOBS)
      console.log(`  (the drain was cut at its time limit: ${delivered}/${JOBS} delivered)`);

    let server = 0;
    for (const [pid, used] of server1) server += used - (server0.get(pid) ?? 0);
    const workerUs = cpu.reduce((sum, c) => sum + (c.exit - c.ready), 0);
    const byFunction = new Map<string, number>();
    const byArea = new Map<string, number>();
    const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
    for (const file of files) {
      const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
      // Start-up (module loading) left out: the time from spawn to `ready` of the worker whose pid the
      // file's name holds (CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile).
      const worker = cpu.find((c) => c.pid === Number(file.split('.')[3]));
      const skip = worker === undefined ? 0 : worker.readyAt - worker.startedAt;
      const summary = summarizeProfile(profile, skip);
      merge(byFunction, summary.byFunction);
      merge(byArea, summary.byArea);
    }
    const busy = [...byArea].filter(([area]) => area !== '(idle)').reduce((sum, [, us]) => sum + us, 0);
    const perJob = (n: number) => (n / delivered).toFixed(2);
    console.log(
      `\n${workers} worker${workers > 1 ? 's' : ''}: ${delivered} jobs in ${seconds.toFixed(1)} s (${Math.round(delivered / seconds)}/s), load average ${loadavg()[0]!.toFixed(1)}; CPU per job ${Math.round((workerUs + server) / delivered)} µs (workers ${Math.round(workerUs / delivered)}, their backends ${Math.round(server / delivered)})`,
    );
    console.log(`  profile: busy ${Math.round(busy / delivered)} µs/job sampled; by area (% of busy):`);
    for (const [area, us] of [...byArea].sort((a, b) => b[1] - a[1]).filter(([a]) => a !== '(idle)'))
      console.log(
        `    ${((us / busy) * 100).toFixed(1).padStart(5)} %  ${Math.round(us / delivered)} µs/job  ${area}`,
      );
    console.log(`  top ${TOP} functions by self time (% of busy):`);
    for (const [name, us] of [...byFunction]
      .filter(([n]) => !n.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP))
      console.log(`    ${((us / busy) * 100).toFixed(1).padStart(5)} %  ${name}`);
    console.log(
      `  wire: ${perJob(wire.roundTrips)} round trips per job, ${wire.notifications} NOTIFY deliveries in all; statements per job (rows per run, runs with no row):`,
    );
    for (const [kind, c] of [...wire.statements].sort((a, b) => b[1].executed - a[1].executed))
      console.log(
        `    ${perJob(c.executed).padStart(6)}  rows/run ${(c.rows / c.executed).toFixed(1).padStart(5)}  empty ${String(c.empty).padStart(5)}  ${kind}`,
      );
    console.log(
      `  jobs table: ${perJob(table1.upd - table0.upd)} row updates per job (${Math.round(((table1.hot - table0.hot) / Math.max(1, table1.upd - table0.upd)) * 100)} % HOT), ${perJob(table1.idx - table0.idx)} index scans and ${perJob(table1.seq - table0.seq)} sequential scans per job (enqueue included)`,
    );
    if (values['keep-profiles']) console.log(`  profiles kept in ${dir}`);
  } finally {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await proxy.close();
    await ours.outbox.close();
    await ours.pool.end();
    if (!values['keep-profiles']) rmSync(dir, { recursive: true, force: true });
  }
}

const world = await startSandboxWorld();
try {
  await world.setFaults({ latency_ms: SERVICE_LATENCY_MS });
  console.log(
    `postgres worker profile: ${JOBS} jobs per run, ${WORKER_CONCURRENCY} sends in flight per worker, ${SERVICE_LATENCY_MS} ms service latency, node --cpu-prof; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (const workers of RUNS) await profileRun(workers, world);
} finally {
  await world.close();
  await dropSchemas();
}
