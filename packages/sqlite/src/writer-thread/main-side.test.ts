/**
 * The outbox's writer thread: where writes run, errors that cross back with their class, a thread that
 * cannot start or dies, and a process that is free to exit while the thread is idle. Real files, real
 * threads, a real child process.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { JobValidationError } from '@postback/core';
import { resolvePolicy } from '@postback/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempDatabase, tempDatabase } from '../../test/temp-files.ts';
import { openDatabase } from '../database.ts';
import { insertValues } from '../job-rows.ts';
import { createSqliteOutbox } from '../outbox.ts';
import { createOutboxOperations } from '../outbox-operations.ts';
import { createLocalWriter } from '../outbox-writer.ts';
import { createThreadWriter, type ThreadEntry } from './main-side.ts';

const click = { token: 'tok_thread_test', clickedAt: Date.now() };
const sourceArgv = [...process.execArgv, '--conditions=@postback/source'];
const fixture = (name: string) => new URL(`../../test/fixtures/${name}`, import.meta.url);

let temps: TempDatabase[] = [];
afterEach(() => {
  for (const temp of temps) temp.cleanup();
  temps = [];
});
function temp(): TempDatabase {
  const t = tempDatabase();
  temps.push(t);
  return t;
}

/** A thread writer on a fresh file, with its calling-thread fallback and its thread's entry point. */
function threadWriter(entry: ThreadEntry) {
  const t = temp();
  const policy = resolvePolicy({});
  const db = openDatabase(t.filename, { synchronous: 'full', busyTimeoutMs: 5_000 });
  const ops = createOutboxOperations(db, policy);
  let fellBack = false;
  const writer = createThreadWriter(
    { filename: t.filename, synchronous: 'full', busyTimeoutMs: 5_000, maxBatchSize: 1_000, policy },
    () => {
      fellBack = true;
      return createLocalWriter(db, ops, { maxBatchSize: 1_000 });
    },
    entry,
  );
  /** The `confirm` operation's argument for a new confirm job of `orderId`. */
  const job = (orderId: string) =>
    insertValues({
      id: '0',
      kind: 'confirm' as const,
      orderId,
      account: null,
      state: 'pending' as const,
      attempts: 0,
      createdAt: 1,
      updatedAt: 1,
      nextAttemptAt: 1,
      deadline: Date.now() + 86_400_000,
      lastError: null,
      lease: null,
      deliveredAt: null,
      campaignId: null,
      maybeAppliedAt: null,
      heldAt: null,
      heldCampaignId: null,
      clickToken: 'tok_thread_test',
      valueMicros: 1,
      clickedAt: 1,
    });
  return {
    writer,
    ops,
    job,
    fellBack: () => fellBack,
    close: async () => {
      await writer.close();
      db.close();
    },
  };
}

describe('the SQLite outbox writer thread', () => {
  it('writes a file outbox on its own thread by default; :memory: and thread: false write on the calling thread', async () => {
    const t = temp();
    const threaded = createSqliteOutbox({ filename: t.filename });
    const local = createSqliteOutbox({ filename: temp().filename, thread: false });
    const memory = createSqliteOutbox({ filename: ':memory:' });
    expect([threaded.threaded, local.threaded, memory.threaded]).toEqual([true, false, false]);
    // A write resolved by the thread is visible at once to the reads of the calling thread's connection.
    const { job } = await threaded.confirm({ orderId: 'ord_1', valueMicros: 5, click });
    expect(await threaded.get(job.id)).toMatchObject({ orderId: 'ord_1', state: 'pending' });
    expect(threaded.commits).toBe(1);
    await Promise.all([threaded.close(), local.close(), memory.close()]);
    // What the thread committed is in the file.
    const reopened = createSqliteOutbox({ filename: t.filename, thread: false });
    expect(await reopened.getByOrder('ord_1')).toHaveLength(1);
    await reopened.close();
  });

  it('shares one transaction among the writes of one turn, each with its own answer', async () => {
    const outbox = createSqliteOutbox({ filename: temp().filename });
    const answers = await Promise.all([
      outbox.confirm({ orderId: 'ord_a', valueMicros: 1, click }),
      outbox.confirm({ orderId: 'ord_a', valueMicros: 1, click }),
      outbox.confirm({ orderId: 'ord_b', valueMicros: 1, click }),
    ]);
    expect(answers.map((a) => a.created)).toEqual([true, false, true]);
    expect(outbox.commits).toBe(1);
    await outbox.close();
  });

  it('rejects a call with the error class and field it had on the thread, and the rest of its batch commits', async () => {
    const outbox = createSqliteOutbox({ filename: temp().filename });
    // No confirmation and no campaign_id: nothing can say which campaign to reverse.
    const [refund, confirm] = await Promise.allSettled([
      outbox.refund({ orderId: 'ord_unknown' }),
      outbox.confirm({ orderId: 'ord_ok', valueMicros: 1, click }),
    ]);
    expect(refund.status).toBe('rejected');
    const error = (refund as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(JobValidationError);
    expect(error).toMatchObject({ name: 'JobValidationError', code: 'job_validation', field: 'campaignId' });
    expect(confirm).toMatchObject({ status: 'fulfilled', value: { created: true } });
    await outbox.close();
  });

  it('runs the writes on the calling thread, with a warning, when the thread cannot start', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const w = threadWriter({ url: fixture('no-such-thread.ts'), execArgv: sourceArgv });
      const result = await w.writer.write('confirm', [w.job('ord_fallback')]);
      expect(result.created).toBe(true);
      expect(w.fellBack()).toBe(true);
      expect(w.ops.getByOrder('ord_fallback')).toHaveLength(1);
      expect(warnings.map((warning) => (warning as { code?: string }).code)).toContain(
        'POSTBACK_SQLITE_THREAD',
      );
      await w.close();
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('rejects the writes a dying thread held, and the next write starts a new thread', async () => {
    const w = threadWriter({ url: fixture('crashing-writer-thread.ts'), execArgv: sourceArgv });
    await expect(w.writer.write('confirm', [w.job('ord_before')])).resolves.toMatchObject({ created: true });
    await expect(w.writer.write('confirm', [w.job('crash-the-thread')])).rejects.toThrow(
      /outbox thread on .* stopped/,
    );
    expect(w.ops.getByOrder('crash-the-thread')).toHaveLength(0);
    // A new thread takes the next write; the first thread's commit is still there.
    await expect(w.writer.write('confirm', [w.job('ord_after')])).resolves.toMatchObject({ created: true });
    expect(w.ops.getByOrder('ord_before')).toHaveLength(1);
    expect(w.fellBack()).toBe(false);
    await w.close();
  });

  it('does not keep the process alive once its writes are done', () => {
    const t = temp();
    const script = fileURLToPath(fixture('idle-writer.ts'));
    const child = spawnSync(process.execPath, ['--conditions=@postback/source', script, t.filename], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(child.error).toBeUndefined(); // not killed by the timeout
    expect(child.stdout).toContain('enqueued (threaded: true)');
    expect(child.status).toBe(0);
  });
});
