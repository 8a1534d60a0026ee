/**
 * The apps and requests of the capture benchmarks (`capture.ts` for throughput, `capture-instructions.ts`
 * for instructions per request): an Express 5 and a Koa 3 app answering `ok`, bare or with the postback
 * middleware, and the three kinds of request with their targets.
 *
 * Child mode, used by both benchmarks: `node --conditions=@postback/source bench/capture-apps.ts --serve
 * express:ours` starts one app on an ephemeral port, prints the port, then answers each line on stdin
 * with its CPU time so far (µs); it exits when stdin closes.
 */
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

export type Framework = 'express' | 'koa';
export type Variant = 'bare' | 'ours';

/** One kind of request, and the throughput ratio each framework must reach with the middleware. */
export interface Scenario {
  name: string;
  path: string;
  headers: Record<string, string>;
  target: Record<Framework, number>;
}

/** What autocannon reports of a run (the part the benchmarks read). */
export interface LoadResult {
  requests: { total: number };
  non2xx: number;
  errors: number;
}

/** The slice of autocannon's API the benchmarks use (it ships no types): bounded by time or by count. */
export const autocannon = createRequire(import.meta.url)('autocannon') as (options: {
  url: string;
  connections: number;
  duration?: number;
  amount?: number;
  maxOverallRequests?: number;
  headers: Record<string, string>;
}) => Promise<LoadResult>;

/** This file, for starting an app in a child process: `node <APPS> --serve express:ours`. */
export const APPS = new URL(import.meta.url).pathname;

const SECRET = 'bench-secret-0123456789-abcdefghijklmnop';
const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';

/** The three kinds of request: no token (most traffic), a valid cookie the app does not read, a landing. */
export async function captureScenarios(): Promise<Scenario[]> {
  const { createClickCookieCodec, DEFAULT_CONFIRM_WINDOW_MS } = await import('@postback/core');
  const codec = createClickCookieCodec({
    secrets: [SECRET],
    confirmWindowMs: DEFAULT_CONFIRM_WINDOW_MS,
    tokenMinLength: 16,
    tokenMaxLength: 256,
  });
  const cookie = await codec.encode({ token: TOKEN, clickedAt: Date.now() });
  return [
    {
      name: 'no token',
      path: '/products?page=2',
      headers: { cookie: 'session=abc123' },
      target: { express: 0.97, koa: 0.97 },
    },
    {
      name: 'valid cookie, not read',
      path: '/products?page=2',
      headers: { cookie: `session=abc123; postback_click=${cookie}` },
      target: { express: 0.97, koa: 0.97 },
    },
    {
      name: 'landing (sign + set)',
      path: `/landing?utm_source=ad&click_token=${TOKEN}`,
      headers: {},
      target: { express: 0.8, koa: 0.8 },
    },
  ];
}

/** Child mode: one app on an ephemeral port; prints the port, then answers CPU probes on stdin. */
async function serve(framework: Framework, variant: Variant): Promise<void> {
  let server: Server;
  if (framework === 'express') {
    const { default: express } = await import('express');
    const { postback } = await import('@postback/express');
    const app = express();
    app.disable('x-powered-by');
    if (variant === 'ours') app.use(postback({ secrets: [SECRET] }));
    app.get('/{*path}', (_req, res) => {
      res.send('ok');
    });
    server = app.listen(0, '127.0.0.1');
  } else {
    const { default: Koa } = await import('koa');
    const { postback } = await import('@postback/koa');
    const app = new Koa();
    if (variant === 'ours') app.use(postback({ secrets: [SECRET] }));
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    server = app.listen(0, '127.0.0.1');
  }
  await new Promise((resolve) => server.once('listening', resolve));
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
  createInterface({ input: process.stdin })
    .on('line', () => {
      const { user, system } = process.cpuUsage();
      process.stdout.write(`${user + system}\n`);
    })
    .on('close', () => process.exit(0));
}

if (import.meta.filename === process.argv[1]) {
  const { values } = parseArgs({ options: { serve: { type: 'string' } } });
  const [framework, variant] = (values.serve ?? '').split(':') as [Framework, Variant];
  if (!['express', 'koa'].includes(framework) || !['bare', 'ours'].includes(variant)) {
    console.error('usage: capture-apps.ts --serve express|koa:bare|ours');
    process.exit(2);
  }
  await serve(framework, variant);
}
