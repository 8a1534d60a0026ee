/**
 * Benchmark: throughput of `POST /v1/conversions/s2s` on the sandbox versus a bare `node:http` server
 * that reads the same body, parses it and answers the same JSON shape, measured side by side in one run
 * with the same load generator (autocannon, fixed connections, bounded by time). Each request carries a
 * fresh `order_id`, so the sandbox really confirms (auth, validation, click lookup, charge, store).
 *
 * Each server runs in its own child process, so the load generator does not share its event loop. The
 * machine is shared, so the two servers are measured in alternating rounds (noise hits both alike), and
 * each child also reports its own CPU time, giving CPU microseconds per request: the cost of the server
 * itself, independent of the load generator. Prints requests/s of both and the ratio sandbox / bare
 * (target >= 0.7).
 *
 *   node --conditions=@postback/source bench/sandbox.ts [--duration 5] [--connections 32]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

/** The slice of autocannon's API used here (the package ships no types, and no `@types` is installed). */
interface LoadResult {
  requests: { average: number; total: number };
  non2xx: number;
  errors: number;
}
interface LoadRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  setupRequest?: (req: LoadRequest) => LoadRequest;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  requests: LoadRequest[];
}) => Promise<LoadResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

interface Target {
  url: string;
  key: string;
  tokens: string[];
}

const CLICKS = 200;

/** Child side of the CPU probe: each line on stdin is answered with this process's CPU time (µs). */
function answerCpuProbes(): void {
  createInterface({ input: process.stdin }).on('line', () => {
    const { user, system } = process.cpuUsage();
    process.stdout.write(`${user + system}\n`);
  });
}

/** Child mode: start one server, print its target as one JSON line, run until killed. */
async function serve(kind: string): Promise<void> {
  answerCpuProbes();
  process.once('SIGTERM', () => process.exit(0)); // a clean exit, so `--cpu-prof` can write its profile
  if (kind === 'bare') {
    const server = createServer({ keepAlive: true }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          order_id: string;
          value_micros: number;
        };
        const text = JSON.stringify({
          order_id: body.order_id,
          campaign_id: 'cmp_bench',
          value_micros: body.value_micros,
          status: 'confirmed',
          confirmed_at: new Date().toISOString(),
          duplicate: false,
        });
        res.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const target: Target = { url: `http://127.0.0.1:${port}`, key: 'none', tokens: ['t'] };
    process.stdout.write(`${JSON.stringify(target)}\n`);
    return;
  }
  const { startSandbox } = await import('@postback/sandbox');
  const sandbox = await startSandbox();
  const { keys } = await sandbox.control.createAccount({ balance_micros: 1_000_000_000_000 });
  const res = await fetch(`${sandbox.url}/v1/campaigns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys.write}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'bench',
      pricing_model: 'cpa',
      bid_micros: 1,
      total_budget_micros: 1_000_000_000_000,
      conversion_source: 's2s',
      creatives: [
        { headline: 'h', body: 'b', cta: 'Buy', landing_url: 'https://shop.example/p', format: 'card' },
      ],
    }),
  });
  const campaign = (await res.json()) as { id: string };
  const tokens: string[] = [];
  for (let i = 0; i < CLICKS; i++) tokens.push((await sandbox.control.click(campaign.id)).click_token);
  const target: Target = { url: sandbox.url, key: keys.conversions, tokens };
  process.stdout.write(`${JSON.stringify(target)}\n`);
}

interface Child {
  kind: string;
  process: ChildProcess;
  target: Target;
  /** CPU time (µs) the child has used so far. */
  cpu(): Promise<number>;
}

function startChild(kind: string): Promise<Child> {
  const child = spawn(process.execPath, [...process.execArgv, import.meta.filename, '--serve', kind], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const nextLine = () => new Promise<string>((resolve) => waiting.push(resolve));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${kind} server exited early with code ${code}`)));
    nextLine().then((line) =>
      resolve({
        kind,
        process: child,
        target: JSON.parse(line) as Target,
        cpu: async () => {
          const answer = nextLine();
          child.stdin?.write('cpu\n');
          return Number(await answer);
        },
      }),
    );
  });
}

async function load(target: Target, duration: number, connections: number): Promise<LoadResult> {
  let n = 0;
  const run = `${process.pid}-${Date.now()}`;
  return autocannon({
    url: target.url,
    connections,
    duration,
    requests: [
      {
        method: 'POST',
        path: '/v1/conversions/s2s',
        headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
        setupRequest: (req) => {
          n += 1;
          req.body = JSON.stringify({
            click_token: target.tokens[n % target.tokens.length],
            order_id: `ord-${run}-${n}`,
            value_micros: 12_340_000,
          });
          return req;
        },
      },
    ],
  });
}

interface Tally {
  requests: number;
  seconds: number;
  cpuMicros: number;
}

/** One round against one server; adds its requests, wall time and the server's CPU time to `tally`. */
async function round(child: Child, seconds: number, connections: number, tally: Tally): Promise<void> {
  const cpuBefore = await child.cpu();
  const started = performance.now();
  const result = await load(child.target, seconds, connections);
  tally.seconds += (performance.now() - started) / 1000;
  tally.cpuMicros += (await child.cpu()) - cpuBefore;
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${child.kind}: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  }
  tally.requests += result.requests.total;
}

const { values } = parseArgs({
  options: {
    serve: { type: 'string' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
  },
});
if (values.serve !== undefined) {
  await serve(values.serve);
} else {
  const duration = Number(values.duration);
  const connections = Number(values.connections);
  const rounds = Math.max(1, Math.round(duration));
  const children = [await startChild('bare'), await startChild('sandbox')];
  const [bare, sandbox] = children as [Child, Child];
  try {
    const tallies = new Map<Child, Tally>(
      children.map((c) => [c, { requests: 0, seconds: 0, cpuMicros: 0 }]),
    );
    for (const child of children) await load(child.target, 1, connections); // warm-up: JIT, connections
    for (let r = 0; r < rounds; r++) {
      for (const child of r % 2 === 0 ? children : [...children].reverse()) {
        await round(child, duration / rounds, connections, tallies.get(child) as Tally);
      }
    }
    const rate = (c: Child) => (tallies.get(c) as Tally).requests / (tallies.get(c) as Tally).seconds;
    const cpuPer = (c: Child) => (tallies.get(c) as Tally).cpuMicros / (tallies.get(c) as Tally).requests;
    const ratio = rate(sandbox) / rate(bare);
    console.log(
      `POST /v1/conversions/s2s, ${connections} connections, ${duration} s per server in ${rounds} alternating rounds, fresh order_id per request`,
    );
    for (const c of children) {
      console.log(
        `  ${c.kind.padEnd(8)} ${rate(c).toFixed(0).padStart(8)} req/s   ${cpuPer(c).toFixed(1).padStart(6)} µs server CPU per request`,
      );
    }
    console.log(
      `  ratio sandbox/bare throughput: ${ratio.toFixed(2)} (target >= 0.70) ${ratio >= 0.7 ? 'OK' : 'BELOW TARGET'}`,
    );
    console.log(`  ratio bare/sandbox CPU per request: ${(cpuPer(bare) / cpuPer(sandbox)).toFixed(2)}`);
  } finally {
    for (const c of children) c.process.kill();
  }
}
