/**
 * @postback/sqs — an Outbox on Amazon SQS for fleets of workers: batch send, long-poll receive,
 * visibility heart-beats, deadline-capped backoff, FIFO ordering per order, a dead-letter queue with reasons.
 */

export type { ConfirmManyResult } from './confirmations.ts';
export {
  ATTEMPTS_ATTRIBUTE,
  type DeadLetterState,
  FAILED_AT_ATTRIBUTE,
  REASON_ATTRIBUTE,
  STATE_ATTRIBUTE,
} from './dead-letter.ts';
export {
  MalformedMessageError,
  SqsOutboxError,
  type SqsOutboxErrorCode,
  SqsUnsupportedError,
} from './errors.ts';
export {
  DEADLINE_ATTRIBUTE,
  decodeJobBody,
  deduplicationIdOf,
  encodeJobBody,
  fairGroupIdOf,
  JOB_BODY_VERSION,
  type JobBody,
  KIND_ATTRIBUTE,
  messageGroupIdOf,
  NO_ACCOUNT_GROUP_ID,
} from './message-codec.ts';
export {
  DEFAULT_DEAD_LETTER_SCAN_LIMIT,
  DEFAULT_DEAD_LETTER_WAIT_SECONDS,
  DEFAULT_DELETE_BATCH_WINDOW_MS,
  DEFAULT_EXCLUDED_ACCOUNT_DELAY_SECONDS,
  DEFAULT_MAX_BATCH_BYTES,
  DEFAULT_PEEK_VISIBILITY_SECONDS,
  DEFAULT_RETENTION_MARGIN_MS,
  DEFAULT_SEND_ATTEMPTS,
  DEFAULT_WAIT_TIME_SECONDS,
  FOLLOW_UP_WAIT_SECONDS,
  MAX_PARKED_JOBS,
  parseSqsOutboxOptions,
  type ResolvedSqsOutboxOptions,
  type SqsOutboxOptions,
  sqsOutboxOptionsSchema,
} from './options.ts';
export {
  createMemoryOrderLedger,
  type OrderLedger,
  type OrderRecord,
  orderLedgerKey,
} from './order-ledger.ts';
export { ACCOUNT_ATTRIBUTE } from './outbox-context.ts';
export { checkQueueAttributes } from './queue-checks.ts';
export { createSqsOutbox, SQS_OUTBOX_LIMITS, type SqsOutbox } from './sqs-outbox.ts';
export { leaseVisibilitySeconds, retryVisibilitySeconds, SQS_MAX_VISIBILITY_SECONDS } from './visibility.ts';
