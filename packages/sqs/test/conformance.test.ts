/**
 * The core Outbox conformance suite against the SQS outbox: the real AWS SDK talking to the in-memory
 * SQS emulator (which follows the suite's fake clock), with an in-memory order ledger. The capabilities
 * SQS lacks by nature are declared, and those tests are skipped with the reason.
 */

import { SQSClient } from '@aws-sdk/client-sqs';
import { describeOutbox } from '@postback/core/testing';
import nock from 'nock';
import { createMemoryOrderLedger, createSqsOutbox, SQS_OUTBOX_LIMITS } from '../src/index.ts';
import { FAKE_CREDENTIALS } from './harness.ts';
import { SqsEmulator } from './sqs-emulator.ts';

describeOutbox(
  'sqs (FIFO queue, order ledger)',
  ({ now, policy }) => {
    nock.disableNetConnect();
    const sqs = new SqsEmulator({ clock: now }).start();
    const deadLetterQueueUrl = sqs.createQueue('conformance-dlq.fifo');
    const queueUrl = sqs.createQueue('conformance.fifo', {
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: sqs.arnOf(deadLetterQueueUrl),
        maxReceiveCount: 100,
      }),
    });
    const client = new SQSClient({
      region: 'us-east-1',
      endpoint: sqs.endpoint,
      credentials: FAKE_CREDENTIALS,
    });
    const outbox = createSqsOutbox({
      queueUrl,
      deadLetterQueueUrl,
      client,
      policy,
      now,
      ledger: createMemoryOrderLedger(),
      waitTimeSeconds: 0,
      deadLetterWaitSeconds: 0,
      deleteBatchWindowMs: 0,
      onWarning: () => {},
    });
    return {
      outbox,
      cleanup: () => {
        client.destroy();
        sqs.stop();
        nock.enableNetConnect();
      },
    };
  },
  {
    unsupported: {
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
    },
  },
);
