/**
 * Shared by the runtime suites: where each runtime's binary is (from the `bun`, `deno` and `workerd` npm
 * packages of this workspace), a sandbox world on an ephemeral loopback port in this Node process, and a
 * child-process runner that reads the fixture's `RESULT {json}` line.
 */
import { execFile } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SandboxWorld } from '@postback/sandbox/testing';
import { expect } from 'vitest';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(ROOT, 'test', 'runtimes', 'fixtures');
const require = createRequire(join(ROOT, 'test', 'package.json'));

/** A runtime to spawn: `command` with `prefix` before the script's arguments. */
export interface RuntimeBinary {
  command: string;
  prefix: string[];
}

function isNative(path: string): boolean {
  const head = Buffer.alloc(4);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  return head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46])) || head.subarray(0, 2).equals(Buffer.from('MZ'));
}

/**
 * The binary an npm package ships, or a reason it cannot be used. The native binary its install script
 * put in place is preferred (`deno/deno`, `bun/bin/bun.exe`); else the package's `bin` entry, run with
 * this process's Node when it is a JavaScript shim (never the machine's own `node`). A runtime suite
 * skips with that reason only when the binary cannot be installed on this machine.
 */
export function runtimeBinary(pkg: 'bun' | 'deno'): RuntimeBinary | { missing: string } {
  let manifestPath: string;
  try {
    manifestPath = require.resolve(`${pkg}/package.json`);
  } catch {
    return { missing: `the ${pkg} npm package is not installed (npm install -w test)` };
  }
  const dir = dirname(manifestPath);
  const manifest = require(manifestPath) as { bin?: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[pkg];
  const candidates = [join(dir, pkg), ...(bin === undefined ? [] : [join(dir, bin)])];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    if (isNative(path)) return { command: path, prefix: [] };
    if (/\.[cm]?js$/.test(path)) return { command: process.execPath, prefix: [path] };
  }
  return {
    missing: `the ${pkg} package has no ${pkg} binary for this platform (its install script did not run?)`,
  };
}

/** Runs `runtime` with `args`, resolves with the fixture's `RESULT` JSON, or rejects with its output. */
export function runFixture(
  runtime: RuntimeBinary,
  args: string[],
  timeoutMs = 60_000,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(
      runtime.command,
      [...runtime.prefix, ...args],
      { cwd: ROOT, timeout: timeoutMs, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
        if (line !== undefined) return resolve(JSON.parse(line.slice('RESULT '.length)));
        reject(
          new Error(
            `${runtime.command} ${args.join(' ')} printed no result (${error?.message ?? 'exit 0'})\n${stdout}\n${stderr}`,
          ),
        );
      },
    );
  });
}

/** The workerd binary Miniflare runs (npm `workerd`, a dependency of `miniflare`), or why it is missing. */
export function workerdBinary(): { path: string } | { missing: string } {
  let miniflare: string;
  try {
    miniflare = require.resolve('miniflare');
  } catch {
    return { missing: 'the miniflare npm package is not installed (npm install -w test)' };
  }
  try {
    const path = createRequire(miniflare)('workerd').default as string;
    return existsSync(path) ? { path } : { missing: `workerd binary not found at ${path}` };
  } catch (error) {
    return { missing: `workerd has no binary for this platform (${(error as Error).message})` };
  }
}

/**
 * What a runtime's shop run must have done: landed the click, read it back from the cookie, enqueued the
 * order and delivered it through the fetch transport; and the sandbox saw the conversion confirmed.
 */
export async function expectShopDelivered(
  world: SandboxWorld,
  run: { token: string | undefined; result: unknown },
  orderId: string,
): Promise<void> {
  expect(run.result).toMatchObject({
    transport: 'fetch',
    landedToken: run.token,
    cookieSet: true,
    orderedToken: run.token,
    enqueued: true,
    summary: { claimed: 1, delivered: 1 },
    state: 'delivered',
    campaignId: world.campaignId,
  });
  const report = await world.conversions();
  expect(report.conversions).toContainEqual(
    expect.objectContaining({ order_id: orderId, state: 'confirmed', value_micros: 7_000 }),
  );
}
