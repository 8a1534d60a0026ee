/**
 * Start-up checks of the queues' configuration. SQS silently drops a message when its retention period
 * ends, so a queue that keeps messages for less than the confirmation window (plus a margin) can lose a
 * job that is still retrying inside its window; a queue without a redrive policy lets a message that
 * crashes every worker be received forever. These checks warn; they never refuse to start.
 */
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { WindowPolicy } from '@postback/core';

const DAY_SECONDS = 86_400;

function queueNameOf(urlOrArn: string): string {
  return urlOrArn.split(/[/:]/).pop() ?? urlOrArn;
}

/**
 * Returns one sentence per problem found (empty when all is well).
 *
 * @example
 * ```ts
 * const warnings = await checkQueueAttributes(client, { queueUrl, deadLetterQueueUrl, fifo: true, policy, retentionMarginMs: 86_400_000 });
 * ```
 */
export async function checkQueueAttributes(
  client: SQSClient,
  options: {
    queueUrl: string;
    deadLetterQueueUrl: string | undefined;
    fifo: boolean;
    policy: WindowPolicy;
    retentionMarginMs: number;
  },
): Promise<string[]> {
  const warnings: string[] = [];
  const { Attributes: attrs = {} } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: options.queueUrl, AttributeNames: ['All'] }),
  );
  const retention = Number(attrs.MessageRetentionPeriod ?? Number.NaN);
  const needed = Math.ceil((options.policy.confirmWindowMs + options.retentionMarginMs) / 1000);
  if (!Number.isFinite(retention) || retention < needed) {
    warnings.push(
      `queue ${queueNameOf(options.queueUrl)} keeps messages for ${Number.isFinite(retention) ? `${(retention / DAY_SECONDS).toFixed(2)} days` : 'an unknown time'}, ` +
        `less than the confirmation window plus margin (${(needed / DAY_SECONDS).toFixed(2)} days): SQS would drop jobs still retrying. ` +
        `Set MessageRetentionPeriod to at least ${needed} seconds (1209600 = 14 days is the maximum).`,
    );
  }
  const redrive = attrs.RedrivePolicy;
  if (redrive === undefined || redrive === '') {
    warnings.push(
      `queue ${queueNameOf(options.queueUrl)} has no RedrivePolicy: a message that crashes every worker is received forever. ` +
        "Set one with a maxReceiveCount above the dispatcher's attempts, pointing at the dead-letter queue.",
    );
  } else if (options.deadLetterQueueUrl !== undefined) {
    try {
      const target = (JSON.parse(redrive) as { deadLetterTargetArn?: string }).deadLetterTargetArn ?? '';
      if (queueNameOf(target) !== queueNameOf(options.deadLetterQueueUrl)) {
        warnings.push(
          `the RedrivePolicy of ${queueNameOf(options.queueUrl)} points at ${queueNameOf(target)}, not at the deadLetterQueueUrl ${queueNameOf(options.deadLetterQueueUrl)}`,
        );
      }
    } catch {
      warnings.push(`the RedrivePolicy of ${queueNameOf(options.queueUrl)} is not valid JSON`);
    }
  }
  const isFifo = attrs.FifoQueue === 'true';
  if (isFifo !== options.fifo) {
    warnings.push(
      `queue ${queueNameOf(options.queueUrl)} is ${isFifo ? '' : 'not '}a FIFO queue, but the outbox treats it as ${options.fifo ? 'FIFO' : 'standard'}`,
    );
  }
  if (options.deadLetterQueueUrl === undefined) {
    warnings.push(
      'no deadLetterQueueUrl: jobs that fail permanently cannot be dead-lettered with their reason, and malformed messages are only hidden',
    );
  } else {
    const { Attributes: dlq = {} } = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: options.deadLetterQueueUrl,
        AttributeNames: ['MessageRetentionPeriod'],
      }),
    );
    const dlqRetention = Number(dlq.MessageRetentionPeriod ?? Number.NaN);
    if (Number.isFinite(retention) && Number.isFinite(dlqRetention) && dlqRetention < retention) {
      warnings.push(
        `the dead-letter queue ${queueNameOf(options.deadLetterQueueUrl)} keeps messages for less time than ${queueNameOf(options.queueUrl)}: ` +
          'dead jobs may vanish before anyone replays them',
      );
    }
  }
  return warnings;
}
