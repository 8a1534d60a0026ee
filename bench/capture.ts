/**
 * Benchmark: what click capture costs an Express 5 and a Koa 3 app, against the same app without the
 * middleware, side by side in one run. Three kinds of request:
 *   1. no token, no click cookie (most traffic)                target ratio >= 0.97
 *   2. a valid signed click cookie, the app not reading it     target ratio >= 0.97 (verification is lazy)
 *   3. a landing with a token: cookie signed and set           target >= 0.80 (Express and Koa)
 *
 * Each server (bare or with capture) runs in its own child process so the load generator (autocannon, in
 * this process) does not share its event loop. The machine is shared and its speed drifts from second to
 * second, so per kind the two servers are measured in pairs of short runs back to back (AB, then BA, …,
 * `--rounds` pairs after a warm-up), each run bounded by time and by request count; each pair gives a
 * ratio measured under the same conditions, and the median pair ratio is reported. Each child also
 * reports its CPU time, giving CPU µs per request (the server's own cost), paired the same way.
 * Prints requests/s of both (medians), and ratio = ours / bare for throughput and bare / ours for CPU per request.
 *
 *   node --conditions=@postback/source bench/capture.ts [--duration 1] [--rounds 8] [--connections 10]
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

const MAX_REQUESTS_PER_RUN = 2_000_000;

interface Child {
  name: string;
  url: string;
  process: ChildProcess;
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
        name: `${framework} ${variant}`,
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

interface Tally {
  requests: number;
  seconds: number;
  cpuMicros: number;
}

async function run(
  child: Child,
  scenario: Scenario,
  seconds: number,
  connections: number,
  tally?: Tally,
): Promise<void> {
  const cpuBefore = await child.cpu();
  const started = performance.now();
  const result = await autocannon({
    url: child.url + scenario.path,
    connections,
    duration: seconds,
    maxOverallRequests: MAX_REQUESTS_PER_RUN,
    headers: scenario.headers,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(
      `${child.name} ${scenario.name}: ${result.non2xx} non-2xx answers and ${result.errors} errors`,
    );
  }
  if (tally === undefined) return;
  tally.seconds += (performance.now() - started) / 1000;
  tally.cpuMicros += (await child.cpu()) - cpuBefore;
  tally.requests += result.requests.total;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '8' },
      connections: { type: 'string', default: '10' },
    },
  });
  const seconds = Number(values.duration);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const scenarios = await captureScenarios();

  console.log(
    `capture bench: ${seconds}s per run, ${connections} connections, ${rounds} AB/BA pairs per scenario (median), Node ${process.version}`,
  );
  const results: string[] = [];
  for (const framework of ['express', 'koa'] as const) {
    const bare = await startChild(framework, 'bare');
    const ours = await startChild(framework, 'ours');
    try {
      for (const scenario of scenarios) {
        await run(bare, scenario, 1, connections);
        await run(ours, scenario, 1, connections);
        const pairs: Array<{ bare: Tally; ours: Tally }> = [];
        for (let round = 0; round < rounds; round++) {
          const pair = {
            bare: { requests: 0, seconds: 0, cpuMicros: 0 },
            ours: { requests: 0, seconds: 0, cpuMicros: 0 },
          };
          for (const child of round % 2 === 0 ? [bare, ours] : [ours, bare]) {
            await run(child, scenario, seconds, connections, child === bare ? pair.bare : pair.ours);
          }
          pairs.push(pair);
        }
        const rps = (t: Tally) => t.requests / t.seconds;
        const cpuPerRequest = (t: Tally) => t.cpuMicros / t.requests;
        const median = (values: number[]) => {
          const sorted = [...values].sort((a, b) => a - b);
          const mid = sorted.length >> 1;
          return sorted.length % 2 === 1
            ? (sorted[mid] as number)
            : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
        };
        const tallies = {
          bare: {
            rps: median(pairs.map((p) => rps(p.bare))),
            cpu: median(pairs.map((p) => cpuPerRequest(p.bare))),
          },
          ours: {
            rps: median(pairs.map((p) => rps(p.ours))),
            cpu: median(pairs.map((p) => cpuPerRequest(p.ours))),
          },
        };
        const ratio = median(pairs.map((p) => rps(p.ours) / rps(p.bare)));
        const cpuRatio = median(pairs.map((p) => cpuPerRequest(p.bare) / cpuPerRequest(p.ours)));
        const target = scenario.target[framework];
        const line =
          `${framework.padEnd(7)} ${scenario.name.padEnd(24)} bare ${tallies.bare.rps.toFixed(0).padStart(6)} req/s, ` +
          `ours ${tallies.ours.rps.toFixed(0).padStart(6)} req/s, ratio ${ratio.toFixed(3)} (target >= ${target.toFixed(2)}` +
          `${ratio >= target ? '' : ', MISSED'}); CPU µs/req bare ${tallies.bare.cpu.toFixed(1)}, ` +
          `ours ${tallies.ours.cpu.toFixed(1)}, ratio ${cpuRatio.toFixed(3)}`;
        console.log(line);
        results.push(line);
      }
    } finally {
      bare.process.stdin?.end();
      ours.process.stdin?.end();
    }
  }
}

await main();
