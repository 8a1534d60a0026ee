/**
 * A sandbox of the ad service in a child process, for benchmarks that must not share their event loop with
 * the service they post to (in production the ad service is on another machine). The child runs this file
 * as its entry point: it starts a sandbox on an ephemeral loopback port, prints its URL on one line, and
 * stops when its standard input closes (so it never outlives the benchmark, even one that crashed).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '@postback/sandbox';
import { prepareSandboxWorld, type SandboxWorld } from '@postback/sandbox/testing';

/** Longest the child may take to print its URL. */
const START_LIMIT_MS = 20_000;

/**
 * Starts a sandbox in a child process and prepares an account and an s2s campaign on it, as
 * `startSandboxWorld` does in-process. `world.close()` stops the child.
 *
 * @example
 * ```ts
 * const world = await startChildSandboxWorld();
 * const [click] = await world.clicks(1);
 * await world.close();
 * ```
 */
export async function startChildSandboxWorld(): Promise<SandboxWorld> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--serve'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.stdin?.end();
    await exited;
  };
  try {
    const url = await firstLine(child);
    return await prepareSandboxWorld(url, stop);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the sandbox child did not start in time')),
      START_LIMIT_MS,
    );
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(line.trim());
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the sandbox child exited with code ${code} before it started`));
    });
  });
}

if (process.argv.includes('--serve')) {
  const sandbox = await startSandbox({ port: 0 });
  process.stdout.write(`${sandbox.url}\n`);
  process.stdin.resume();
  process.stdin.once('end', () => void sandbox.close().then(() => process.exit(0)));
}
