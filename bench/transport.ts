/**
 * Transport benchmark of @postback/client: requests/s of small JSON POSTs to a bare node:http server on
 * 127.0.0.1 (in a worker thread, so the server does not share the client's event loop), with the same
 * concurrency for each contender:
 *   (a) global fetch  (b) undici Pool.request  (c) undici request() with a keep-alive Agent
 *   (d) the client's default path (conversions.confirm, with request and response validation)
 *   (e) the client with the global fetch injected — the same validation work over fetch
 * Each contender runs ROUNDS times, interleaved with the others so a noisy neighbour on a shared machine
 * hits all of them alike; each run is bounded by count and by time, and the median round is reported.
 * Prints the ratios against global fetch measured in this run.
 *
 * Run: node --conditions=@postback/source bench/transport.ts
 */
import { Worker } from 'node:worker_threads';
import { createClient } from '@postback/client';
import { Agent, Pool, request as undiciRequest } from 'undici';

const CONCURRENCY = 50;
const ROUNDS = 3;
const MAX_REQUESTS = 20_000;
const MAX_MS = 1_700;
const WARMUP_MS = 300;

const serverCode = `
const { createServer } = require('node:http');
const { parentPort } = require('node:worker_threads');
const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    const sent = body ? JSON.parse(body) : {};
    const out = JSON.stringify({ order_id: sent.order_id ?? 'x', campaign_id: 'cmp_bench', value_micros: sent.value_micros ?? 0,
      status: 'confirmed', confirmed_at: '2026-01-01T00:00:00.000Z', duplicate: false });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => server.close(() => process.exit(0)));
`;

interface Result {
  name: string;
  rps: number;
  count: number;
  /** Process CPU time per request (client thread + server worker), in µs: steadier than req/s on a busy machine. */
  cpuUs: number;
}

async function runFor(
  ms: number,
  max: number,
  once: (i: number) => Promise<unknown>,
): Promise<{ done: number; ms: number }> {
  let started = 0;
  let done = 0;
  const until = performance.now() + ms;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (started < max && performance.now() < until) {
        await once(started++);
        done++;
      }
    }),
  );
  return { done, ms: performance.now() - t0 };
}

/** Runs every contender ROUNDS times, interleaved; reports the median round of each. */
async function measureAll(contenders: Array<[string, (i: number) => Promise<unknown>]>): Promise<Result[]> {
  const rounds = new Map<string, Array<{ rps: number; count: number; cpuUs: number }>>(
    contenders.map(([name]) => [name, []]),
  );
  for (const [, once] of contenders) await runFor(WARMUP_MS, MAX_REQUESTS, once);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, once] of contenders) {
      const cpu0 = process.cpuUsage();
      const { done, ms } = await runFor(MAX_MS, MAX_REQUESTS, once);
      const cpu = process.cpuUsage(cpu0);
      rounds
        .get(name)
        ?.push({ rps: (done / ms) * 1000, count: done, cpuUs: (cpu.user + cpu.system) / Math.max(done, 1) });
    }
  }
  return contenders.map(([name]) => {
    const sorted = (rounds.get(name) ?? []).sort((a, b) => a.rps - b.rps);
    const median = sorted[Math.floor(sorted.length / 2)] ?? { rps: 0, count: 0, cpuUs: 0 };
    const cpus = sorted.map((x) => x.cpuUs).sort((a, b) => a - b);
    const cpuUs = cpus[Math.floor(cpus.length / 2)] ?? 0;
    return { name, rps: median.rps, count: sorted.reduce((n, x) => n + x.count, 0), cpuUs };
  });
}

const worker = new Worker(serverCode, { eval: true });
const port = await new Promise<number>((resolve) => worker.once('message', resolve));
const origin = `http://127.0.0.1:${port}`;
const url = `${origin}/v1/conversions/s2s`;
const headers = {
  'content-type': 'application/json',
  authorization: 'Bearer bench',
  accept: 'application/json',
};
const payload = (i: number) =>
  JSON.stringify({
    click_token: 'tok_bench_000000000000000000',
    order_id: `ord_${i}`,
    value_micros: 12_340_000,
  });

const pool = new Pool(origin, { connections: CONCURRENCY });
const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 60_000 });
const clientDefault = createClient({ baseUrl: origin, apiKey: 'bench', connections: CONCURRENCY });
const clientFetch = createClient({ baseUrl: origin, apiKey: 'bench', fetch: globalThis.fetch });
const confirm = (client: typeof clientDefault, i: number) =>
  client.conversions.confirm({
    click_token: 'tok_bench_000000000000000000',
    order_id: `ord_${i}`,
    value_micros: 12_340_000,
  });

let results: Result[] = [];
try {
  results = await measureAll([
    [
      '(a) global fetch',
      async (i) => {
        const res = await fetch(url, { method: 'POST', headers, body: payload(i) });
        return res.json();
      },
    ],
    [
      '(b) undici Pool.request',
      async (i) => {
        const res = await pool.request({
          method: 'POST',
          path: '/v1/conversions/s2s',
          headers,
          body: payload(i),
        });
        return res.body.json();
      },
    ],
    [
      '(c) undici request + keep-alive Agent',
      async (i) => {
        const res = await undiciRequest(url, {
          method: 'POST',
          headers,
          body: payload(i),
          dispatcher: agent,
        });
        return res.body.json();
      },
    ],
    [`(d) client default (${clientDefault.transport})`, (i) => confirm(clientDefault, i)],
    ['(e) client with injected fetch', (i) => confirm(clientFetch, i)],
  ]);
} finally {
  await Promise.all([pool.close(), agent.close(), clientDefault.close(), clientFetch.close()]);
  worker.postMessage('stop');
}

const base = results[0]?.rps ?? 1;
console.log(
  `transport: node ${process.version}, ${CONCURRENCY} in flight, median of ${ROUNDS} interleaved rounds of up to ${MAX_REQUESTS} requests or ${MAX_MS / 1000} s`,
);
for (const r of results) {
  console.log(
    `${r.name.padEnd(42)} ${r.rps.toFixed(0).padStart(7)} req/s  ${r.cpuUs.toFixed(0).padStart(5)} CPU µs/req  x${(r.rps / base).toFixed(2)} vs global fetch  (${r.count} req in all rounds)`,
  );
}
const d = results[3];
const e = results[4];
if (d && e) console.log(`client default vs client over fetch: x${(d.rps / e.rps).toFixed(2)}`);
