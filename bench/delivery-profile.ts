/**
 * Where the embedded Dispatcher's main-thread CPU goes (issue 32 item 3): `--runs` deliveries of `--jobs`
 * fresh orders each, by the Dispatcher on a SQLite outbox (as `delivery.ts`'s `full`: writer thread,
 * `synchronous=full`, concurrency 50, pace off) or by the bare loop (`--contender bare`), to a sandbox in a
 * child process, all in one process so the later runs show the code warm. Each run prints the main thread's
 * CPU per job; the last run is profiled with `node:inspector` (only its measured part: no start-up, no
 * enqueue): `--profile cpu` prints the top self-time functions and the time by area, `--profile alloc` the
 * bytes allocated per job by function (a sampling heap profile that keeps collected objects too). The
 * profile is written to `--out` for Chrome DevTools. No target: a diagnosis.
 *
 *   node --conditions=@postback/source bench/delivery-profile.ts [--contender full|bare] [--jobs 6000]
 *     [--runs 4] [--profile cpu|alloc|none] [--top 30] [--out /tmp/delivery.cpuprofile]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from '@postback/client';
import { createDispatcher } from '@postback/core';
import { createSqliteOutbox } from '@postback/sqlite';
import { bareLoop, confirmInputs, deliveredAll, withWorld } from './run-world.ts';
import { startChildSandboxWorld } from './sandbox-process.ts';

const { values } = parseArgs({
  options: {
    contender: { type: 'string', default: 'full' },
    jobs: { type: 'string', default: '6000' },
    runs: { type: 'string', default: '4' },
    profile: { type: 'string', default: 'cpu' },
    top: { type: 'string', default: '30' },
    out: { type: 'string' },
  },
});
const CONTENDER = values.contender;
const JOBS = Number(values.jobs);
const RUNS = Number(values.runs);
const PROFILE = values.profile;
const TOP = Number(values.top);
const CONCURRENCY = 50;
if (CONTENDER !== 'full' && CONTENDER !== 'bare') throw new Error('--contender is full or bare');
if (PROFILE !== 'cpu' && PROFILE !== 'alloc' && PROFILE !== 'none')
  throw new Error('--profile is cpu, alloc or none');

/** A profile node as both V8 profiles give it (a CPU profile's `hitCount`, a heap profile's `selfSize`). */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: Array<number | ProfileNode>;
  selfSize?: number;
}

const session = new Session();
session.connect();

/** Where a function lives, for the time by area. */
function areaOf({ url, functionName }: ProfileNode['callFrame']): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native/V8)';
  if (url.includes('undici')) return 'undici (HTTP client)';
  for (const pkg of ['core', 'sqlite', 'client'])
    if (url.includes(`/packages/${pkg}/`)) return `@postback/${pkg}`;
  return url.startsWith('node:') ? 'Node internals' : 'other';
}

const nameOf = ({ functionName, url, lineNumber }: ProfileNode['callFrame']) =>
  `${functionName || '(anonymous)'}${url === '' ? '' : ` ${url.replace(/^.*\/(node_modules|packages)\//, '$1/')}:${lineNumber + 1}`}`;

function printTop(title: string, totals: Map<string, number>, unit: string) {
  console.log(`  ${title}`);
  for (const [name, v] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, TOP))
    console.log(`    ${(v / JOBS).toFixed(1).padStart(8)} ${unit}  ${name}`);
}

/** Self time per job by function and by area, from a CPU profile. */
function summarizeCpu(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const self = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i] as number);
    if (node === undefined) continue;
    if (node.callFrame.functionName !== '(idle)') busy += self;
    byFunction.set(nameOf(node.callFrame), (byFunction.get(nameOf(node.callFrame)) ?? 0) + self);
    byArea.set(areaOf(node.callFrame), (byArea.get(areaOf(node.callFrame)) ?? 0) + self);
  }
  console.log(
    `  profiled run: ${(busy / JOBS).toFixed(1)} µs/job busy (sampled wall time: a thread preempted in a system call counts there)`,
  );
  printTop('by area', byArea, 'µs/job');
  printTop('top functions by self time', byFunction, 'µs/job');
}

/** Bytes allocated per job by function, from a sampling heap profile. */
function summarizeAlloc(profile: { head: ProfileNode }) {
  const byFunction = new Map<string, number>();
  let all = 0;
  const walk = (node: ProfileNode) => {
    byFunction.set(
      nameOf(node.callFrame),
      (byFunction.get(nameOf(node.callFrame)) ?? 0) + (node.selfSize ?? 0),
    );
    all += node.selfSize ?? 0;
    for (const child of node.children ?? []) walk(child as ProfileNode);
  };
  walk(profile.head);
  console.log(`  profiled run: ~${(all / JOBS).toFixed(0)} bytes allocated per job (sampled)`);
  printTop('top functions by bytes allocated', byFunction, 'B/job');
}

/** One delivery of JOBS orders; profiled when `profile`. Returns the main thread's CPU per job (µs). */
async function run(profile: boolean): Promise<number> {
  return withWorld(startChildSandboxWorld, async (world, tokens) => {
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    const dir = mkdtempSync(join(tmpdir(), 'postback-delivery-profile-'));
    const outbox = createSqliteOutbox({ filename: join(dir, 'bench.db'), synchronous: 'full' });
    try {
      let deliver: () => Promise<void>;
      if (CONTENDER === 'bare') {
        deliver = () => bareLoop(client, tokens, { jobs: JOBS, concurrency: CONCURRENCY, limitMs: 60_000 });
      } else {
        await Promise.all(confirmInputs('d', JOBS, tokens).map((input) => outbox.confirm(input)));
        const dispatcher = createDispatcher({
          outbox,
          client,
          concurrency: CONCURRENCY,
          batchSize: CONCURRENCY,
          pace: 'off',
        });
        const done = deliveredAll(dispatcher, JOBS);
        deliver = async () => {
          dispatcher.start();
          await done;
          await dispatcher.stop({ timeoutMs: 5_000 });
        };
      }
      if (profile && PROFILE === 'cpu') {
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: 100 });
        await session.post('Profiler.start');
      }
      if (profile && PROFILE === 'alloc') {
        // Objects a GC collected count too: what the GC had to deal with, not what survived.
        const flags = { includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
        await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, ...flags } as never);
      }
      const cpu0 = process.threadCpuUsage();
      await deliver();
      const cpu = process.threadCpuUsage(cpu0);
      if (profile && PROFILE === 'cpu') {
        const { profile: p } = await session.post('Profiler.stop');
        if (values.out !== undefined) writeFileSync(values.out, JSON.stringify(p));
        summarizeCpu(p as never);
      }
      if (profile && PROFILE === 'alloc') {
        const { profile: p } = await session.post('HeapProfiler.stopSampling');
        if (values.out !== undefined) writeFileSync(values.out, JSON.stringify(p));
        summarizeAlloc(p as never);
      }
      return (cpu.user + cpu.system) / JOBS;
    } finally {
      await client.close();
      await outbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

console.log(
  `delivery profile: ${CONTENDER === 'full' ? 'Dispatcher (SQLite, full)' : 'bare loop'}, ${RUNS} runs of ${JOBS} jobs, concurrency ${CONCURRENCY}, the last profiled (${PROFILE})`,
);
const perRun: string[] = [];
for (let i = 0; i < RUNS; i++) {
  const last = i === RUNS - 1 && PROFILE !== 'none';
  perRun.push((await run(last)).toFixed(1) + (last ? ' (profiled)' : ''));
}
console.log(`  main-thread CPU per job by run, in order: ${perRun.join(', ')} µs`);
