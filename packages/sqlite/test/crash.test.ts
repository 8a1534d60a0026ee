/**
 * A resolved enqueue survives the death of the process: a child enqueues with 64 concurrent callers and
 * is killed with SIGKILL mid-stream (no chance to flush or close); every order it had reported as
 * resolved must be in the file when it is opened again, whether its writes ran on the outbox's writer
 * thread (the default) or on the calling thread. (Power loss cannot be simulated here; that part
 * rests on synchronous=FULL, checked in outbox.test.ts.)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { createSqliteOutbox } from '../src/outbox.ts';
import { type TempDatabase, tempDatabase } from './temp-files.ts';

const ENQUEUER = fileURLToPath(new URL('./fixtures/enqueuer.ts', import.meta.url));
let temp: TempDatabase | undefined;

afterEach(() => temp?.cleanup());

it.each(['thread', 'calling-thread'])(
  'keeps every enqueue that resolved before the process was killed with SIGKILL (writes on the %s)',
  async (mode) => {
    temp = tempDatabase();
    const child = spawn(process.execPath, ['--conditions=@postback/source', ENQUEUER, temp.filename, mode], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    const exited = once(child, 'exit');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no progress from the enqueuer: ${err}`)), 20_000);
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        // Kill mid-stream, once thousands of enqueues resolved and more are in flight.
        if (out.length > 40_000 && child.exitCode === null && !child.killed) {
          clearTimeout(timer);
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    const [, signal] = await exited;
    expect(signal).toBe('SIGKILL');

    const reported = out.split('\n').filter((line) => /^ord_\d+$/.test(line));
    expect(reported.length).toBeGreaterThan(3_000);
    const outbox = createSqliteOutbox({ filename: temp.filename });
    const missing: string[] = [];
    for (const orderId of reported) {
      if ((await outbox.getByOrder(orderId)).length !== 1) missing.push(orderId);
    }
    const stored = (await outbox.stats(Date.now())).counts.pending;
    await outbox.close();
    expect(missing).toEqual([]);
    expect(stored).toBeGreaterThanOrEqual(reported.length);
  },
  60_000,
);
