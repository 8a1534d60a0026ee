/**
 * The core Outbox conformance suite against the SQS outbox, through the real AWS SDK, twice: on our
 * in-memory SQS emulator (behind nock) and on fauxqs (an SQS emulator from npm, over HTTP on loopback),
 * each following the suite's fake clock, with an in-memory order ledger. The capabilities SQS lacks by
 * nature are declared, and those tests are skipped with the reason.
 */

import type { SQSClient } from '@aws-sdk/client-sqs';
import { describeOutbox, type OutboxFactoryContext } from '@postback/core/testing';
import nock from 'nock';
import { createMemoryOrderLedger, createSqsOutbox, SQS_OUTBOX_LIMITS } from '../src/index.ts';
import { followClock, startFauxqs } from './fauxqs.ts';
import { FAKE_CREDENTIALS } from './harness.ts';
import { SqsEmulator } from './sqs-emulator.ts';

const unsupported = {
  lookup: SQS_OUTBOX_LIMITS.lookup,
  cancelPendingConfirm: SQS_OUTBOX_LIMITS.cancelPending,
  exactStats: SQS_OUTBOX_LIMITS.exactStats,
  uncountedAttempts: SQS_OUTBOX_LIMITS.uncountedAttempts,
  retryError: SQS_OUTBOX_LIMITS.retryError,
  attemptHistory: SQS_OUTBOX_LIMITS.attemptHistory,
  listJobs: SQS_OUTBOX_LIMITS.listJobs,
  prune: SQS_OUTBOX_LIMITS.prune,
  heartbeats: SQS_OUTBOX_LIMITS.heartbeats,
  fairClaims: SQS_OUTBOX_LIMITS.fairClaims,
  shadow: SQS_OUTBOX_LIMITS.shadow,
};

/** The outbox the suite tests, on `client` and the given queues. */
function outboxOn(
  client: SQSClient,
  queues: { queueUrl: string; deadLetterQueueUrl: string },
  { now, policy }: OutboxFactoryContext,
) {
  return createSqsOutbox({
    ...queues,
    client,
    policy,
    now,
    ledger: createMemoryOrderLedger(),
    waitTimeSeconds: 0,
    deadLetterWaitSeconds: 0,
    deleteBatchWindowMs: 0,
    onWarning: () => {},
  });
}

describeOutbox(
  'sqs on our emulator (FIFO queue, order ledger)',
  async (context) => {
    nock.disableNetConnect();
    const sqs = new SqsEmulator({ clock: context.now }).start();
    const deadLetterQueueUrl = sqs.createQueue('conformance-dlq.fifo');
    const queueUrl = sqs.createQueue('conformance.fifo', {
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: sqs.arnOf(deadLetterQueueUrl),
        maxReceiveCount: 100,
      }),
    });
    const { SQSClient } = await import('@aws-sdk/client-sqs');
    const client = new SQSClient({
      region: 'us-east-1',
      endpoint: sqs.endpoint,
      credentials: FAKE_CREDENTIALS,
    });
    return {
      outbox: outboxOn(client, { queueUrl, deadLetterQueueUrl }, context),
      cleanup: () => {
        client.destroy();
        sqs.stop();
        nock.enableNetConnect();
      },
    };
  },
  { unsupported },
);

describeOutbox(
  'sqs on fauxqs (FIFO queue, order ledger)',
  async (context) => {
    // fauxqs keeps visibility and deduplication times by Date.now(): it follows the suite's clock.
    const restoreClock = followClock(context.now);
    // fauxqs accepts a FIFO queue's expired receipt handles; AWS refuses them, and the suite's lost-lease
    // tests rely on it: the harness puts AWS's rule in front (fauxqs.ts).
    const sqs = await startFauxqs({ refuseExpiredHandles: true });
    const deadLetterQueueUrl = await sqs.createQueue('conformance-dlq.fifo');
    const queueUrl = await sqs.createQueue('conformance.fifo', {
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:conformance-dlq.fifo',
        maxReceiveCount: 100,
      }),
    });
    return {
      outbox: outboxOn(sqs.client, { queueUrl, deadLetterQueueUrl }, context),
      cleanup: async () => {
        await sqs.close();
        restoreClock();
      },
    };
  },
  { unsupported },
);
