/**
 * The Amazon SQS backend of the CLI (`--sqs QUEUE_URL`). Credentials and region come from the AWS SDK's
 * own provider chain (`AWS_PROFILE`, `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, instance or task roles,
 * `AWS_REGION`…); an endpoint set in `AWS_ENDPOINT_URL_SQS` (or `AWS_ENDPOINT_URL`) is used for every
 * request, whatever host the queue URL names (the outbox passes it to the client it builds). The CLI adds
 * one variable of its own, `POSTBACK_SQS_DLQ_URL`, the dead-letter queue that `dlq list/replay/purge` read
 * and the worker fills, and the worker's `--sqs-wait-seconds`, the long-poll wait of its claims.
 * Opening reads the queues' attributes, which proves the queue is reachable with these credentials and
 * prints the start-up warnings (retention, redrive policy) to stderr.
 */
import { createSqsOutbox, type SqsOutboxOptions } from '@postback/sqs';
import type { OpenedBackend } from './backend.ts';

/** The queue's name from its URL, for messages (a queue URL holds no secret, but the name is enough). */
function queueName(url: string): string {
  return url.replace(/\/+$/, '').split('/').pop() ?? url;
}

/**
 * Opens the outbox on the SQS queue at `queueUrl`; `options.waitTimeSeconds` is the long-poll wait of
 * its claims (the outbox's default when absent).
 *
 * @example
 * ```ts
 * const { outbox } = await open('https://sqs.us-east-1.amazonaws.com/123456789012/postback.fifo', {
 *   POSTBACK_SQS_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/postback-dlq.fifo',
 * });
 * ```
 */
export async function open(
  queueUrl: string,
  env: Record<string, string | undefined>,
  options: Pick<SqsOutboxOptions, 'waitTimeSeconds'> = {},
): Promise<OpenedBackend> {
  const dlq = env.POSTBACK_SQS_DLQ_URL;
  const deadLetterQueueUrl = dlq === undefined || dlq === '' ? undefined : dlq;
  const outbox = createSqsOutbox({
    queueUrl,
    ...(deadLetterQueueUrl === undefined ? {} : { deadLetterQueueUrl }),
    ...options,
  });
  try {
    await outbox.checkQueues();
  } catch (error) {
    await outbox.close();
    throw error;
  }
  return {
    outbox,
    describe: `sqs ${queueName(queueUrl)}${deadLetterQueueUrl === undefined ? '' : ` (dead letters: ${queueName(deadLetterQueueUrl)})`}`,
    // The long poll is SQS's own wake-up. What the worker needs is the reverse: when it stops (and calls
    // this unsubscribe function), a claim still waiting up to 20 s for an empty queue is cut short.
    wake: () => () => outbox.interruptClaims(),
  };
}
