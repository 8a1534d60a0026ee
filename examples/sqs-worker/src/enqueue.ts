/**
 * The shop side: what your checkout and returns code does. Enqueueing is one SQS SendMessage; the ad
 * service is not called here, so a slow or failing ad service never slows a checkout.
 *
 *   npm run enqueue -- confirm <orderId> <value e.g. 12.34> <clickToken> [clickedAt ISO, default now]
 *   npm run enqueue -- refund  <orderId> <campaignId>
 */
import { toMicros } from '@postback/client';
import { createSqsOutbox, type SqsOutboxOptions } from '@postback/sqs';
import { ConfigError, readConfig } from './config.ts';

const USAGE = `usage:
  npm run enqueue -- confirm <orderId> <value, e.g. 12.34> <clickToken> [clickedAt, ISO 8601; default now]
  npm run enqueue -- refund  <orderId> <campaignId cmp_…>`;

/**
 * Runs the producer with command-line arguments; resolves to the exit code.
 *
 * @example
 * ```ts
 * await enqueue(['confirm', 'A-1001', '12.34', 'tok_abc'], process.env);
 * ```
 */
export async function enqueue(
  args: readonly string[],
  env: Record<string, string | undefined>,
  print: (line: string) => void = console.log,
  outboxOptions: Partial<SqsOutboxOptions> = {},
): Promise<number> {
  const [kind, orderId, ...rest] = args;
  const usable = kind === 'confirm' ? rest.length >= 2 : kind === 'refund' && rest.length === 1;
  if (!usable || orderId === undefined) {
    print(USAGE);
    return 2;
  }
  const config = readConfig(env);
  const outbox = createSqsOutbox({
    queueUrl: config.queueUrl,
    deadLetterQueueUrl: config.deadLetterQueueUrl,
    ...outboxOptions,
  });
  try {
    if (kind === 'confirm') {
      const [value = '', token = '', clickedAtIso] = rest;
      const clickedAt = clickedAtIso === undefined ? Date.now() : Date.parse(clickedAtIso);
      const { job } = await outbox.confirm({
        orderId,
        valueMicros: toMicros(value),
        click: { token, clickedAt },
      });
      print(
        `queued confirmation of ${job.orderId} (${job.valueMicros} micros), to be sent by ${new Date(job.deadline ?? 0).toISOString()}`,
      );
    } else {
      const result = await outbox.refund({ orderId, campaignId: rest[0] });
      print(`refund of ${orderId}: ${result.outcome}`);
    }
    return 0;
  } finally {
    await outbox.close();
  }
}

if (import.meta.main) {
  enqueue(process.argv.slice(2), process.env).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(error instanceof ConfigError ? error.message : error);
      process.exitCode = 1;
    },
  );
}
