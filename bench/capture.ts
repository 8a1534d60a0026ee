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
 * Each kind also has a reference app, measured beside bare in a run of its own: for landings ours with a
 * stub in place of the platform HMAC (`stub`: all a landing does but sign; ours beyond it is what the
 * signature costs); for the other kinds a middleware that does nothing (`empty`: what any middleware
 * costs in that framework; ours beyond it is what capture itself costs). Throughput ratios (ours / bare)
 * are printed for reference only.
 *
 *   node --conditions=@postback/source bench/capture.ts [--starts 3] [--rounds 4] [--requests 4000]
 *     [--connections 5] [--framework express|koa] [--only <kind prefix>]
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

/** The reference app of a kind: ours with a stub HMAC for landings, an empty middleware for the others. */
const referenceOf = (scenario: Scenario): Variant => (scenario.target.kind === 'extra-us' ? 'stub' : 'empty');
const REFERENCE_NAME: Record<string, string> = {
  stub: 'ours with a stub for the platform HMAC',
  empty: 'an empty middleware',
};

/** One round of one kind: ours beside bare, then the reference beside another bare run. */
interface Round {
  ours: Map<Variant, Run>;
  reference: Map<Variant, Run>;
}

/** The lines printed for one framework and kind, with the verdict against the target. */
function report(framework: Framework, scenario: Scenario, rounds: Round[]): string[] {
  const cpu = (pick: (round: Round) => Map<Variant, Run>, variant: Variant) =>
    rounds.map((round) => (pick(round).get(variant) as Run).cpuPerRequest);
  const bare = cpu((r) => r.ours, 'bare');
  const ours = cpu((r) => r.ours, 'ours');
  const extra = ours.map((o, i) => o - (bare[i] as number));
  const ratio = ours.map((o, i) => (bare[i] as number) / o);
  const rpsRatio = rounds.map((r) => (r.ours.get('ours') as Run).rps / (r.ours.get('bare') as Run).rps);
  const reference = referenceOf(scenario);
  const referenceBare = cpu((r) => r.reference, 'bare');
  const referenceExtra = cpu((r) => r.reference, reference).map((c, i) => c - (referenceBare[i] as number));
  // Each round's difference of differences: both measured against a bare app at the same time.
  const beyond = extra.map((e, i) => e - (referenceExtra[i] as number));
  const { kind, value } = scenario.target;
  const met = kind === 'extra-us' ? quantile(extra, 0.5) <= value : quantile(ratio, 0.5) >= value;
  const verdict = `${kind === 'extra-us' ? `target extra <= ${value} µs` : `target >= ${value}`}${met ? '' : ', MISSED'}`;
  return [
    `${framework.padEnd(7)} ${scenario.name.padEnd(22)} CPU µs/request bare ${spread(bare, 1)}, ours ${spread(ours, 1)}`,
    `        extra ${spread(extra, 1)} µs, ratio bare/ours ${spread(ratio, 3)} (${verdict}); throughput ratio ${spread(rpsRatio, 2)}`,
    `        ${REFERENCE_NAME[reference]}: extra ${spread(referenceExtra, 1)} µs; ours beyond it ${spread(beyond, 1)} µs` +
      (reference === 'stub' ? ' (the signature)' : ''),
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      starts: { type: 'string', default: '3' },
      rounds: { type: 'string', default: '4' },
      requests: { type: 'string', default: '4000' },
      connections: { type: 'string', default: '5' },
      framework: { type: 'string' },
      only: { type: 'string' },
    },
  });
  const starts = Number(values.starts);
  const roundsPerStart = Number(values.rounds);
  const requests = Number(values.requests);
  const connections = Number(values.connections);
  const frameworks = (['express', 'koa'] as const).filter(
    (f) => values.framework === undefined || values.framework === f,
  );
  const scenarios = (await captureScenarios()).filter(
    (s) => values.only === undefined || s.name.startsWith(values.only),
  );
  const variants: Variant[] = ['bare', 'ours', ...new Set(scenarios.map(referenceOf))];

  console.log(
    `capture bench: CPU µs per request of each server process (user + system), two apps loaded together with ` +
      `${requests} requests each, ${connections} connections each; ${starts} starts × ${roundsPerStart} rounds; ` +
      `median [p25–p75] over rounds; Node ${process.version}`,
  );
  for (const framework of frameworks) {
    const rounds = new Map<Scenario, Round[]>(scenarios.map((s) => [s, []]));
    for (let start = 0; start < starts; start++) {
      const children = await Promise.all(variants.map((variant) => startChild(framework, variant)));
      const child = (variant: Variant) => children.find((c) => c.variant === variant) as Child;
      // Alternate which app's load starts first.
      const together = (pair: Variant[], scenario: Scenario, count: number, round: number) =>
        runTogether((round % 2 === 0 ? pair : [...pair].reverse()).map(child), scenario, count, connections);
      try {
        // Warm-up: every kind through every app, so the JIT has settled before anything is counted.
        for (const scenario of scenarios) {
          await together(['bare', 'ours'], scenario, requests * 2, 0);
          await together(['bare', referenceOf(scenario)], scenario, requests * 2, 0);
        }
        for (let round = 0; round < roundsPerStart; round++) {
          for (const scenario of scenarios) {
            const ours = await together(['bare', 'ours'], scenario, requests, round);
            const reference = await together(['bare', referenceOf(scenario)], scenario, requests, round);
            rounds.get(scenario)?.push({ ours, reference });
          }
        }
      } finally {
        for (const c of children) c.process.stdin?.end();
      }
    }
    for (const scenario of scenarios) {
      for (const line of report(framework, scenario, rounds.get(scenario) ?? [])) console.log(line);
    }
  }
}

await main();
