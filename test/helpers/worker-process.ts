/**
 * Runs `postback worker` as a real child process (the binary entry, from source), so a test can kill it
 * with SIGKILL mid-send, stop it with SIGTERM, and read its log lines.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI's binary entry. */
export const POSTBACK_BIN = fileURLToPath(new URL('../../packages/cli/bin/postback.js', import.meta.url));

/** A running `postback` child process. */
export interface PostbackProcess {
  child: ChildProcess;
  /** Lines printed so far on stdout and stderr. */
  stdout: string[];
  stderr: string[];
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first stdout or stderr line matching `pattern`; rejects after `timeoutMs` or on exit. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
}

/**
 * Spawns `node --conditions=@postback/source packages/cli/bin/postback.js <args>`.
 *
 * @example
 * ```ts
 * const worker = spawnPostback(['worker', '--db', file, '--base-url', url], { POSTBACK_API_KEY: key });
 * worker.child.kill('SIGTERM');
 * expect((await worker.exited).code).toBe(0);
 * ```
 */
export function spawnPostback(args: string[], env: Record<string, string> = {}): PostbackProcess {
  const child = spawn(process.execPath, ['--conditions=@postback/source', POSTBACK_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters = new Set<{ pattern: RegExp; resolve: (line: string) => void }>();
  const collect = (stream: NodeJS.ReadableStream | null, into: string[], match: boolean) => {
    let rest = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        into.push(line);
        if (!match) continue;
        for (const waiter of waiters) {
          if (waiter.pattern.test(line)) {
            waiters.delete(waiter);
            waiter.resolve(line);
          }
        }
      }
    });
  };
  collect(child.stdout, stdout, true);
  // The worker logs on stderr: lines are awaited on both streams.
  collect(child.stderr, stderr, true);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    stdout,
    stderr,
    exited,
    waitForLine(pattern, timeoutMs) {
      const seen = [...stdout, ...stderr].find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = { pattern, resolve };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(
            new Error(`no line matching ${pattern} within ${timeoutMs} ms; stderr: ${stderr.join('\n')}`),
          );
        }, timeoutMs);
        waiter.resolve = (line) => {
          clearTimeout(timer);
          resolve(line);
        };
        waiters.add(waiter);
        void exited.then(() => {
          if (!waiters.has(waiter)) return;
          waiters.delete(waiter);
          clearTimeout(timer);
          reject(new Error(`process exited before a line matching ${pattern}; stderr: ${stderr.join('\n')}`));
        });
      });
    },
  };
}

/** Kills the process with `signal` (if still running) and waits for it to exit. */
export async function stopProcess(proc: PostbackProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal);
  await proc.exited;
}

/** Polls `check` until it returns true, every `intervalMs`, failing after `timeoutMs`. */
export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  intervalMs = 50,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
