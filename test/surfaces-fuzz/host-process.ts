/**
 * Runs `host.ts` (one surface in one mount style) as a child process, so a request that ends the process
 * is seen as such and cannot take the test runner with it. A `describe` gets one host through
 * {@link useHost}: started before its tests, restarted by {@link SurfaceHost.ensure} if a test ended it,
 * stopped after them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

const HOST = fileURLToPath(new URL('./host.ts', import.meta.url));
/** Starting a host loads a framework and our packages from source: generous on a loaded machine. */
const START_LIMIT_MS = 30_000;

/** What a host reported on stdout (one JSON object a line): `invalid`, `error`, `client-error`. */
export interface HostEvent {
  kind: string;
  reason?: string;
  source?: string;
  wellFormed?: boolean;
  [key: string]: unknown;
}

/** One running host process. */
export interface RunningHost {
  port: number;
  child: ChildProcess;
  /** Everything it reported so far. */
  events: HostEvent[];
  /** Its stderr so far (an uncaught error's stack lands there). */
  stderr: string[];
  /** Whether it is still running. */
  alive(): boolean;
}

function startHost(mount: string): Promise<RunningHost> {
  const child = spawn(process.execPath, ['--conditions=@postback/source', HOST, mount], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: HostEvent[] = [];
  const stderr: string[] = [];
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => stderr.push(chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${mount}: not listening within ${START_LIMIT_MS} ms; stderr: ${stderr.join('')}`));
    }, START_LIMIT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${mount}: exited with ${code} before listening; stderr: ${stderr.join('')}`));
    });
    let rest = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const event = JSON.parse(line) as HostEvent & { ready?: number };
        if (event.ready === undefined) {
          events.push(event);
          continue;
        }
        clearTimeout(timer);
        resolve({
          port: event.ready,
          child,
          events,
          stderr,
          alive: () => child.exitCode === null && child.signalCode === null,
        });
      }
    });
  });
}

/** The host of one `describe`. */
export interface SurfaceHost {
  /** The running host; a new one if the last test ended it (the death is kept in {@link deaths}). */
  ensure(): Promise<RunningHost>;
  /** How each ended host ended: `exit code N` / `signal S`, with the end of its stderr. */
  readonly deaths: string[];
}

/**
 * Starts the host of `mount` before the tests of the current `describe` and stops it after them.
 *
 * @example
 * ```ts
 * describe('capture/express5', () => {
 *   const host = useHost('capture/express5');
 *   it('answers', async () => {
 *     const { port } = await host.ensure();
 *   });
 * });
 * ```
 */
export function useHost(mount: string): SurfaceHost {
  let current: RunningHost | undefined;
  const deaths: string[] = [];
  beforeAll(async () => {
    current = await startHost(mount);
  });
  afterAll(async () => {
    if (current?.alive()) {
      const exited = new Promise((resolve) => current?.child.once('exit', resolve));
      current.child.kill('SIGKILL');
      await exited;
    }
  });
  return {
    deaths,
    async ensure() {
      if (current?.alive()) return current;
      if (current !== undefined) {
        const { exitCode, signalCode } = current.child;
        deaths.push(
          `${exitCode !== null ? `exit code ${exitCode}` : `signal ${signalCode}`}: ${current.stderr.join('').slice(-600)}`,
        );
      }
      current = await startHost(mount);
      return current;
    },
  };
}

/**
 * Waits until `host` has reported at least `count` events in all (its stdout and the answer arrive on
 * different pipes), or `timeoutMs` passed; returns whether it did.
 */
export async function eventsArrived(host: RunningHost, count: number, timeoutMs = 2_000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (host.events.length < count) {
    if (Date.now() > end || !host.alive()) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}
