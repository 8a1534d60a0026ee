/**
 * fauxqs served on 127.0.0.1 from a worker thread, for the benchmark (SQS runs elsewhere in real life, so
 * its work must not share the event loop of the consumer being measured). The same protocol as
 * `emulator-thread.ts`: `{ id, op, name?, url? }` messages; `createQueue` → the queue URL, `count` →
 * messages in a queue (visible or not), `calls` → null (fauxqs keeps no request log), `close` → stops it.
 * The first message (id 0) is the endpoint to give the SDK.
 */

import { parentPort } from 'node:worker_threads';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { startFauxqs } from './fauxqs.ts';

const sqs = await startFauxqs();
const port = parentPort;
if (port === null) throw new Error('fauxqs-thread.ts runs as a worker thread');

async function count(url: string): Promise<number> {
  const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] as const;
  const { Attributes } = await sqs.client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [...names] }),
  );
  return names.reduce((sum, name) => sum + Number(Attributes?.[name] ?? 0), 0);
}

port.on(
  'message',
  (message: { id: number; op: 'createQueue' | 'count' | 'calls' | 'close'; name?: string; url?: string }) => {
    const answer = (value: unknown) => port.postMessage({ id: message.id, value });
    if (message.op === 'calls') answer(null);
    else if (message.op === 'createQueue') void sqs.createQueue(message.name ?? 'q').then(answer);
    else if (message.op === 'count') void count(message.url ?? '').then(answer);
    else void sqs.close().then(() => answer(null));
  },
);
port.postMessage({ id: 0, value: sqs.endpoint });
