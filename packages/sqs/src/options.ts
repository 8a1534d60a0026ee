/**
 * Options of the SQS outbox: one zod schema is the single source of truth for their types, defaults and
 * validation. Unknown keys are rejected, and every error is an `OptionsError` naming the option.
 * Nothing AWS-specific is invented here: credentials and region come from the SDK's own provider chain,
 * or from the `SQSClient` / `clientConfig` you pass.
 */
import type { SQSClient, SQSClientConfig } from '@aws-sdk/client-sqs';
import { DAY_MS } from '@postback/core';
import { parseOptions, windowPolicySchema } from '@postback/core/store';
import { z } from 'zod';
import type { OrderLedger } from './order-ledger.ts';

/**
 * Long-poll wait of a claim's `ReceiveMessage` (SQS allows 0–20). A claim on an empty queue blocks this
 * long (after a claim that received something, {@link FOLLOW_UP_WAIT_SECONDS} at most); `close()` and
 * `interruptClaims()` cut it short.
 * @defaultValue 20
 */
export const DEFAULT_WAIT_TIME_SECONDS = 20;

/**
 * How long the long poll of a claim waits at most when the claim before it received something (capped
 * by `waitTimeSeconds`). A long poll of a second or more asks every SQS server (a short poll samples only
 * some, and may answer empty while messages wait), so its empty answer still means the queue is empty:
 * a `drain` ends a second after its last job instead of a whole `waitTimeSeconds` later.
 */
export const FOLLOW_UP_WAIT_SECONDS = 1;

/**
 * How long `complete()` waits for more completions to share one `DeleteMessageBatch` (up to 10 entries).
 * Short, because the worker's slot stays taken until the delete is done; under load the batches fill up
 * within it anyway (measured in bench/sqs.ts: 1 ms and 5 ms both gave ~9 deletes per request).
 * @defaultValue 1
 */
export const DEFAULT_DELETE_BATCH_WINDOW_MS = 1;

/**
 * Largest `SendMessageBatch` request payload, in bytes (SQS's limit for a message and for a batch).
 * @defaultValue 262_144 (256 KiB)
 */
export const DEFAULT_MAX_BATCH_BYTES = 262_144;

/**
 * How many times one entry of a `SendMessageBatch` is sent before its failure is reported. Entries SQS
 * blames on the sender (`SenderFault: true`) are not retried. The SDK's own retries of a whole request
 * (throttling, 5xx, network) come on top of this.
 * @defaultValue 3
 */
export const DEFAULT_SEND_ATTEMPTS = 3;

/**
 * Most dead-letter messages one `listDead`/`replay`/`purgeDead` call looks at (SQS has no listing: the
 * outbox receives messages with a short visibility timeout and gives them back).
 * @defaultValue 1_000
 */
export const DEFAULT_DEAD_LETTER_SCAN_LIMIT = 1_000;

/**
 * Visibility timeout of dead-letter messages while `listDead`/`replay`/`purgeDead` holds them; they are
 * given back (visibility 0) when the call ends.
 * @defaultValue 30
 */
export const DEFAULT_PEEK_VISIBILITY_SECONDS = 30;

/**
 * Long-poll wait of each dead-letter receive. Short polling (0) samples only some SQS servers and can miss
 * messages; 1 second queries them all.
 * @defaultValue 1
 */
export const DEFAULT_DEAD_LETTER_WAIT_SECONDS = 1;

/**
 * Margin the queue's `MessageRetentionPeriod` must exceed the confirmation window by, or `checkQueues()`
 * warns (a message still retrying near its deadline must not be dropped by SQS first).
 * @defaultValue 86_400_000 (1 day)
 */
export const DEFAULT_RETENTION_MARGIN_MS = DAY_MS;

/**
 * How long a received message of an excluded account (`claim({ excludeAccounts })`: an account whose key
 * was refused) is hidden before another receive may take it, in seconds, never past its deadline. On a
 * standard queue it is sent again with this delay and its copy deleted (no receive counted). On a FIFO
 * queue the outbox holds up to {@link MAX_PARKED_JOBS} such messages and hands them to a later claim that
 * no longer excludes their account while at least half of this is left; the others come back to the
 * queue when it ends (their receive count grown by one). Short enough that a key restored is used within a minute or two, long
 * enough that a paused account's backlog is not received again by every claim.
 * @defaultValue 60
 */
export const DEFAULT_EXCLUDED_ACCOUNT_DELAY_SECONDS = 60;

/** Most received messages of excluded accounts one outbox holds for later claims (the rest are only hidden). */
export const MAX_PARKED_JOBS = 100;

const nonNegativeMs = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

const queueUrl = z.url({
  protocol: /^https?$/,
  error: 'expected a queue URL (https://sqs.<region>.amazonaws.com/<account>/<name>)',
});

/**
 * Schema of {@link SqsOutboxOptions}: the single source of truth of their types, defaults and validation.
 *
 * @example
 * ```ts
 * const { waitTimeSeconds } = sqsOutboxOptionsSchema.parse({ queueUrl }); // 20
 * ```
 */
export const sqsOutboxOptionsSchema = z
  .strictObject({
    /** URL of the queue holding the jobs. A name ending in `.fifo` makes it a FIFO queue. */
    queueUrl,
    /** URL of the dead-letter queue: where `fail()` moves jobs, and what `listDead`/`replay`/`purgeDead` read. */
    deadLetterQueueUrl: queueUrl.optional(),
    /** An `SQSClient` to use (not destroyed by `close()`). Default: one built from `clientConfig`. */
    client: z
      .custom<SQSClient>(
        (v) => typeof v === 'object' && v !== null && typeof (v as { send?: unknown }).send === 'function',
        {
          message: 'expected an SQSClient',
        },
      )
      .optional(),
    /**
     * Configuration of the `SQSClient` built when `client` is not given (region, endpoint, credentials…).
     * Without an `endpoint`, one set in the environment (`AWS_ENDPOINT_URL_SQS`, else `AWS_ENDPOINT_URL`)
     * is used for every request, whatever host the queue URL names.
     */
    clientConfig: z
      .custom<SQSClientConfig>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), {
        message: 'expected an SQSClientConfig object',
      })
      .optional(),
    /** Whether the queue is FIFO. @defaultValue inferred from the `.fifo` suffix of `queueUrl` */
    fifo: z.boolean().optional(),
    /** @defaultValue {@link DEFAULT_WAIT_TIME_SECONDS} */
    waitTimeSeconds: z.number().int().min(0).max(20).default(DEFAULT_WAIT_TIME_SECONDS),
    /** @defaultValue {@link DEFAULT_DELETE_BATCH_WINDOW_MS} */
    deleteBatchWindowMs: z.number().int().min(0).max(1_000).default(DEFAULT_DELETE_BATCH_WINDOW_MS),
    /** @defaultValue {@link DEFAULT_MAX_BATCH_BYTES} */
    maxBatchBytes: z.number().int().min(1_024).max(1_048_576).default(DEFAULT_MAX_BATCH_BYTES),
    /** @defaultValue {@link DEFAULT_SEND_ATTEMPTS} */
    sendAttempts: z.number().int().min(1).max(10).default(DEFAULT_SEND_ATTEMPTS),
    /** @defaultValue {@link DEFAULT_DEAD_LETTER_SCAN_LIMIT} */
    deadLetterScanLimit: z.number().int().min(1).max(100_000).default(DEFAULT_DEAD_LETTER_SCAN_LIMIT),
    /** @defaultValue {@link DEFAULT_PEEK_VISIBILITY_SECONDS} */
    peekVisibilitySeconds: z.number().int().min(1).max(43_200).default(DEFAULT_PEEK_VISIBILITY_SECONDS),
    /** @defaultValue {@link DEFAULT_DEAD_LETTER_WAIT_SECONDS} */
    deadLetterWaitSeconds: z.number().int().min(0).max(20).default(DEFAULT_DEAD_LETTER_WAIT_SECONDS),
    /** @defaultValue {@link DEFAULT_EXCLUDED_ACCOUNT_DELAY_SECONDS}; at most 900 (15 minutes) */
    excludedAccountDelaySeconds: z
      .number()
      .int()
      .min(1)
      .max(900)
      .default(DEFAULT_EXCLUDED_ACCOUNT_DELAY_SECONDS),
    /**
     * On a standard queue, send each job with `MessageGroupId` set to its account (one fixed group for jobs
     * without one), which makes the queue an SQS fair queue across accounts. Turn off only for an SQS-like
     * service that refuses `MessageGroupId` on standard queues. FIFO queues always group by order.
     * @defaultValue true
     */
    fairQueueGroups: z.boolean().default(true),
    /** @defaultValue {@link DEFAULT_RETENTION_MARGIN_MS} */
    retentionMarginMs: nonNegativeMs.default(DEFAULT_RETENTION_MARGIN_MS),
    /** Windows used to stamp deadlines; defaults from `@postback/core`. */
    policy: windowPolicySchema,
    /**
     * The order ledger (see `order-ledger.ts`): duplicate detection, refunds without `campaignId`, `getByOrder`. Without it, `refund()`
     * requires `campaignId`.
     */
    ledger: z
      .custom<OrderLedger>(
        (v) =>
          typeof v === 'object' &&
          v !== null &&
          typeof (v as OrderLedger).get === 'function' &&
          typeof (v as OrderLedger).put === 'function',
        { message: 'expected an OrderLedger { get(key), put(job, key) }' },
      )
      .optional(),
    /** Clock for `createdAt` of enqueued jobs. @defaultValue `Date.now` */
    now: z
      .custom<() => number>((v) => typeof v === 'function', {
        message: 'expected a function returning epoch milliseconds',
      })
      .optional(),
    /** Where non-fatal problems go (malformed messages, queue misconfiguration). @defaultValue `console.warn` */
    onWarning: z
      .custom<(message: string) => void>((v) => typeof v === 'function', { message: 'expected a function' })
      .optional(),
  })
  .refine((o) => o.client === undefined || o.clientConfig === undefined, {
    message: 'give client or clientConfig, not both',
    path: ['clientConfig'],
  });

/** Options of `createSqsOutbox` (input form: defaults may be omitted). */
export type SqsOutboxOptions = z.input<typeof sqsOutboxOptionsSchema>;
/** Options after defaults are applied. */
export type ResolvedSqsOutboxOptions = z.output<typeof sqsOutboxOptionsSchema>;

/**
 * Parses the options with core's `parseOptions`: the first problem is an `OptionsError` naming the option.
 *
 * @example
 * ```ts
 * const options = parseSqsOutboxOptions({ queueUrl: 'https://sqs.us-east-1.amazonaws.com/123/jobs.fifo' });
 * ```
 */
export function parseSqsOutboxOptions(input: unknown): ResolvedSqsOutboxOptions {
  return parseOptions(sqsOutboxOptionsSchema, input);
}
