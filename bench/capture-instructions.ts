/**
 * Benchmark: what click capture costs an Express 5 and a Koa 3 app in CPU instructions per request,
 * counted by valgrind's callgrind, bare vs with the middleware, side by side in one run.
 *
 * Why a second capture benchmark: throughput on a shared 2-core VM drifts by ±30 % from one second to the
 * next, more than the few microseconds being measured. Callgrind counts instructions, which do not depend
 * on what else the machine is doing: the same app, requests and Node give the same count (±1 %). What it
 * does not see: time in the kernel (socket reads and writes, the same for both apps) and stalls, so the
 * instruction ratio is a pessimistic stand-in for the throughput ratio (the bare app's kernel time is
 * left out of its denominator). Only the main thread is counted (the JIT compiler and GC helper threads
 * are left out, as they do not serve requests).
 *
 * For each app: start it under callgrind with instrumentation off, warm it up with `--warmup` requests,
 * switch instrumentation on, send `--requests` requests (autocannon, 10 connections, in this process),
 * switch it off and read the main thread's total. Prints instructions per request of both and
 * ratio = bare / ours (the CPU ratio it stands in for), against the ratio targets; for the landing, whose
 * target is extra CPU µs (`capture.ts`), the extra instructions are the steady cross-check.
 *
 *   node --conditions=@postback/source bench/capture-instructions.ts [--requests 2000] [--warmup 4000] [--repeat 1] [--all | --only NAME] [--framework express|koa] [--diff 25]
 *
 * Without `--all` only the landing (sign + set cookie) is measured, the kind whose target is hardest; a
 * run takes about 40 s per app under valgrind. The count still moves by a few thousand instructions from
 * one start of the same app to the next (which functions the JIT has optimised by then), so `--repeat`
 * measures each app that many times, alternating, and takes the median. `--diff N` prints the N functions
 * whose instructions per request differ most between the two apps: where a landing's cost goes (native
 * functions by name; JIT-compiled JavaScript is `???`, its total is what the middleware's own code costs).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  APPS,
  autocannon,
  captureScenarios,
  type Framework,
  type Scenario,
  type Variant,
} from './capture-apps.ts';

/** Each app must be measured within this, valgrind's slowdown included. */
const APP_LIMIT_MS = 180_000;

/** What one measured window cost: the main thread's instructions, in total and by function. */
interface Counts {
  total: number;
  byFunction: Map<string, number>;
}

/** The main thread's instruction counts in one callgrind output file (JIT-compiled JavaScript is `???`). */
function instructions(file: string): Counts {
  const out = execFileSync('callgrind_annotate', ['--threshold=100', '--auto=no', file], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const match = /([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS/.exec(out);
  if (match === null) throw new Error(`no totals in ${file}`);
  const byFunction = new Map<string, number>();
  for (const line of out.split('\n')) {
    const row = /^\s*([\d,]+) \([\s\d.]+%\)\s+(.+)$/.exec(line);
    if (row === null || (row[2] as string).includes('PROGRAM TOTALS')) continue;
    // `file:function [object]`: the function is what is compared; JIT code has no name.
    const raw = (row[2] as string).replace(/^.*?:(?=[^:/]+(\(|\s\[|$))/, '').replace(/\s\[.*\]$/, '');
    // JIT code has an address, not a name, and moves from one start to the next: one bucket for it all.
    const name = /^0x[0-9a-f]+('\d+)?$/.test(raw) ? '(JIT-compiled JavaScript)' : raw;
    byFunction.set(name, (byFunction.get(name) ?? 0) + Number((row[1] as string).replaceAll(',', '')));
  }
  return { total: Number((match[1] as string).replaceAll(',', '')), byFunction };
}

/** The functions whose instructions per request differ most between `bare` and `ours`. */
function differences(
  bare: Counts & { served: number },
  ours: Counts & { served: number },
  top: number,
): string[] {
  const names = new Set([...bare.byFunction.keys(), ...ours.byFunction.keys()]);
  const rows = [...names]
    .map((name) => ({
      name,
      extra: (ours.byFunction.get(name) ?? 0) / ours.served - (bare.byFunction.get(name) ?? 0) / bare.served,
    }))
    .sort((a, b) => Math.abs(b.extra) - Math.abs(a.extra))
    .slice(0, top);
  return rows.map(
    ({ name, extra }) => `    ${extra >= 0 ? '+' : ''}${extra.toFixed(0).padStart(6)}  ${name.slice(0, 110)}`,
  );
}

async function measure(
  framework: Framework,
  variant: Variant,
  scenario: Scenario,
  requests: number,
  warmup: number,
): Promise<Counts & { served: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'postback-callgrind-'));
  let child: ChildProcess | undefined;
  const limit = setTimeout(() => child?.kill('SIGKILL'), APP_LIMIT_MS);
  try {
    child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        '--instr-atstart=no',
        '--separate-threads=yes',
        `--callgrind-out-file=${join(dir, 'out')}`,
        process.execPath,
        ...process.execArgv,
        APPS,
        '--serve',
        `${framework}:${variant}`,
      ],
      { stdio: ['pipe', 'pipe', 'ignore'] },
    );
    const started = child;
    const port = await new Promise<string>((resolve, reject) => {
      started.stdout?.once('data', (data) => resolve(String(data).trim().split('\n')[0] as string));
      started.once('exit', (code) => reject(new Error(`${framework} ${variant} exited early (${code})`)));
    });
    const url = `http://127.0.0.1:${port}${scenario.path}`;
    const load = async (amount: number) => {
      const result = await autocannon({ url, connections: 10, amount, headers: scenario.headers });
      if (result.non2xx > 0 || result.errors > 0) {
        throw new Error(`${framework} ${variant}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      }
      return result.requests.total;
    };
    const pid = String(started.pid);
    await load(warmup);
    execFileSync('callgrind_control', ['--instr=on', pid], { stdio: 'ignore' });
    const served = await load(requests);
    execFileSync('callgrind_control', ['--instr=off', pid], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['--dump', pid], { stdio: 'ignore' });
    started.stdin?.end();
    await new Promise((resolve) => started.once('exit', resolve));
    // The dump of the measured window, main thread: `out.1-01` (thread 1 of the first dump).
    const file = readdirSync(dir).find((name) => name.endsWith('.1-01'));
    if (file === undefined) throw new Error(`callgrind wrote no dump for ${framework} ${variant}`);
    return { ...instructions(join(dir, file)), served };
  } finally {
    clearTimeout(limit);
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '2000' },
      warmup: { type: 'string', default: '4000' },
      repeat: { type: 'string', default: '1' },
      all: { type: 'boolean', default: false },
      only: { type: 'string' },
      diff: { type: 'string', default: '0' },
      framework: { type: 'string' },
    },
  });
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    console.log('capture-instructions: valgrind is not installed; skipped');
    return;
  }
  const requests = Number(values.requests);
  const warmup = Number(values.warmup);
  const repeat = Number(values.repeat);
  const diffTop = Number(values.diff);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
  const scenarios = (await captureScenarios()).filter((s) =>
    values.only !== undefined ? s.name.startsWith(values.only) : values.all || s.name.startsWith('landing'),
  );
  console.log(
    `capture instructions (callgrind, main thread): ${requests} requests after ${warmup} warm-up, median of ${repeat}, Node ${process.version}`,
  );
  const frameworks = (['express', 'koa'] as const).filter(
    (f) => values.framework === undefined || values.framework === f,
  );
  for (const framework of frameworks) {
    for (const scenario of scenarios) {
      const bares: number[] = [];
      const ourses: number[] = [];
      let last: { bare: Counts & { served: number }; ours: Counts & { served: number } } | undefined;
      for (let i = 0; i < repeat; i++) {
        const b = await measure(framework, 'bare', scenario, requests, warmup);
        const o = await measure(framework, 'ours', scenario, requests, warmup);
        bares.push(b.total / b.served);
        ourses.push(o.total / o.served);
        last = { bare: b, ours: o };
      }
      const bare = median(bares);
      const ours = median(ourses);
      const ratio = bare / ours;
      const target = scenario.target;
      // The landing's target is in µs of CPU (capture.ts); here its extra instructions are the cross-check.
      const verdict =
        target.kind === 'ratio'
          ? `target >= ${target.value.toFixed(2)}${ratio >= target.value ? '' : ', MISSED'}`
          : `target in capture.ts: extra CPU <= ${target.value} µs`;
      console.log(
        `${framework.padEnd(7)} ${scenario.name.padEnd(24)} instructions/request bare ${(bare / 1000).toFixed(1)}k, ` +
          `ours ${(ours / 1000).toFixed(1)}k (${ours >= bare ? '+' : ''}${((ours - bare) / 1000).toFixed(1)}k), ratio ${ratio.toFixed(3)} ` +
          `(${verdict})`,
      );
      if (diffTop > 0 && last !== undefined) {
        console.log(`  where ours differs (last start of each), instructions/request, top ${diffTop}:`);
        for (const row of differences(last.bare, last.ours, diffTop)) console.log(row);
      }
    }
  }
}

await main();
