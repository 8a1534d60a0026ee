/**
 * The root README's example ("How it fits together") is a whole server that runs as written: this test
 * takes the block out of the README, runs it as `server.ts` in a child Node process (from the packages'
 * sources), lands on it with a sandbox click, places an order, lets its Dispatcher deliver, refunds, and
 * checks the sandbox applied the conversion and its reversal. Also: the install line above the block
 * names every package the block imports (and the CLI that runs the sandbox), every README runs the CLI by
 * its scoped name (`npx @postback/cli`), and a missing variable exits 2 naming it.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencedBlocks, readmeFiles } from './helpers/readme-blocks.ts';

const ROOT = join(import.meta.dirname, '..');
const SECRET = 'quick-start-cookie-secret-0123456789abcdef';

/** The `sh` install line and the `ts` block of the README section "How it fits together". */
function quickStart(): { install: string; code: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('How it fits together'));
  if (!section) throw new Error('README.md has no section "How it fits together"');
  const [install] = fencedBlocks(section, ['sh']);
  const [code] = fencedBlocks(section, ['ts']);
  if (!install || !code)
    throw new Error('"How it fits together" needs a ```sh install line and a ```ts block');
  return { install: install.code.trim(), code: code.code };
}

/** Runs the block as `<dir>/server.ts` (inside the repository, so the workspace packages resolve). */
function runServer(file: string, cwd: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--conditions=@postback/source', file], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const output = () => ({ stdout, stderr });
  return { child, exited, output };
}

/** Polls `probe` until it returns a value other than undefined (`timeoutMs` at most). */
async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  for (const started = Date.now(); Date.now() - started < timeoutMs; ) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const codeDir = join(ROOT, 'test', `.quick-start-${process.pid}`);
const serverFile = join(codeDir, 'server.ts');
let runDir: string;

beforeAll(() => {
  mkdirSync(codeDir, { recursive: true });
  writeFileSync(serverFile, quickStart().code);
  runDir = mkdtempSync(join(tmpdir(), 'postback-quick-start-')); // where postback.db goes
});
afterAll(() => {
  rmSync(codeDir, { recursive: true, force: true });
  rmSync(runDir, { recursive: true, force: true });
});

describe('the README quick start', () => {
  it('installs every package it imports', () => {
    const { install, code } = quickStart();
    const imported = [...code.matchAll(/from '([^'.][^']*)'/g)]
      .map((m) => m[1] ?? '')
      .filter((name) => !name.startsWith('node:'))
      .map((name) =>
        name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : (name.split('/')[0] ?? ''),
      );
    const installed = install.replace(/^npm install\s+/, '').split(/\s+/);
    // Plus the CLI, which the paragraph above runs (`npx @postback/cli sandbox`) and the block does not import.
    expect(new Set(installed)).toEqual(new Set([...imported, '@postback/cli']));
  });

  it('runs the CLI by its scoped name wherever a README uses npx (the unscoped `postback` is not ours)', () => {
    for (const file of readmeFiles(ROOT)) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const [use] of text.matchAll(/\bnpx\s+(?:--?\S+\s+)*postback\b/g)) expect.fail(`${file}: ${use}`);
    }
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('npx @postback/cli sandbox');
  });

  it('exits 2 naming a missing variable', async () => {
    const server = runServer(serverFile, runDir, {
      POSTBACK_API_URL: 'http://127.0.0.1:1',
      POSTBACK_API_KEY: 'k',
    });
    expect(await server.exited, JSON.stringify(server.output())).toBe(2);
    expect(server.output().stderr).toContain('set POSTBACK_SECRET');
  });

  describe('against the sandbox', () => {
    let world: SandboxWorld;
    let server: ReturnType<typeof runServer> | undefined;
    let url: string;

    beforeAll(async () => {
      world = await startSandboxWorld();
      server = runServer(serverFile, runDir, {
        PORT: '0',
        POSTBACK_SECRET: SECRET,
        POSTBACK_API_URL: world.url,
        POSTBACK_API_KEY: world.conversionsKey,
      });
      const listening = await eventually(
        'the server to listen',
        async () => {
          const out = server?.output();
          if (server?.child.exitCode !== null) throw new Error(`server.ts exited: ${JSON.stringify(out)}`);
          return /listening on (http:\/\/\S+)/.exec(out?.stdout ?? '')?.[1];
        },
        45_000,
      ); // a cold start from TypeScript sources is slow on a loaded machine
      url = listening;
    });
    afterAll(async () => {
      if (server && server.child.exitCode === null) {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      await world?.close();
    });

    it('confirms an order placed after an ad click, then reverses it on refund', async () => {
      const campaignId = await world.createCampaign(`${url}/`);
      const click = await world.click(campaignId);
      const landing = await fetch(click.landingUrl);
      expect(await landing.text()).toBe('Welcome, ad visitor');
      const cookie = landing.headers.getSetCookie()[0]?.split(';')[0];
      expect(cookie).toMatch(/^postback_click=/);

      const placed = await fetch(`${url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: cookie ?? '' },
        body: JSON.stringify({ total_micros: 12_340_000 }),
      });
      expect(placed.status).toBe(201);
      const order = (await placed.json()) as { order_id: string; attributed: boolean };
      expect(order.attributed).toBe(true);

      const confirmed = await eventually('the confirmation', async () => {
        const { conversions } = await world.conversions();
        return conversions.find((c) => c.order_id === order.order_id);
      });
      expect(confirmed).toMatchObject({
        campaign_id: campaignId,
        value_micros: 12_340_000,
        state: 'confirmed',
      });

      const refunded = await fetch(`${url}/orders/${order.order_id}/refund`, { method: 'POST' });
      expect(refunded.status).toBe(202);
      expect(await refunded.json()).toEqual({ order_id: order.order_id, outcome: 'enqueued' });
      await eventually('the reversal', async () => {
        const { conversions } = await world.conversions();
        return conversions.find((c) => c.order_id === order.order_id && c.state === 'reversed');
      });

      const organic = await fetch(`${url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ total_micros: 5 }),
      });
      expect(await organic.json()).toMatchObject({ attributed: false });
    });

    it('stops on SIGTERM with exit code 0', async () => {
      server?.child.kill('SIGTERM');
      expect(await server?.exited).toBe(0);
    });
  });
});
