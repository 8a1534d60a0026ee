/**
 * The apps and requests of the capture benchmarks (`capture.ts` for CPU time per request,
 * `capture-instructions.ts` for instructions per request): an Express 5 and a Koa 3 app answering `ok`,
 * bare, with the postback middleware, or with a reference middleware in its place (see {@link Variant}),
 * and the three kinds of request with their targets.
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
/**
 * The app without the middleware (`bare`), with it (`ours`), or with a reference in its place: a
 * middleware that does nothing (`empty`, what any middleware costs in that framework), or ours with a stub
 * in place of the platform HMAC (`stub`, everything a landing costs but the signature).
 */
export type Variant = 'bare' | 'ours' | 'empty' | 'stub';
const VARIANTS: readonly Variant[] = ['bare', 'ours', 'empty', 'stub'];

/**
 * What the middleware may cost on one kind of request, in CPU per request: at most `value` µs more than
 * bare (`extra-us`), or a CPU ratio bare / ours of at least `value` (`ratio`).
 */
export interface CaptureTarget {
  kind: 'extra-us' | 'ratio';
  value: number;
}

/** One kind of request, and what the middleware may cost on it (the same for both frameworks). */
export interface Scenario {
  name: string;
  path: string;
  headers: Record<string, string>;
  target: CaptureTarget;
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
  /** How often (ms) it samples its counters; a run bounded by `amount` ends at the next sample. */
  sampleInt?: number;
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
      target: { kind: 'ratio', value: 0.97 },
    },
    {
      name: 'valid cookie, not read',
      path: '/products?page=2',
      headers: { cookie: `session=abc123; postback_click=${cookie}` },
      target: { kind: 'ratio', value: 0.97 },
    },
    {
      name: 'landing (sign + set)',
      path: `/landing?utm_source=ad&click_token=${TOKEN}`,
      headers: {},
      target: { kind: 'extra-us', value: 10 },
    },
  ];
}

/** A stand-in for the platform HMAC: a constant MAC, so a `stub` app does all a landing does but sign. */
const STUB_HMAC = () => () => new Uint8Array(32);

/** Child mode: one app on an ephemeral port; prints the port, then answers CPU probes on stdin. */
async function serve(framework: Framework, variant: Variant): Promise<void> {
  let server: Server;
  if (framework === 'express') {
    const { default: express } = await import('express');
    const { postback } = await import('@postback/express');
    const app = express();
    app.disable('x-powered-by');
    if (variant === 'ours') app.use(postback({ secrets: [SECRET] }));
    if (variant === 'stub') app.use(postback({ secrets: [SECRET], hmac: STUB_HMAC }));
    if (variant === 'empty') app.use((_req, _res, next) => next());
    app.get('/{*path}', (_req, res) => {
      res.send('ok');
    });
    server = app.listen(0, '127.0.0.1');
  } else {
    const { default: Koa } = await import('koa');
    const { postback } = await import('@postback/koa');
    const app = new Koa();
    if (variant === 'ours') app.use(postback({ secrets: [SECRET] }));
    if (variant === 'stub') app.use(postback({ secrets: [SECRET], hmac: STUB_HMAC }));
    if (variant === 'empty') app.use((_ctx, next) => next());
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
  if (!['express', 'koa'].includes(framework) || !VARIANTS.includes(variant)) {
    console.error('usage: capture-apps.ts --serve express|koa:bare|ours|empty|stub');
    process.exit(2);
  }
  await serve(framework, variant);
}
