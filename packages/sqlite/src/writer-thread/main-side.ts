/**
 * `createThreadWriter`: the outbox's writes on a worker thread of their own (see `thread-side.ts`), so
 * the caller's event loop never runs SQL for a write or waits for an fsync. The calls of one turn of the
 * caller's loop travel as one message and come back as one; the thread group-commits them as the calling
 * thread would. The thread starts at the first write (an outbox only read from, as by `postback status`,
 * never starts one) and keeps the process alive only while a write is under way.
 *
 * If the thread cannot start (its file is missing, as when a bundler copied this module alone), the writes
 * run on the calling thread instead, with a process warning: none of them had reached the file. If it dies
 * after starting, the writes it held are rejected (they may or may not have committed; every write of the
 * outbox is safe to retry) and the next write starts a new thread.
 */

import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { OutboxOperations, WriteOperation } from '../outbox-operations.ts';
import type { OutboxWriter } from '../outbox-writer.ts';
import {
  type CallsMessage,
  type CloseMessage,
  errorFromData,
  type OutcomesMessage,
  type WriterThreadData,
} from './messages.ts';

interface Callback {
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

interface Sent {
  calls: CallsMessage['calls'];
  callbacks: Callback[];
}

/** Where a writer thread starts: its module, and the Node options it runs with. */
export interface ThreadEntry {
  url: URL;
  execArgv: string[] | undefined;
}

/** The writer thread's entry point next to this module: TypeScript source in development, built JS in `dist`. */
function defaultEntry(): ThreadEntry {
  const fromSource = import.meta.url.endsWith('.ts');
  return {
    url: new URL(fromSource ? './thread-side.ts' : './thread-side.js', import.meta.url),
    // From source, the thread must resolve the workspace packages to their sources too.
    execArgv: fromSource ? [...process.execArgv, '--conditions=@postback/source'] : undefined,
  };
}

/**
 * Development only (a thread started from TypeScript source): Node strips the types of every module the
 * thread loads with a WebAssembly build of SWC, and V8 13.6 (Node 24) now and then crashes the process with
 * SIGSEGV when it frees a tiered-up WebAssembly-to-JavaScript wrapper of one isolate while another runs
 * (seen here in about a third of the test runs that start a hundred threads; none in 10 runs without
 * wrapper tier-up). Wrappers that never tier up cost nothing measurable here. Built code (`dist`) loads no
 * WebAssembly in the thread and changes no flag.
 */
function avoidWasmWrapperTierUp(entry: ThreadEntry): void {
  if (entry.url.pathname.endsWith('.ts')) setFlagsFromString('--wasm-wrapper-tiering-budget=2147483647');
}

/**
 * A writer whose transactions run on a thread of their own; see the module comment. `fallback` builds the
 * calling-thread writer used if the thread cannot start; `entry` is for tests (a thread that misbehaves).
 *
 * @example
 * ```ts
 * const writer = createThreadWriter(data, () => createLocalWriter(db, ops, { maxBatchSize }));
 * ```
 */
export function createThreadWriter(
  data: WriterThreadData,
  fallback: () => OutboxWriter,
  entry: ThreadEntry = defaultEntry(),
): OutboxWriter {
  let worker: Worker | null = null;
  /** Whether the current thread has opened the file (before that, a failure means nothing was written). */
  let ready = false;
  let local: OutboxWriter | null = null;
  let commits = 0;
  let nextId = 1;
  const sent = new Map<number, Sent>();
  let queued: Sent = { calls: [], callbacks: [] };
  let scheduled: ReturnType<typeof setImmediate> | null = null;

  const busy = () => sent.size > 0 || queued.calls.length > 0;

  function start(): Worker {
    avoidWasmWrapperTierUp(entry);
    const thread = new Worker(entry.url, { workerData: data, execArgv: entry.execArgv });
    ready = false;
    thread.on('message', (message: OutcomesMessage | { type: 'ready' }) => {
      if (message.type === 'ready') {
        ready = true;
        return;
      }
      const batch = sent.get(message.id);
      if (batch === undefined) return;
      sent.delete(message.id);
      commits = message.commits;
      for (let i = 0; i < batch.callbacks.length; i++) {
        const callback = batch.callbacks[i] as Callback;
        const outcome = message.outcomes[i];
        if (outcome === undefined) callback.reject(new Error('the SQLite outbox thread gave no outcome'));
        else if (outcome[0]) callback.resolve(outcome[1]);
        else callback.reject(errorFromData(outcome[1]));
      }
      if (!busy()) thread.unref();
    });
    thread.on('error', (error) => lost(thread, error));
    thread.on('exit', (code) => lost(thread, new Error(`exited with code ${code}`)));
    return thread;
  }

  /** The thread stopped outside `close`: see the module comment. */
  function lost(thread: Worker, cause: unknown): void {
    if (worker !== thread) return;
    worker = null;
    const pending = [...sent.values()];
    sent.clear();
    if (!ready) {
      process.emitWarning(
        `the SQLite outbox on ${data.filename} could not start its writer thread (${String(cause)}); its writes run on the calling thread`,
        { code: 'POSTBACK_SQLITE_THREAD' },
      );
      local = fallback();
      for (const batch of pending) runLocally(local, batch);
      return;
    }
    const error = new Error(`the SQLite outbox thread on ${data.filename} stopped: ${String(cause)}`, {
      cause,
    });
    for (const batch of pending) for (const callback of batch.callbacks) callback.reject(error);
  }

  function runLocally(writer: OutboxWriter, batch: Sent): void {
    for (let i = 0; i < batch.calls.length; i++) {
      const [op, args] = batch.calls[i] as CallsMessage['calls'][number];
      const callback = batch.callbacks[i] as Callback;
      writer.write(op, args as never).then(callback.resolve, callback.reject);
    }
  }

  function flush(): void {
    scheduled = null;
    const batch = queued;
    queued = { calls: [], callbacks: [] };
    if (batch.calls.length === 0) return;
    if (local !== null) {
      runLocally(local, batch);
      return;
    }
    if (worker === null) worker = start();
    worker.ref();
    const id = nextId++;
    sent.set(id, batch);
    const message: CallsMessage = { type: 'calls', id, calls: batch.calls };
    worker.postMessage(message);
  }

  return {
    write<K extends WriteOperation>(
      op: K,
      args: Parameters<OutboxOperations[K]>,
    ): Promise<ReturnType<OutboxOperations[K]>> {
      return new Promise((resolve, reject) => {
        queued.calls.push([op, args]);
        queued.callbacks.push({ resolve: resolve as (value: unknown) => void, reject });
        // One message per turn, sent after every call of the turn (see the group commit's setImmediate).
        scheduled ??= setImmediate(flush);
      });
    },
    get commits() {
      return local === null ? commits : commits + local.commits;
    },
    async close() {
      if (scheduled !== null) {
        clearImmediate(scheduled);
        flush();
      }
      const thread = worker;
      if (thread !== null) {
        worker = null; // its exit is expected from here on
        const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
        // The thread commits what it was sent before it reads `close` (messages arrive in order).
        const close: CloseMessage = { type: 'close' };
        thread.ref();
        thread.postMessage(close);
        await exited;
        const error = new Error(`the SQLite outbox thread on ${data.filename} stopped before answering`);
        for (const batch of sent.values()) for (const callback of batch.callbacks) callback.reject(error);
        sent.clear();
      }
      await local?.close();
    },
  };
}
