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
 *
 * This file is the emulator's interface; its state is in `emulator-state.ts`, the message operations in
 * `emulator-messages.ts` and the request handling in `emulator-http.ts`.
 */
import type { AddressInfo } from 'node:net';
import nock from 'nock';
import { handleRequest, interceptWithNock, listenOnLoopback } from './emulator-http.ts';
import { injectMessage } from './emulator-messages.ts';
import {
  type Attrs,
  type EmulatedMessage,
  EmulatorState,
  type EntryFault,
  type SqsEmulatorOptions,
} from './emulator-state.ts';

export type { EmulatedMessage, EntryFault, SqsEmulatorOptions };

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
  readonly account: EmulatorState['account'];
  /** Every request received, by operation name, in order. */
  readonly calls: EmulatorState['calls'];
  private readonly state: EmulatorState;
  private scope: nock.Scope | null = null;

  constructor(options: SqsEmulatorOptions = {}) {
    this.state = new EmulatorState(options);
    this.endpoint = this.state.endpoint;
    this.account = this.state.account;
    this.calls = this.state.calls;
  }

  /** The emulated time (epoch ms). */
  now(): number {
    return this.state.now();
  }

  /** Moves the emulated clock forward; messages whose visibility ran out become receivable. */
  advance(ms: number): void {
    this.state.advance(ms);
  }

  /** Sets the emulated clock (never backwards). */
  setTime(at: number): void {
    if (at > this.now()) this.advance(at - this.now());
  }

  /** Creates a queue (FIFO when the name ends in `.fifo`) and returns its URL. */
  createQueue(name: string, attributes: Record<string, string> = {}): string {
    return this.state.createQueue(name, attributes);
  }

  /** The ARN of a queue, for redrive policies. */
  arnOf(url: string): string {
    return this.state.queue(url).arn;
  }

  /** The messages a queue holds (visible or not), oldest first. */
  messages(url: string): readonly EmulatedMessage[] {
    return this.state.queue(url).messages;
  }

  /** Puts a raw message in a queue, bypassing the SDK (e.g. a malformed body from another producer). */
  inject(url: string, body: string, options: { groupId?: string; attributes?: Attrs } = {}): string {
    return injectMessage(this.state, url, body, options);
  }

  /** The next `count` requests of `operation` fail with a throttling error (400). */
  throttle(
    operation: string,
    count: number,
    code: 'ThrottlingException' | 'RequestThrottled' = 'RequestThrottled',
  ): void {
    this.state.throttles.set(operation, { count, code });
  }

  /** Entries of a batch `operation` for which `fault` returns a fault fail with it (until cleared). */
  failEntries(
    operation: string,
    fault: ((entry: Record<string, unknown>) => EntryFault | null) | null,
  ): void {
    if (fault === null) this.state.entryFaults.delete(operation);
    else this.state.entryFaults.set(operation, fault);
  }

  /** How many requests of `operation` were made. */
  count(operation: string): number {
    return this.calls.filter((c) => c.operation === operation).length;
  }

  /** Installs the HTTP interceptor. */
  start(): this {
    this.scope = interceptWithNock(this.endpoint, (target, contentType, text) =>
      handleRequest(this.state, target, contentType, text),
    );
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
    const server = await listenOnLoopback((target, contentType, text) =>
      handleRequest((emulator as SqsEmulator).state, target, contentType, text),
    );
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
    this.state.wake();
  }
}
