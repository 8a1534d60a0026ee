/**
 * Shared by the runtime suites: where each runtime's binary is (from the `bun`, `deno` and `workerd` npm
 * packages of this workspace), a sandbox world on an ephemeral loopback port in this Node process, and a
 * child-process runner that reads the fixture's `RESULT {json}` line.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(ROOT, 'test', 'runtimes', 'fixtures');
const require = createRequire(join(ROOT, 'test', 'package.json'));

/**
 * The binary an npm package ships (its package.json `bin`), or a reason it cannot be used. A runtime
 * suite skips with that reason only when the binary cannot be installed on this machine.
 */
export function runtimeBinary(pkg: 'bun' | 'deno', bin = pkg): { path: string } | { missing: string } {
  let manifestPath: string;
  try {
    manifestPath = require.resolve(`${pkg}/package.json`);
  } catch {
    return { missing: `the ${pkg} npm package is not installed (npm install -w test)` };
  }
  const manifest = require(manifestPath) as { bin?: string | Record<string, string> };
  const rel = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[bin];
  const path = rel === undefined ? '' : join(dirname(manifestPath), rel);
  if (!existsSync(path)) return { missing: `the ${pkg} package has no ${bin} binary for this platform` };
  return { path };
}

/** Runs `file` with `args`, resolves with the fixture's `RESULT` JSON, or rejects with its output. */
export function runFixture(
  file: string,
  args: string[],
  timeoutMs = 60_000,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { cwd: ROOT, timeout: timeoutMs, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
        if (line !== undefined) return resolve(JSON.parse(line.slice('RESULT '.length)));
        reject(
          new Error(
            `${file} ${args.join(' ')} printed no result (${error?.message ?? 'exit 0'})\n${stdout}\n${stderr}`,
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
