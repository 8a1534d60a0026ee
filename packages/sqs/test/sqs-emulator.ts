/**
 * An in-memory Amazon SQS for tests, spoken to over HTTP through nock in the AWS JSON 1.0 protocol
 * (`X-Amz-Target: AmazonSQS.<Operation>`, `application/x-amz-json-1.0`), so the real `@aws-sdk/client-sqs`
 * serialises, signs, retries and parses errors exactly as against AWS.
 *
 * Modelled: queues (standard and FIFO), visibility timeouts on a controllable clock (a message whose
 * visibility ran out is delivered again with a new receipt handle), the 12-hour visibility cap,
 * ApproximateReceiveCount, FIFO groups (a group is blocked while one of its messages is in flight) and
 * 5-minute deduplication, redrive policies (maxReceiveCount → dead-letter queue), batch operations with
 * per-entry failures, stale receipt handles (→ ReceiptHandleIsInvalid / MessageNotInflight), long polling,
 * message size limits, and injected faults (throttling, failing batch entries).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';

const TWELVE_HOURS_MS = 43_200_000;
const DEDUP_INTERVAL_MS = 300_000;
const FIFO_ID = /^[\x21-\x7e]{1,128}$/;

type Attrs = Record<string, { DataType: string; StringValue?: string }>;

/** One stored message. */
export interface EmulatedMessage {
  id: string;
  body: string;
  attributes: Attrs;
  sentAt: number;
  groupId: string | undefined;
  visibleAt: number;
  receiveCount: number;
  receiptHandle: string | null;
  receivedAt: number;
  seq: number;
}

interface Queue {
  name: string;
  url: string;
  arn: string;
  fifo: boolean;
  attributes: Record<string, string>;
  messages: EmulatedMessage[];
  dedup: Map<string, { messageId: string; at: number }>;
}

/** What an injected fault does to one batch entry. */
export interface EntryFault {
  code: string;
  senderFault: boolean;
  message?: string;
}

class SqsFault extends Error {
  readonly status: number;
  readonly code: string;
  readonly queryCode: string;
  constructor(code: string, message: string, queryCode = code, status = 400) {
    super(message);
    this.code = code;
    this.queryCode = queryCode;
    this.status = status;
  }
}

function md5(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

function size(body: string, attributes: Attrs | undefined): number {
  let n = Buffer.byteLength(body);
  for (const [name, v] of Object.entries(attributes ?? {}))
    n += Buffer.byteLength(name) + Buffer.byteLength(v.DataType) + Buffer.byteLength(v.StringValue ?? '');
  return n;
}

/** Options of {@link SqsEmulator}. */
export interface SqsEmulatorOptions {
  /** @defaultValue 'https://sqs.us-east-1.amazonaws.com' */
  endpoint?: string;
  /** Start of the emulated clock. @defaultValue Date.now() at creation */
  startAt?: number;
  /** An external clock to follow instead of the emulator's own (e.g. a test suite's fake clock). */
  clock?: () => number;
  /** Longest real time a long poll waits for a message (the emulated wait is scaled down to this). @defaultValue 50 */
  maxLongPollMs?: number;
  /** Largest message/batch payload. @defaultValue 262_144 */
  maxPayloadBytes?: number;
}

/**
 * The emulator. `start()` installs the nock interceptor; `stop()` removes it.
 *
 * @example
 * ```ts
 * const sqs = new SqsEmulator().start();
 * const url = sqs.createQueue('jobs.fifo');
 * ```
 */
export class SqsEmulator {
  readonly endpoint: string;
  readonly account = '123456789012';
  private ownClock: number;
  private readonly externalClock: (() => number) | undefined;
  private readonly maxLongPollMs: number;
  private readonly maxPayloadBytes: number;
  private readonly queues = new Map<string, Queue>();
  private seq = 0;
  private waiters = new Set<() => void>();
  private throttles = new Map<string, { count: number; code: string }>();
  private entryFaults = new Map<string, (entry: Record<string, unknown>) => EntryFault | null>();
  private scope: nock.Scope | null = null;
  /** Every request received, by operation name, in order. */
  readonly calls: Array<{ operation: string; input: Record<string, unknown> }> = [];

  constructor(options: SqsEmulatorOptions = {}) {
    this.endpoint = options.endpoint ?? 'https://sqs.us-east-1.amazonaws.com';
    this.ownClock = options.startAt ?? Date.now();
    this.externalClock = options.clock;
    this.maxLongPollMs = options.maxLongPollMs ?? 50;
    this.maxPayloadBytes = options.maxPayloadBytes ?? 262_144;
  }

  /** The emulated time (epoch ms). */
  now(): number {
    return this.externalClock?.() ?? this.ownClock;
  }

  private get clock(): number {
    return this.now();
  }

  /** Moves the emulated clock forward; messages whose visibility ran out become receivable. */
  advance(ms: number): void {
    if (this.externalClock !== undefined)
      throw new Error('this emulator follows an external clock: advance that one');
    this.ownClock += ms;
    this.wake();
  }

  /** Sets the emulated clock (never backwards). */
  setTime(at: number): void {
    if (at > this.clock) this.advance(at - this.clock);
  }

  /** Creates a queue (FIFO when the name ends in `.fifo`) and returns its URL. */
  createQueue(name: string, attributes: Record<string, string> = {}): string {
    const url = `${this.endpoint}/${this.account}/${name}`;
    const fifo = name.endsWith('.fifo');
    this.queues.set(url, {
      name,
      url,
      arn: `arn:aws:sqs:us-east-1:${this.account}:${name}`,
      fifo,
      attributes: {
        VisibilityTimeout: '30',
        MessageRetentionPeriod: '345600',
        ...(fifo ? { FifoQueue: 'true' } : {}),
        ...attributes,
      },
      messages: [],
      dedup: new Map(),
    });
    return url;
  }

  /** The ARN of a queue, for redrive policies. */
  arnOf(url: string): string {
    return this.queue(url).arn;
  }

  /** The messages a queue holds (visible or not), oldest first. */
  messages(url: string): readonly EmulatedMessage[] {
    return this.queue(url).messages;
  }

  /** Puts a raw message in a queue, bypassing the SDK (e.g. a malformed body from another producer). */
  inject(url: string, body: string, options: { groupId?: string; attributes?: Attrs } = {}): string {
    const queue = this.queue(url);
    const id = randomUUID();
    queue.messages.push({
      id,
      body,
      attributes: options.attributes ?? {},
      sentAt: this.clock,
      groupId: options.groupId,
      visibleAt: this.clock,
      receiveCount: 0,
      receiptHandle: null,
      receivedAt: 0,
      seq: this.seq++,
    });
    this.wake();
    return id;
  }

  /** The next `count` requests of `operation` fail with a throttling error (400). */
  throttle(
    operation: string,
    count: number,
    code: 'ThrottlingException' | 'RequestThrottled' = 'RequestThrottled',
  ): void {
    this.throttles.set(operation, { count, code });
  }

  /** Entries of a batch `operation` for which `fault` returns a fault fail with it (until cleared). */
  failEntries(
    operation: string,
    fault: ((entry: Record<string, unknown>) => EntryFault | null) | null,
  ): void {
    if (fault === null) this.entryFaults.delete(operation);
    else this.entryFaults.set(operation, fault);
  }

  /** How many requests of `operation` were made. */
  count(operation: string): number {
    return this.calls.filter((c) => c.operation === operation).length;
  }

  /** Installs the HTTP interceptor. */
  start(): this {
    this.scope = nock(this.endpoint)
      .persist()
      .post('/')
      // nock 15 hands a reply function the fetch `Request` (it is built on @mswjs/interceptors).
      .reply(async (request: Request) => {
        const text = await request.clone().text();
        return this.handle(
          request.headers.get('x-amz-target') ?? '',
          request.headers.get('content-type') ?? '',
          text,
        );
      });
    return this;
  }

  /**
   * Serves an emulator on a real HTTP server on 127.0.0.1 (an ephemeral port) instead of nock: for the
   * benchmark, where nock's own interception cost (milliseconds of CPU per request) would swamp what is
   * measured. Queue URLs then start with the server's URL; point the SDK's `endpoint` at `emulator.endpoint`.
   */
  static async serve(
    options: Omit<SqsEmulatorOptions, 'endpoint'> = {},
  ): Promise<{ emulator: SqsEmulator; close(): Promise<void> }> {
    let emulator: SqsEmulator | undefined;
    const server: Server = createServer({ keepAlive: true }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        (emulator as SqsEmulator)
          .handle(String(req.headers['x-amz-target'] ?? ''), String(req.headers['content-type'] ?? ''), text)
          .then(
            ([status, body, headers]) => {
              res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
              res.end(body);
            },
            (err: unknown) => {
              res.writeHead(500);
              res.end(String(err));
            },
          );
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    emulator = new SqsEmulator({ ...options, endpoint: `http://127.0.0.1:${port}` });
    return {
      emulator,
      close: () =>
        new Promise<void>((resolve) => {
          emulator?.wake();
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  /** Removes the interceptor and wakes every waiting long poll. */
  stop(): void {
    this.scope?.persist(false);
    nock.cleanAll();
    this.scope = null;
    this.wake();
  }

  /** Wakes every waiting long poll. */
  wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const waiter of waiters) waiter();
  }

  private queue(url: unknown): Queue {
    const queue = typeof url === 'string' ? this.queues.get(url) : undefined;
    if (queue === undefined) {
      throw new SqsFault(
        'QueueDoesNotExist',
        'The specified queue does not exist.',
        'AWS.SimpleQueueService.NonExistentQueue',
      );
    }
    return queue;
  }

  private async handle(
    target: string,
    contentType: string,
    text: string,
  ): Promise<[number, string, Record<string, string>]> {
    const headers = { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() };
    try {
      if (!target.startsWith('AmazonSQS.'))
        throw new SqsFault('UnknownOperationException', `unknown target ${target}`);
      if (!contentType.startsWith('application/x-amz-json-1.0'))
        throw new SqsFault('SerializationException', `bad content type ${contentType}`);
      const operation = target.slice('AmazonSQS.'.length);
      const input = JSON.parse(text) as Record<string, unknown>;
      this.calls.push({ operation, input });
      const throttle = this.throttles.get(operation);
      if (throttle !== undefined && throttle.count > 0) {
        throttle.count -= 1;
        throw new SqsFault(throttle.code, 'Rate exceeded');
      }
      const output = await this.dispatch(operation, input);
      return [200, JSON.stringify(output), headers];
    } catch (err) {
      if (!(err instanceof SqsFault)) throw err;
      return [
        err.status,
        JSON.stringify({ __type: `com.amazonaws.sqs#${err.code}`, message: err.message }),
        { ...headers, 'x-amzn-query-error': `${err.queryCode};Sender` },
      ];
    }
  }

  private dispatch(operation: string, input: Record<string, unknown>): unknown {
    switch (operation) {
      case 'SendMessage': {
        const queue = this.queue(input.QueueUrl);
        return this.send(queue, input, this.maxPayloadBytes);
      }
      case 'SendMessageBatch':
        return this.batch(
          operation,
          input,
          (queue, entry) => this.send(queue, entry, this.maxPayloadBytes),
          true,
        );
      case 'ReceiveMessage':
        return this.receive(input);
      case 'DeleteMessage':
        this.deleteMessage(this.queue(input.QueueUrl), String(input.ReceiptHandle));
        return {};
      case 'DeleteMessageBatch':
        return this.batch(operation, input, (queue, entry) => {
          this.deleteMessage(queue, String(entry.ReceiptHandle));
          return {};
        });
      case 'ChangeMessageVisibility':
        this.changeVisibility(
          this.queue(input.QueueUrl),
          String(input.ReceiptHandle),
          Number(input.VisibilityTimeout),
        );
        return {};
      case 'ChangeMessageVisibilityBatch':
        return this.batch(operation, input, (queue, entry) => {
          this.changeVisibility(queue, String(entry.ReceiptHandle), Number(entry.VisibilityTimeout));
          return {};
        });
      case 'GetQueueAttributes':
        return this.getAttributes(
          this.queue(input.QueueUrl),
          (input.AttributeNames as string[] | undefined) ?? [],
        );
      default:
        throw new SqsFault(
          'UnsupportedOperation',
          `${operation} is not emulated`,
          'AWS.SimpleQueueService.UnsupportedOperation',
        );
    }
  }

  private batch(
    operation: string,
    input: Record<string, unknown>,
    apply: (queue: Queue, entry: Record<string, unknown>) => Record<string, unknown>,
    checkSize = false,
  ): unknown {
    const queue = this.queue(input.QueueUrl);
    const entries = (input.Entries as Array<Record<string, unknown>> | undefined) ?? [];
    if (entries.length === 0)
      throw new SqsFault('EmptyBatchRequest', 'no entries', 'AWS.SimpleQueueService.EmptyBatchRequest');
    if (entries.length > 10)
      throw new SqsFault(
        'TooManyEntriesInBatchRequest',
        'more than 10 entries',
        'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
      );
    const ids = new Set(entries.map((e) => e.Id));
    if (ids.size !== entries.length)
      throw new SqsFault(
        'BatchEntryIdsNotDistinct',
        'ids not distinct',
        'AWS.SimpleQueueService.BatchEntryIdsNotDistinct',
      );
    if (checkSize) {
      const total = entries.reduce(
        (n, e) => n + size(String(e.MessageBody ?? ''), e.MessageAttributes as Attrs | undefined),
        0,
      );
      if (total > this.maxPayloadBytes)
        throw new SqsFault(
          'BatchRequestTooLong',
          `batch of ${total} bytes`,
          'AWS.SimpleQueueService.BatchRequestTooLong',
        );
    }
    const fault = this.entryFaults.get(operation);
    const Successful: unknown[] = [];
    const Failed: unknown[] = [];
    for (const entry of entries) {
      const injected = fault?.(entry) ?? null;
      if (injected !== null) {
        Failed.push({
          Id: entry.Id,
          Code: injected.code,
          SenderFault: injected.senderFault,
          Message: injected.message ?? injected.code,
        });
        continue;
      }
      try {
        Successful.push({ Id: entry.Id, ...apply(queue, entry) });
      } catch (err) {
        if (!(err instanceof SqsFault)) throw err;
        Failed.push({ Id: entry.Id, Code: err.code, SenderFault: true, Message: err.message });
      }
    }
    return { Successful, Failed };
  }

  private send(queue: Queue, input: Record<string, unknown>, maxBytes: number): Record<string, unknown> {
    const body = input.MessageBody;
    if (typeof body !== 'string' || body.length === 0)
      throw new SqsFault('InvalidParameterValue', 'MessageBody is required');
    const attributes = (input.MessageAttributes as Attrs | undefined) ?? {};
    if (size(body, attributes) > maxBytes)
      throw new SqsFault('InvalidParameterValue', `message longer than ${maxBytes} bytes`);
    const groupId = input.MessageGroupId as string | undefined;
    const dedupId = input.MessageDeduplicationId as string | undefined;
    if (queue.fifo) {
      if (groupId === undefined || !FIFO_ID.test(groupId))
        throw new SqsFault(
          'InvalidParameterValue',
          'MessageGroupId is required and must be 1-128 printable ASCII characters',
        );
      if (dedupId === undefined || !FIFO_ID.test(dedupId))
        throw new SqsFault(
          'InvalidParameterValue',
          'MessageDeduplicationId is required and must be 1-128 printable ASCII characters',
        );
      const seen = queue.dedup.get(dedupId);
      if (seen !== undefined && this.clock - seen.at < DEDUP_INTERVAL_MS) {
        return { MessageId: seen.messageId, MD5OfMessageBody: md5(body), SequenceNumber: String(this.seq) };
      }
    } else if (dedupId !== undefined) {
      throw new SqsFault('InvalidParameterValue', 'MessageDeduplicationId is only for FIFO queues');
    }
    const id = randomUUID();
    if (queue.fifo && dedupId !== undefined) queue.dedup.set(dedupId, { messageId: id, at: this.clock });
    const delay = Number(input.DelaySeconds ?? 0) * 1000;
    queue.messages.push({
      id,
      body,
      attributes,
      sentAt: this.clock,
      groupId,
      visibleAt: this.clock + delay,
      receiveCount: 0,
      receiptHandle: null,
      receivedAt: 0,
      seq: this.seq++,
    });
    this.wake();
    return {
      MessageId: id,
      MD5OfMessageBody: md5(body),
      ...(queue.fifo ? { SequenceNumber: String(this.seq) } : {}),
    };
  }

  private available(queue: Queue, limit: number): EmulatedMessage[] {
    const now = this.clock;
    const out: EmulatedMessage[] = [];
    const blocked = new Set<string>();
    if (queue.fifo) {
      for (const m of queue.messages)
        if (m.groupId !== undefined && m.visibleAt > now && m.receiptHandle !== null) blocked.add(m.groupId);
    }
    for (const m of [...queue.messages].sort((a, b) => a.seq - b.seq)) {
      if (out.length >= limit) break;
      if (queue.fifo && m.groupId !== undefined) {
        if (blocked.has(m.groupId)) continue;
        if (m.visibleAt > now) {
          // A delayed message keeps the rest of its group behind it.
          blocked.add(m.groupId);
          continue;
        }
      } else if (m.visibleAt > now) continue;
      out.push(m);
    }
    return out;
  }

  private async receive(input: Record<string, unknown>): Promise<unknown> {
    const queue = this.queue(input.QueueUrl);
    const max = Number(input.MaxNumberOfMessages ?? 1);
    if (!(max >= 1 && max <= 10))
      throw new SqsFault('InvalidParameterValue', 'MaxNumberOfMessages must be 1-10');
    const waitMs = Math.min(Number(input.WaitTimeSeconds ?? 0) * 1000, this.maxLongPollMs);
    const visibilityMs = Number(input.VisibilityTimeout ?? queue.attributes.VisibilityTimeout) * 1000;
    let found = this.take(queue, max, visibilityMs);
    if (found.length === 0 && waitMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.waiters.delete(done);
          resolve();
        }, waitMs);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        this.waiters.add(done);
      });
      found = this.take(queue, max, visibilityMs);
    }
    const wantAll = ((input.MessageAttributeNames as string[] | undefined) ?? []).length > 0;
    return {
      Messages: found.map((m) => ({
        MessageId: m.id,
        ReceiptHandle: m.receiptHandle,
        MD5OfBody: md5(m.body),
        Body: m.body,
        Attributes: {
          ApproximateReceiveCount: String(m.receiveCount),
          SentTimestamp: String(m.sentAt),
          ...(m.groupId ? { MessageGroupId: m.groupId } : {}),
        },
        ...(wantAll && Object.keys(m.attributes).length > 0 ? { MessageAttributes: m.attributes } : {}),
      })),
    };
  }

  private take(queue: Queue, max: number, visibilityMs: number): EmulatedMessage[] {
    const redrive = queue.attributes.RedrivePolicy
      ? (JSON.parse(queue.attributes.RedrivePolicy) as {
          deadLetterTargetArn: string;
          maxReceiveCount: number;
        })
      : null;
    const taken: EmulatedMessage[] = [];
    for (const m of this.available(queue, Number.POSITIVE_INFINITY)) {
      if (taken.length >= max) break;
      if (redrive !== null && m.receiveCount >= Number(redrive.maxReceiveCount)) {
        const target = [...this.queues.values()].find((q) => q.arn === redrive.deadLetterTargetArn);
        queue.messages = queue.messages.filter((x) => x !== m);
        if (target !== undefined)
          target.messages.push({ ...m, receiptHandle: null, visibleAt: this.clock, seq: this.seq++ });
        continue;
      }
      m.receiveCount += 1;
      m.receiptHandle = `rh-${randomUUID()}`;
      m.receivedAt = this.clock;
      m.visibleAt = this.clock + visibilityMs;
      taken.push(m);
    }
    return taken;
  }

  private holder(queue: Queue, handle: string): EmulatedMessage {
    const message = queue.messages.find((m) => m.receiptHandle === handle);
    if (message === undefined)
      throw new SqsFault('ReceiptHandleIsInvalid', `The receipt handle "${handle}" is not valid.`);
    return message;
  }

  private deleteMessage(queue: Queue, handle: string): void {
    const message = this.holder(queue, handle);
    if (message.visibleAt <= this.clock) {
      throw new SqsFault('ReceiptHandleIsInvalid', 'The receipt handle has expired.');
    }
    queue.messages = queue.messages.filter((m) => m !== message);
    this.wake();
  }

  private changeVisibility(queue: Queue, handle: string, seconds: number): void {
    const message = this.holder(queue, handle);
    if (message.visibleAt <= this.clock) {
      throw new SqsFault(
        'MessageNotInflight',
        'The message referred to is not in flight.',
        'AWS.SimpleQueueService.MessageNotInflight',
      );
    }
    if (!(seconds >= 0 && seconds <= 43_200))
      throw new SqsFault('InvalidParameterValue', `VisibilityTimeout ${seconds} is out of range`);
    if (this.clock + seconds * 1000 > message.receivedAt + TWELVE_HOURS_MS) {
      throw new SqsFault(
        'InvalidParameterValue',
        'Total VisibilityTimeout for the message is beyond the limit [43200 seconds]',
      );
    }
    message.visibleAt = this.clock + seconds * 1000;
    if (seconds === 0) this.wake();
  }

  private getAttributes(queue: Queue, names: string[]): unknown {
    const now = this.clock;
    const computed: Record<string, string> = {
      ...queue.attributes,
      QueueArn: queue.arn,
      ApproximateNumberOfMessages: String(queue.messages.filter((m) => m.visibleAt <= now).length),
      ApproximateNumberOfMessagesNotVisible: String(
        queue.messages.filter((m) => m.visibleAt > now && m.receiptHandle !== null).length,
      ),
      ApproximateNumberOfMessagesDelayed: String(
        queue.messages.filter((m) => m.visibleAt > now && m.receiptHandle === null).length,
      ),
    };
    if (names.includes('All')) return { Attributes: computed };
    return {
      Attributes: Object.fromEntries(
        names.filter((n) => n in computed).map((n) => [n, computed[n] as string]),
      ),
    };
  }
}
