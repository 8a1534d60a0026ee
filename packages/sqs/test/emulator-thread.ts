/**
 * The SQS emulator served over HTTP from a worker thread, for the benchmark: SQS runs elsewhere in real
 * life, so its work must not share the event loop of the consumer being measured. The parent talks to it
 * with `{ id, op, name? , url? }` messages: `createQueue` → the queue URL, `count` → messages in a queue, `calls` → requests of one operation,
 * `close` → stops the server.
 */
import { parentPort } from 'node:worker_threads';
import { SqsEmulator } from './sqs-emulator.ts';

const { emulator, close } = await SqsEmulator.serve({ maxLongPollMs: 20 });
const port = parentPort;
if (port === null) throw new Error('emulator-thread.ts runs as a worker thread');

port.on(
  'message',
  (message: { id: number; op: 'createQueue' | 'count' | 'calls' | 'close'; name?: string; url?: string }) => {
    if (message.op === 'calls')
      port.postMessage({ id: message.id, value: emulator.count(message.name ?? '') });
    else if (message.op === 'createQueue')
      port.postMessage({ id: message.id, value: emulator.createQueue(message.name ?? 'q') });
    else if (message.op === 'count')
      port.postMessage({ id: message.id, value: emulator.messages(message.url ?? '').length });
    else void close().then(() => port.postMessage({ id: message.id, value: null }));
  },
);
port.postMessage({ id: 0, value: emulator.endpoint });
