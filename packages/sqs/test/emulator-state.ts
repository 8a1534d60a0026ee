/**
 * The state of the SQS emulator (`sqs-emulator.ts`): its queues and their messages, its clock, the long
 * polls waiting for a message, the faults a test injected and every request received. The operations on
 * messages live in `emulator-messages.ts`, the request handling in `emulator-http.ts`.
 */

export type Attrs = Record<string, { DataType: string; StringValue?: string }>;

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

export interface Queue {
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

/** An error SQS answers with: its JSON `__type` code, its query-protocol code and its HTTP status. */
export class SqsFault extends Error {
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

/** The queues, clock, waiting long polls, injected faults and request log of one emulator. */
export class EmulatorState {
  readonly endpoint: string;
  readonly account = '123456789012';
  readonly maxLongPollMs: number;
  readonly maxPayloadBytes: number;
  readonly queues = new Map<string, Queue>();
  /** The sequence number of the next stored message. */
  seq = 0;
  readonly throttles = new Map<string, { count: number; code: string }>();
  readonly entryFaults = new Map<string, (entry: Record<string, unknown>) => EntryFault | null>();
  /** Every request received, by operation name, in order. */
  readonly calls: Array<{ operation: string; input: Record<string, unknown> }> = [];
  private ownClock: number;
  private readonly externalClock: (() => number) | undefined;
  private readonly waiters = new Set<() => void>();

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

  /** Moves the emulated clock forward; messages whose visibility ran out become receivable. */
  advance(ms: number): void {
    if (this.externalClock !== undefined)
      throw new Error('this emulator follows an external clock: advance that one');
    this.ownClock += ms;
    this.wake();
  }

  /** Waits until `wake()` is called or `ms` of real time have passed, whichever comes first. */
  waitForWake(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(done);
        resolve();
      }, ms);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.add(done);
    });
  }

  /** Wakes every waiting long poll. */
  wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const waiter of waiters) waiter();
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

  /** The queue at `url`, or the fault SQS answers for a queue that does not exist. */
  queue(url: unknown): Queue {
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

  /** GetQueueAttributes: the queue's own attributes and the approximate counts computed now. */
  getAttributes(queue: Queue, names: string[]): unknown {
    const now = this.now();
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
