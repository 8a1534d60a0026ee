/**
 * Benchmark: what click capture costs an Express 5 and a Koa 3 app in CPU time per request, against the
 * same app without the middleware, side by side in one run. Three kinds of request:
 *   1. no token, no click cookie (most traffic)              target: CPU ratio bare / ours >= 0.97
 *   2. a valid signed click cookie, the app not reading it   target: CPU ratio bare / ours >= 0.97 (lazy)
 *   3. a landing with a token: cookie signed and set         target: ours − bare <= 10 µs of CPU
 *
 * Why CPU per request, and why at the same time. The machine is shared: throughput swings with what else
 * runs (the same code has measured 0.95 and 0.71 of bare in two runs), and so does CPU per request
 * measured one app after the other (an app against itself: ±4 µs). Here every app runs in its own child
 * process, two of them loaded AT THE SAME TIME with `--requests` requests each (autocannon, `--connections`
 * each, from this process), so whatever the neighbours do hits them alike; each child reports its own
 * `process.cpuUsage()` (user + system) before and after its requests, and CPU per request is that time
 * over the requests it served (an app against itself this way: ±0.5 µs). Each app is started `--starts`
 * times (the JIT settles differently from one start to the next), `--rounds` rounds per start after a
 * warm-up; each round gives one difference per kind, and the median with the interquartile range
 * [p25–p75] over all rounds is printed.
 *
 * `--against` measures ours beside another app instead of bare, to see where the cost goes: `stub` is
 * ours with a stub in place of the platform HMAC (all a landing does but sign: the extra is then what the
 * signature costs), `empty` a middleware that does nothing (what any middleware costs in that framework:
 * the extra is then what capture itself costs). Two apps, both loaded in every round: a third app,
 * measured in rounds of its own and idle while the other two ran, gave figures spread over ±10 µs.
 * Throughput ratios (ours / bare) are printed for reference only.
 *
 *   node --conditions=@postback/source bench/capture.ts [--starts 3] [--rounds 5] [--requests 4000]
 *     [--connections 5] [--framework express|koa] [--only <kind prefix>] [--against bare|stub|empty]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  APPS,
  autocannon,
  captureScenarios,
  type Framework,
  type Scenario,
  type Variant,
} from './capture-apps.ts';

/** A round that takes longer than this is a broken server, not a slow one. */
const RUN_LIMIT_MS = 120_000;

interface Child {
  variant: Variant;
  url: string;
  process: ChildProcess;
  /** The child's CPU time so far (user + system), µs. */
  cpu(): Promise<number>;
}

function startChild(framework: Framework, variant: Variant): Promise<Child> {
  const child = spawn(process.execPath, [...process.execArgv, APPS, '--serve', `${framework}:${variant}`], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const nextLine = () => new Promise<string>((resolve) => waiting.push(resolve));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`${framework} ${variant} server exited early with code ${code}`)),
    );
    nextLine().then((port) =>
      resolve({
        variant,
        url: `http://127.0.0.1:${port}`,
        process: child,
        cpu: async () => {
          const answer = nextLine();
          child.stdin?.write('cpu\n');
          return Number(await answer);
        },
      }),
    );
  });
}

/** What one app did in one run: CPU µs per request and requests per second. */
interface Run {
  cpuPerRequest: number;
  rps: number;
}

/** Loads every child at once with `requests` requests each, over its own `connections`. */
async function runTogether(
  children: Child[],
  scenario: Scenario,
  requests: number,
  connections: number,
): Promise<Map<Variant, Run>> {
  const started = performance.now();
  const limit = setTimeout(() => {
    console.error(`a round took over ${RUN_LIMIT_MS} ms: stopping`);
    process.exit(1);
  }, RUN_LIMIT_MS);
  const before = await Promise.all(children.map((child) => child.cpu()));
  const results = await Promise.all(
    children.map(async (child) => {
      // Each app's CPU is read as soon as its own requests are done, not when the slowest is.
      const result = await autocannon({
        url: child.url + scenario.path,
        connections,
        amount: requests,
        sampleInt: 20,
        headers: scenario.headers,
      });
      return { result, cpu: await child.cpu(), seconds: (performance.now() - started) / 1000 };
    }),
  );
  clearTimeout(limit);
  const runs = new Map<Variant, Run>();
  children.forEach((child, i) => {
    const { result, cpu, seconds } = results[i] as (typeof results)[number];
    if (result.non2xx > 0 || result.errors > 0) {
      throw new Error(
        `${child.variant} ${scenario.name}: ${result.non2xx} non-2xx answers and ${result.errors} errors`,
      );
    }
    const served = result.requests.total;
    runs.set(child.variant, {
      cpuPerRequest: (cpu - (before[i] as number)) / served,
      rps: served / seconds,
    });
  });
  return runs;
}

/** The p-quantile (0..1) of `values`, interpolated. */
function quantile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * p;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (at - low);
}

/** `median [p25–p75]` with `digits` decimals. */
const spread = (values: number[], digits: number): string =>
  `${quantile(values, 0.5).toFixed(digits)} [${quantile(values, 0.25).toFixed(digits)}–${quantile(values, 0.75).toFixed(digits)}]`;

const BASELINE_NAME: Record<Variant, string> = {
  bare: 'bare',
  empty: 'an empty middleware',
  stub: 'ours with a stub HMAC',
  ours: 'ours',
};

/** The lines printed for one framework and kind, with the verdict against the target (against bare only). */
function report(
  framework: Framework,
  scenario: Scenario,
  baseline: Variant,
  rounds: Map<Variant, Run>[],
): string[] {
  const cpu = (variant: Variant) => rounds.map((round) => (round.get(variant) as Run).cpuPerRequest);
  const base = cpu(baseline);
  const ours = cpu('ours');
  const extra = ours.map((o, i) => o - (base[i] as number));
  const ratio = ours.map((o, i) => (base[i] as number) / o);
  const rpsRatio = rounds.map((r) => (r.get('ours') as Run).rps / (r.get(baseline) as Run).rps);
  const { kind, value } = scenario.target;
  const met = kind === 'extra-us' ? quantile(extra, 0.5) <= value : quantile(ratio, 0.5) >= value;
  const verdict =
    baseline !== 'bare'
      ? 'targets are against bare'
      : `${kind === 'extra-us' ? `target extra <= ${value} µs` : `target >= ${value}`}${met ? '' : ', MISSED'}`;
  return [
    `${framework.padEnd(7)} ${scenario.name.padEnd(22)} CPU µs/request ${BASELINE_NAME[baseline]} ${spread(base, 1)}, ours ${spread(ours, 1)}`,
    `        extra ${spread(extra, 1)} µs, ratio ${baseline}/ours ${spread(ratio, 3)} (${verdict}); throughput ratio ${spread(rpsRatio, 2)}`,
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      starts: { type: 'string', default: '3' },
      rounds: { type: 'string', default: '5' },
      requests: { type: 'string', default: '4000' },
      connections: { type: 'string', default: '5' },
      framework: { type: 'string' },
      only: { type: 'string' },
      against: { type: 'string', default: 'bare' },
    },
  });
  const starts = Number(values.starts);
  const roundsPerStart = Number(values.rounds);
  const requests = Number(values.requests);
  const connections = Number(values.connections);
  const baseline = values.against as Variant;
  if (!['bare', 'empty', 'stub'].includes(baseline)) throw new Error('--against must be bare, empty or stub');
  const frameworks = (['express', 'koa'] as const).filter(
    (f) => values.framework === undefined || values.framework === f,
  );
  const scenarios = (await captureScenarios()).filter(
    (s) => values.only === undefined || s.name.startsWith(values.only),
  );

  console.log(
    `capture bench: CPU µs per request of each server process (user + system), ${BASELINE_NAME[baseline]} and ours ` +
      `loaded together with ${requests} requests each, ${connections} connections each; ${starts} starts × ` +
      `${roundsPerStart} rounds; median [p25–p75] over rounds; Node ${process.version}`,
  );
  for (const framework of frameworks) {
    const rounds = new Map<Scenario, Map<Variant, Run>[]>(scenarios.map((s) => [s, []]));
    for (let start = 0; start < starts; start++) {
      const children = await Promise.all([baseline, 'ours' as const].map((v) => startChild(framework, v)));
      try {
        // Warm-up: every kind through both apps, so the JIT has settled before anything is counted.
        for (const scenario of scenarios) await runTogether(children, scenario, requests * 2, connections);
        for (let round = 0; round < roundsPerStart; round++) {
          for (const scenario of scenarios) {
            // Alternate which app's load starts first.
            const order = round % 2 === 0 ? children : [...children].reverse();
            rounds.get(scenario)?.push(await runTogether(order, scenario, requests, connections));
          }
        }
      } finally {
        for (const child of children) child.process.stdin?.end();
      }
    }
    for (const scenario of scenarios) {
      for (const line of report(framework, scenario, baseline, rounds.get(scenario) ?? [])) console.log(line);
    }
  }
}

await main();
