/**
 * @postback/sqs — an Outbox on Amazon SQS for fleets of workers: batch send, long-poll receive,
 * visibility heart-beats, deadline-capped backoff, FIFO ordering per order, a dead-letter queue with reasons.
 */
export { createSqsOutbox, SQS_OUTBOX_LIMITS, type ConfirmManyResult, type SqsOutbox } from './sqs-outbox.ts';
export {
  DEFAULT_DEAD_LETTER_SCAN_LIMIT,
  DEFAULT_DEAD_LETTER_WAIT_SECONDS,
  DEFAULT_DELETE_BATCH_WINDOW_MS,
  DEFAULT_MAX_BATCH_BYTES,
  DEFAULT_PEEK_VISIBILITY_SECONDS,
  DEFAULT_RETENTION_MARGIN_MS,
  DEFAULT_SEND_ATTEMPTS,
  DEFAULT_WAIT_TIME_SECONDS,
  parseSqsOutboxOptions,
  sqsOutboxOptionsSchema,
  type ResolvedSqsOutboxOptions,
  type SqsOutboxOptions,
} from './options.ts';
export { createMemoryOrderLedger, type OrderLedger, type OrderRecord } from './order-ledger.ts';
export { MalformedMessageError, SqsOutboxError, SqsUnsupportedError, type SqsOutboxErrorCode } from './errors.ts';
export {
  DEADLINE_ATTRIBUTE,
  decodeJobBody,
  deduplicationIdOf,
  encodeJobBody,
  JOB_BODY_VERSION,
  KIND_ATTRIBUTE,
  messageGroupIdOf,
  type JobBody,
} from './message-codec.ts';
export { ATTEMPTS_ATTRIBUTE, FAILED_AT_ATTRIBUTE, REASON_ATTRIBUTE, STATE_ATTRIBUTE, type DeadLetterState } from './dead-letter.ts';
export { SQS_MAX_VISIBILITY_SECONDS, leaseVisibilitySeconds, retryVisibilitySeconds } from './visibility.ts';
export { checkQueueAttributes } from './queue-checks.ts';
