/**
 * The Next.js shop's end-to-end checks, shared by the Next 16 build (this workspace) and the Next 15
 * build (examples/next15-shop): `next build` once, then `next start` on a free port with a real SQLite
 * outbox, the in-process Dispatcher (instrumentation.ts) and a real sandbox of the ad service; every
 * check goes over real HTTP, and one through a real browser.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, launchBrowser } from '../../../test/e2e/helpers/browser.ts';

const SECRET = 'next-shop-test-secret-0123456789-abcdef';

/** Which Next app to build and run. */
export interface NextShopUnderTest {
  /** The Next major, for the test names. */
  label: string;
  /** The app's directory, where `next build` and `next start` run. */
  root: string;
  /** Longest `next build` allowed, in milliseconds. */
  buildLimitMs: number;
  /** Runs before the build (the Next 15 shop copies the shared app sources in). */
  prepare?: () => void;
}

function run(
  root: string,
  nextBin: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [nextBin, ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`next ${args[0]} took over ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });

async function waitUntilUp(url: string, server: ChildProcess, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`next start exited with ${server.exitCode}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(2_000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  throw new Error('next start did not answer in time');
}

const cookieOf = (response: Response): string | null =>
  /^(postback_click=[A-Za-z0-9_-]{52}\.[A-Za-z0-9._~-]+);/.exec(
    response.headers.get('set-cookie') ?? '',
  )?.[1] ?? null;

const order = (base: string, orderId: string, headers: Record<string, string> = {}, path = '/orders') =>
  fetch(new URL(path, base), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ order_id: orderId, total_micros: 49_990_000 }),
  });

/**
 * Defines the suite: builds `shop.root` with its own `next` (without any `POSTBACK_*` variable: the
 * adapter and the backend are created on first use), starts it, and runs every check.
 *
 * @example
 * ```ts
 * describeNextShop({ label: 'Next 16', root: fileURLToPath(new URL('..', import.meta.url)), buildLimitMs: 170_000 });
 * ```
 */
export function describeNextShop(shop: NextShopUnderTest): void {
  const { root, buildLimitMs } = shop;
  const nextBin = createRequire(join(root, 'package.json')).resolve('next/dist/bin/next');

  describe(`the Next.js shop on ${shop.label} (next build + next start)`, () => {
    let dir: string;
    let world: SandboxWorld;
    let server: ChildProcess | undefined;
    let base: string;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'next-shop-'));
      world = await startSandboxWorld();
      shop.prepare?.();
      const env = { ...process.env, NODE_ENV: 'production' as const };
      for (const name of Object.keys(env)) if (name.startsWith('POSTBACK_')) delete env[name];
      const started = Date.now();
      const build = await run(root, nextBin, ['build'], env, buildLimitMs);
      const buildMs = Date.now() - started;
      console.info(`${shop.label}: next build took ${(buildMs / 1000).toFixed(1)} s`);
      expect(build.code, build.output).toBe(0);

      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      server = spawn(process.execPath, [nextBin, 'start', '-p', String(port), '-H', '127.0.0.1'], {
        cwd: root,
        stdio: 'ignore',
        env: {
          ...process.env,
          NODE_ENV: 'production',
          POSTBACK_DB: join(dir, 'postback.db'),
          POSTBACK_API_URL: world.url,
          POSTBACK_API_KEY: world.conversionsKey,
          POSTBACK_SECRET: SECRET,
        },
      });
      await waitUntilUp(base, server, Date.now() + 30_000);
    }, buildLimitMs + 60_000);

    afterAll(async () => {
      if (server !== undefined && server.exitCode === null) {
        const exited = new Promise((resolve) => server?.once('exit', resolve));
        server.kill('SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
        if (server.exitCode === null) server.kill('SIGKILL');
      }
      await world?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('sets the signed click cookie on a landing with a token and greets the ad visitor on that same page', async () => {
      const [click] = await world.clicks(1);
      const response = await fetch(`${base}/?click_token=${click?.token}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('set-cookie')).toMatch(
        /^postback_click=[A-Za-z0-9_-]{52}\.[A-Za-z0-9._~-]+; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax$/,
      );
      expect(await response.text()).toContain('Welcome, ad visitor');
    });

    it('answers a landing without a token with no cookie and a plain welcome', async () => {
      const response = await fetch(`${base}/`);
      expect(response.headers.get('set-cookie')).toBeNull();
      const html = await response.text();
      expect(html).toContain('Welcome');
      expect(html).not.toContain('ad visitor');
    });

    it('attributes an order placed with the cookie, and the Dispatcher delivers it to the ad service', async () => {
      const [click] = await world.clicks(1);
      const cookie = cookieOf(await fetch(`${base}/?click_token=${click?.token}`));
      expect(cookie).not.toBeNull();
      const response = await order(base, 'ord_next_attributed', { cookie: cookie ?? '' });
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ order_id: 'ord_next_attributed', attributed: true });

      const deadline = Date.now() + 15_000;
      let delivered = false;
      while (!delivered && Date.now() < deadline) {
        const { conversions } = await world.conversions();
        delivered = conversions.some((c) => c.order_id === 'ord_next_attributed' && c.state === 'confirmed');
        if (!delivered) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(delivered).toBe(true);
    });

    it('does not attribute an order placed without the cookie', async () => {
      const response = await order(base, 'ord_next_organic');
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ order_id: 'ord_next_organic', attributed: false });
    });

    it('attributes an order on the very request that carries the token, before any cookie exists', async () => {
      const [click] = await world.clicks(1);
      const response = await order(base, 'ord_next_same_request', {}, `/orders?click_token=${click?.token}`);
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ order_id: 'ord_next_same_request', attributed: true });
    });

    it('ignores a forged click header and a tampered cookie', async () => {
      const [click] = await world.clicks(1);
      const cookie = cookieOf(await fetch(`${base}/?click_token=${click?.token}`)) ?? '';
      const tampered = `${cookie.slice(0, -3)}${cookie.endsWith('AAA') ? 'BBB' : 'AAA'}`;
      const forged = await order(base, 'ord_next_forged', { 'x-postback-click': cookie.split('=')[1] ?? '' });
      // The proxy drops a client's header; the cookie value in it would verify, so only the proxy counts.
      expect(await forged.json()).toMatchObject({ attributed: false });
      const withTampered = await order(base, 'ord_next_tampered', { cookie: tampered });
      expect(await withTampered.json()).toMatchObject({ attributed: false });
    });

    it('in a real browser, confirms an order placed after an ad click exactly once and reverses it on return', async () => {
      const [click] = await world.clicks(1);
      const browser = await launchBrowser();
      try {
        const context = await browser.newContext();
        const page = await context.newPage();
        page.setDefaultTimeout(15_000);
        await page.goto(`${base}/?click_token=${click?.token}`);
        expect(await page.textContent('#visitor')).toBe('Welcome, ad visitor');
        expect((await context.cookies()).map((c) => c.name)).toContain('postback_click');

        await page.click('#order');
        await page.waitForFunction(() => document.getElementById('answer')?.textContent !== '');
        const ordered = JSON.parse((await page.textContent('#answer')) ?? '') as { order_id: string };
        expect(ordered).toMatchObject({ status: 201, attributed: true });
        const confirmed = await eventually('the confirmation in the sandbox', async () => {
          const { conversions } = await world.conversions();
          return conversions.find((c) => c.order_id === ordered.order_id);
        });
        expect(confirmed).toMatchObject({ value_micros: 49_990_000, state: 'confirmed' });

        await page.click('#return');
        await page.waitForFunction(() =>
          document.getElementById('answer')?.textContent?.includes('"status":202'),
        );
        await eventually('the reversal in the sandbox', async () => {
          const { conversions } = await world.conversions();
          return conversions.find((c) => c.order_id === ordered.order_id && c.state === 'reversed');
        });
        const report = await world.conversions();
        expect(report.conversions.filter((c) => c.order_id === ordered.order_id)).toHaveLength(1);
        expect(report.counts.late).toBe(0);
      } finally {
        await browser.close();
      }
    });

    it('refunds an attributed order with 202', async () => {
      const [click] = await world.clicks(1);
      const cookie = cookieOf(await fetch(`${base}/?click_token=${click?.token}`)) ?? '';
      expect((await order(base, 'ord_next_refund', { cookie })).status).toBe(201);
      const response = await fetch(`${base}/orders/ord_next_refund/refund`, { method: 'POST' });
      expect(response.status).toBe(202);
      expect(await response.json()).toMatchObject({ order_id: 'ord_next_refund' });
      expect((await fetch(`${base}/orders/ord_never/refund`, { method: 'POST' })).status).toBe(404);
    });
  });
}
