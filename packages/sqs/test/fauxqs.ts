/**
 * fauxqs (an SQS emulator from npm, written by others) served on 127.0.0.1 on an ephemeral port, for the
 * tests and the benchmark that must see SQS as AWS runs it rather than as our own emulator models it:
 * above all a long poll that really waits `WaitTimeSeconds` on an empty queue (ours caps it at 50 ms).
 *
 * fauxqs's own `startFauxqs` listens on every interface; this builds its app and listens on loopback only.
 * Its queue URLs name the host `sqs.<region>.localhost:<port>`, which does not resolve here: every client
 * must be given the server's `endpoint` (the AWS SDK then sends there, whatever host the queue URL names).
 *
 * Where fauxqs differs from AWS in ways these tests meet (see the README's Tests section): it takes its
 * time from `Date.now()` (so a test that follows a fake clock stubs it, see {@link followClock}); a FIFO
 * receive returns at most one message per message group; and on a FIFO queue it accepts a receipt handle
 * whose visibility ran out (a delete succeeds without deleting; a visibility change succeeds until the
 * next receive), where AWS answers "The receipt handle has expired". `refuseExpiredHandles` adds AWS's
 * rule in front of it (see {@link refuseExpiredHandles}).
 */
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';

type FauxqsApp = ReturnType<typeof buildApp>;

/** The operations that take receipt handles, single and batch. */
const HANDLE_OPERATIONS = new Set([
  'AmazonSQS.DeleteMessage',
  'AmazonSQS.ChangeMessageVisibility',
  'AmazonSQS.DeleteMessageBatch',
  'AmazonSQS.ChangeMessageVisibilityBatch',
]);

const expired = (handle: unknown) =>
  `Value ${String(handle)} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.`;

/**
 * AWS's rule for FIFO queues, which fauxqs lacks, put in front of it: a receipt handle whose message is
 * no longer in flight under it (its visibility ran out, or it was received again) is refused with
 * `InvalidParameterValue` "The receipt handle has expired" (a batch: that entry fails). What is in flight
 * is read from fauxqs's own inspection endpoint; the check uses `Date.now()`, as fauxqs does.
 */
function refuseExpiredHandles(app: FauxqsApp): void {
  const refused = new WeakMap<object, Array<Record<string, unknown>>>();
  app.addHook('preHandler', async (request, reply) => {
    const target = request.headers['x-amz-target'];
    const body = request.body as { QueueUrl?: string; ReceiptHandle?: string; Entries?: unknown } | null;
    if (typeof target !== 'string' || !HANDLE_OPERATIONS.has(target)) return;
    if (typeof body?.QueueUrl !== 'string' || !body.QueueUrl.endsWith('.fifo')) return;
    const name = body.QueueUrl.split('/').pop() ?? '';
    const inspected = await app.inject({ method: 'GET', url: `/_fauxqs/queues/${encodeURIComponent(name)}` });
    if (inspected.statusCode !== 200) return; // no such queue: fauxqs answers that itself
    const { messages } = inspected.json() as {
      messages: { inflight: Array<{ receiptHandle: string; visibilityDeadline: number }> };
    };
    const live = new Set(
      messages.inflight.filter((m) => m.visibilityDeadline > Date.now()).map((m) => m.receiptHandle),
    );
    if (!Array.isArray(body.Entries)) {
      if (live.has(String(body.ReceiptHandle))) return;
      reply
        .code(400)
        .header('content-type', 'application/x-amz-json-1.0')
        .header('x-amzn-query-error', 'InvalidParameterValue;Sender');
      return reply.send({
        __type: 'com.amazonaws.sqs#InvalidParameterValue',
        message: expired(body.ReceiptHandle),
      });
    }
    const entries = body.Entries as Array<{ Id?: unknown; ReceiptHandle?: unknown }>;
    const stale = entries.filter((e) => !live.has(String(e.ReceiptHandle)));
    if (stale.length === 0) return;
    const failed = stale.map((e) => ({
      Id: e.Id,
      SenderFault: true,
      Code: 'InvalidParameterValue',
      Message: expired(e.ReceiptHandle),
    }));
    if (stale.length === entries.length) {
      reply.header('content-type', 'application/x-amz-json-1.0');
      return reply.send({ Successful: [], Failed: failed });
    }
    body.Entries = entries.filter((e) => live.has(String(e.ReceiptHandle)));
    refused.set(request, failed);
  });
  app.addHook('onSend', async (request, _reply, payload) => {
    const failed = refused.get(request);
    if (failed === undefined || typeof payload !== 'string') return payload;
    const answer = JSON.parse(payload) as { Successful?: unknown[]; Failed?: unknown[] };
    return JSON.stringify({ ...answer, Failed: [...(answer.Failed ?? []), ...failed] });
  });
}

/** Any credentials do: fauxqs checks no signature. */
const CREDENTIALS = { accessKeyId: 'AKIAFAUXQSTESTKEY000', secretAccessKey: 'fauxqs-secret-for-tests-only' };

/** A running fauxqs. */
export interface Fauxqs {
  /** `http://127.0.0.1:<port>`: pass it as the SDK's `endpoint`. */
  readonly endpoint: string;
  /** An SDK client pointed at it (destroyed by `close()`). */
  readonly client: SQSClient;
  /** Creates a queue (FIFO when the name ends in `.fifo`) and returns its URL. */
  createQueue(name: string, attributes?: Record<string, string>): Promise<string>;
  /** Stops the server, ending any long poll still waiting. */
  close(): Promise<void>;
}

/**
 * A client for a fauxqs at `endpoint`, with throwaway credentials.
 *
 * @example
 * ```ts
 * const client = fauxqsClient(server.endpoint);
 * ```
 */
export function fauxqsClient(endpoint: string): SQSClient {
  return new SQSClient({ region: 'us-east-1', endpoint, credentials: CREDENTIALS, maxAttempts: 4 });
}

/**
 * Starts fauxqs on 127.0.0.1, on a free port. `refuseExpiredHandles`: refuse a FIFO queue's expired
 * receipt handles as AWS does (fauxqs accepts them).
 *
 * @example
 * ```ts
 * const sqs = await startFauxqs();
 * const queueUrl = await sqs.createQueue('jobs.fifo');
 * await sqs.close();
 * ```
 */
export async function startFauxqs(options: { refuseExpiredHandles?: boolean } = {}): Promise<Fauxqs> {
  const app = buildApp({ logger: false });
  if (options.refuseExpiredHandles === true) refuseExpiredHandles(app);
  const endpoint = (await app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  const client = fauxqsClient(endpoint);
  return {
    endpoint,
    client,
    async createQueue(name, attributes = {}) {
      const fifo = name.endsWith('.fifo') ? { FifoQueue: 'true' } : {};
      const created = await client.send(
        new CreateQueueCommand({ QueueName: name, Attributes: { ...fifo, ...attributes } }),
      );
      if (created.QueueUrl === undefined) throw new Error(`fauxqs created no URL for ${name}`);
      return created.QueueUrl;
    },
    async close() {
      client.destroy();
      // fauxqs's app closes its connections (and so any long poll still waiting) on close.
      await app.close();
    },
  };
}

/**
 * Makes fauxqs (which reads `Date.now()` for visibility timeouts, delays and FIFO deduplication) follow
 * `now`, a test's fake clock, and returns the function that restores the real clock. It changes
 * `Date.now` for the whole process: only for a test file whose code under test takes its time from `now`.
 *
 * @example
 * ```ts
 * const restore = followClock(clock.now); … restore();
 * ```
 */
export function followClock(now: () => number): () => void {
  const real = Date.now;
  Date.now = now;
  return () => {
    Date.now = real;
  };
}
