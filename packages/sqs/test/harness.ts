/**
 * Test wiring: an emulator behind nock, a real `SQSClient` pointed at it with fake credentials, and
 * outboxes built on both. Each test gets its own emulator (its own queues and clock).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import nock from 'nock';
import { createSqsOutbox, type SqsOutbox, type SqsOutboxOptions } from '../src/index.ts';
import { SqsEmulator, type SqsEmulatorOptions } from './sqs-emulator.ts';

/** Fake credentials: the SDK signs with them, the emulator ignores the signature. */
export const FAKE_CREDENTIALS = {
  accessKeyId: 'AKIAEXAMPLETESTKEY00',
  secretAccessKey: 'fake-secret-for-tests-only',
};

export interface Harness {
  sqs: SqsEmulator;
  client: SQSClient;
  queueUrl: string;
  dlqUrl: string;
  outbox(options?: Partial<SqsOutboxOptions>): SqsOutbox;
  close(): Promise<void>;
}

/**
 * Starts an emulator with a queue (FIFO unless `standard`) and its dead-letter queue.
 *
 * @example
 * ```ts
 * const h = startHarness(); const outbox = h.outbox(); … await h.close();
 * ```
 */
export function startHarness(
  options: {
    standard?: boolean;
    emulator?: SqsEmulatorOptions;
    queueAttributes?: Record<string, string>;
  } = {},
): Harness {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  const sqs = new SqsEmulator(options.emulator).start();
  const suffix = options.standard ? '' : '.fifo';
  const dlqUrl = sqs.createQueue(`postback-dlq${suffix}`, { MessageRetentionPeriod: '1209600' });
  const queueUrl = sqs.createQueue(`postback${suffix}`, {
    MessageRetentionPeriod: '1209600',
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: sqs.arnOf(dlqUrl), maxReceiveCount: 50 }),
    ...options.queueAttributes,
  });
  const client = new SQSClient({
    region: 'us-east-1',
    endpoint: sqs.endpoint,
    credentials: FAKE_CREDENTIALS,
    maxAttempts: 4,
  });
  const opened: SqsOutbox[] = [];
  return {
    sqs,
    client,
    queueUrl,
    dlqUrl,
    outbox(extra = {}) {
      const outbox = createSqsOutbox({
        queueUrl,
        deadLetterQueueUrl: dlqUrl,
        client,
        waitTimeSeconds: 1,
        deadLetterWaitSeconds: 0,
        deleteBatchWindowMs: 1,
        now: () => sqs.now(),
        onWarning: () => {},
        ...extra,
      });
      opened.push(outbox);
      return outbox;
    },
    async close() {
      for (const outbox of opened) await outbox.close();
      client.destroy();
      sqs.stop();
      nock.enableNetConnect();
    },
  };
}
