/**
 * The outbox's writer thread (a `node:worker_threads` entry point, started by `createThreadWriter`). It
 * opens its own connection to the file and runs the writes it receives in its own group commit, so SQL and
 * the fsync of each commit happen off the caller's event loop. Calls that arrive in the same turn of this
 * thread's loop share one transaction, exactly as on the calling thread.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../database.ts';
import { createOutboxOperations } from '../outbox-operations.ts';
import { createLocalWriter } from '../outbox-writer.ts';
import {
  type CallsMessage,
  type CloseMessage,
  errorToData,
  type OutcomesMessage,
  type WriterThreadData,
} from './messages.ts';

const port = parentPort;
if (port === null) throw new Error('thread-side.ts runs as a worker thread of the SQLite outbox');
const data = workerData as WriterThreadData;
const db = openDatabase(data.filename, data);
const writer = createLocalWriter(db, createOutboxOperations(db, data.policy), {
  maxBatchSize: data.maxBatchSize,
});

/** Replies not yet posted: `close` waits for them, so every call sent before it gets its answer. */
const replies = new Set<Promise<void>>();

port.postMessage({ type: 'ready' });
port.on('message', (message: CallsMessage | CloseMessage) => {
  if (message.type === 'close') {
    void writer
      .close()
      .then(() => Promise.all(replies))
      .finally(() => {
        db.close();
        port.close();
      });
    return;
  }
  const settled = message.calls.map(([op, args]) =>
    writer.write(op, args as never).then(
      (value): OutcomesMessage['outcomes'][number] => [true, value],
      (error: unknown): OutcomesMessage['outcomes'][number] => [false, errorToData(error)],
    ),
  );
  const replied = Promise.all(settled).then((outcomes) => {
    const reply: OutcomesMessage = { type: 'outcomes', id: message.id, commits: writer.commits, outcomes };
    port.postMessage(reply);
    replies.delete(replied);
  });
  replies.add(replied);
});
